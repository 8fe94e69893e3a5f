-- The per-backend cache of queue settings holds one entry per queue, however
-- many calls a session makes (it once added an entry per call: the memory
-- and the lookups grew with every call).

SELECT queue_create('cache-q', max_dequeue_count => NULL);
DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM queue_put('cache-q', 'x'); END LOOP; END $$;
DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM queue_get('cache-q'); END LOOP; END $$;
SELECT count(*) AS caches, sum(total_bytes) < 65536 AS small
FROM pg_backend_memory_contexts WHERE name = 'queue settings cache';
SELECT queue_drop('cache-q');
