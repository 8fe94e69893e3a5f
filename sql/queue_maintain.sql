-- queue_maintain: one sweep: deletes expired messages, moves poison
-- messages no get has met.

SELECT queue_create('sweep-q', max_dequeue_count => 1);
SELECT queue_create('sweep-other', max_dequeue_count => NULL);
SELECT * FROM queue_maintain();

SELECT count(*) FROM queue_put_batch('sweep-q', ARRAY['e1', 'e2', 'e3'], ttl => '1 millisecond');
SELECT count(*) FROM queue_put('sweep-other', 'e4', '1 millisecond', '2 milliseconds');
SELECT count(*) FROM queue_put('sweep-q', 'lives');
SELECT count(*) FROM queue_put('sweep-q', 'delayed', '1 hour');
-- e1..e3 are expired before the get, which so takes 'lives'
SELECT pg_sleep(0.01);
SELECT count(*) FROM queue_get('sweep-q', visibility_timeout => '1 millisecond');
SELECT pg_sleep(0.01);

SELECT * FROM queue_maintain();
SELECT queue, total, expired, poisoned FROM queue_stats() ORDER BY queue;
SELECT body, dequeue_count FROM queue_peek('sweep-q-poison');
-- nothing left to do
SELECT * FROM queue_maintain();

-- transactional: a rolled-back sweep changed nothing
SELECT count(*) FROM queue_put('sweep-other', 'e5', ttl => '1 millisecond');
SELECT pg_sleep(0.01);
BEGIN;
SELECT * FROM queue_maintain();
ROLLBACK;
SELECT count(*) AS still_stored FROM queue_storage.messages WHERE body = 'e5';
SELECT * FROM queue_maintain();

-- more than one batch (1000) of expired messages
SELECT count(*) FROM queue_put_batch('sweep-other', array_fill('x'::text, ARRAY[1000]), ttl => '1 millisecond');
SELECT count(*) FROM queue_put_batch('sweep-other', array_fill('y'::text, ARRAY[500]), ttl => '1 millisecond');
SELECT pg_sleep(0.01);
SELECT * FROM queue_maintain();
SELECT total, expired FROM queue_stats('sweep-other');

-- the sweep walks only messages on their last lease: the get marks a
-- message (last_lease) when its dequeue count reaches the limit, not before
SELECT queue_create('lease-q', max_dequeue_count => 3);
SELECT count(*) FROM queue_put('lease-q', 'tries');
SELECT dequeue_count FROM queue_get('lease-q', visibility_timeout => '1 millisecond');
SELECT dequeue_count, last_lease FROM queue_storage.messages WHERE body = 'tries';
SELECT pg_sleep(0.01);
SELECT dequeue_count FROM queue_get('lease-q', visibility_timeout => '1 millisecond');
SELECT dequeue_count, last_lease FROM queue_storage.messages WHERE body = 'tries';
SELECT pg_sleep(0.01);
-- handed out twice of three: not poison
SELECT * FROM queue_maintain();
SELECT dequeue_count FROM queue_get('lease-q', visibility_timeout => '1 millisecond');
SELECT dequeue_count, last_lease FROM queue_storage.messages WHERE body = 'tries';
SELECT pg_sleep(0.01);
SELECT * FROM queue_maintain();
SELECT body, dequeue_count FROM queue_peek('lease-q-poison');
-- a poison message is not on a last lease, nor is it after a redrive
SELECT dequeue_count, last_lease FROM queue_storage.messages WHERE body = 'tries';
SELECT queue_redrive('lease-q-poison');
SELECT dequeue_count, last_lease FROM queue_storage.messages WHERE body = 'tries';

SELECT drop_all_queues();
