-- queue_drop: removes the queue, its messages and counters; the poison
-- queue stays.

SELECT queue_create('drop-me');
SELECT count(*) FROM queue_put_batch('drop-me', ARRAY['a', 'b', 'c']);
SELECT count(*) FROM queue_get('drop-me');
SELECT message_id AS poisoned_id FROM queue_put('drop-me-poison', 'dead') \gset

SELECT queue_drop('drop-me');
SELECT queue, poison_queue FROM queue_list() WHERE queue LIKE 'drop-me%';
SELECT count(*) AS messages_left FROM queue_peek('drop-me-poison', 10);
SELECT count(*) AS rows_in_storage FROM queue_storage.messages;
SELECT count(*) AS counter_rows FROM queue_storage.counters c
WHERE NOT EXISTS (SELECT FROM queue_storage.queues q WHERE q.queue_id = c.queue_id);
SELECT check_error($$SELECT queue_put('drop-me', 'x')$$);
SELECT check_error($$SELECT * FROM queue_get('drop-me')$$);
SELECT check_error($$SELECT queue_drop('drop-me')$$);

-- a re-created queue starts empty, with fresh counters
SELECT queue_create('drop-me');
SELECT total, puts, gets FROM queue_stats('drop-me');

-- a poison queue cannot be dropped while its parent uses it: 2BP01
\set VERBOSITY default
SELECT queue_drop('drop-me-poison');
SELECT check_error($$SELECT queue_drop('drop-me-poison')$$);
SELECT queue_drop('drop-me');
SELECT queue_drop('drop-me-poison');
SELECT count(*) FROM queue_list() WHERE queue LIKE 'drop-me%';

-- so can any queue another names as its poison queue
SELECT queue_create('drop-dlq', max_dequeue_count => NULL);
SELECT queue_create('drop-source', max_dequeue_count => NULL);
SELECT queue_alter('drop-source', max_dequeue_count => 3, poison_queue => 'drop-dlq');
SELECT check_error($$SELECT queue_drop('drop-dlq')$$);
SELECT queue_drop('drop-source');
SELECT queue_drop('drop-dlq');

-- errors
SELECT check_error($$SELECT queue_drop(NULL)$$);
SELECT check_error($$SELECT queue_drop('Bad Name')$$);
SELECT check_error($$SELECT queue_drop('no-such-queue')$$);

-- transactional: a rolled-back drop leaves queue and messages
SELECT queue_create('drop-rollback', max_dequeue_count => NULL);
SELECT count(*) FROM queue_put_batch('drop-rollback', ARRAY['a', 'b']);
BEGIN;
SELECT queue_drop('drop-rollback');
SELECT check_error($$SELECT queue_put('drop-rollback', 'x')$$);
ROLLBACK;
SELECT count(*) FROM queue_peek('drop-rollback', 10);
SELECT queue_drop('drop-rollback');
