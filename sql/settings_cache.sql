-- The per-backend cache of queue settings holds one entry per queue, however
-- many calls a session makes (it once added an entry per call: the memory
-- and the lookups grew with every call).

SELECT queue_create('cache-q', max_dequeue_count => NULL);
DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM queue_put('cache-q', 'x'); END LOOP; END $$;
DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM queue_get('cache-q'); END LOOP; END $$;
SELECT count(*) AS caches, sum(total_bytes) < 65536 AS small
FROM pg_backend_memory_contexts WHERE name = 'queue settings cache';
SELECT queue_drop('cache-q');

-- The messages table, its indexes and sequence are found once per backend:
-- after the extension is dropped and created again, the same session works
-- on the new ones.
SELECT queue_create('recreated-q');
SELECT count(*) FROM queue_put('recreated-q', 'before');
DROP EXTENSION queue;
CREATE EXTENSION queue;
SELECT queue_create('recreated-q', max_dequeue_count => NULL);
SELECT message_id AS id, pop_receipt AS receipt FROM queue_put('recreated-q', 'after') \gset
SELECT message_id = :id AS same_id, body FROM queue_get('recreated-q');
SELECT queue_delete('recreated-q', :id, pop_receipt) FROM queue_storage.messages WHERE message_id = :id;
SELECT total FROM queue_stats('recreated-q');
SELECT queue_drop('recreated-q');
