-- queue_put's deduplication_id: one message per id and queue within the
-- queue's deduplication_window; the first put's receipt for a repeat.

SELECT queue_create('dedup-q', deduplication_window => '1 hour');
SELECT message_id AS first_id, pop_receipt AS first_receipt
FROM queue_put('dedup-q', 'once', deduplication_id => 'order-42') \gset

-- the same id again: nothing stored, the first put's receipt (its pop
-- receipt too, as the message was never handed out)
SELECT message_id = :first_id AS same_message, pop_receipt = :'first_receipt' AS same_receipt
FROM queue_put('dedup-q', 'twice', deduplication_id => 'order-42');
SELECT body FROM queue_peek('dedup-q', 10);
SELECT puts FROM queue_stats('dedup-q');

-- another id, or none, is stored
SELECT count(*) FROM queue_put('dedup-q', 'other', deduplication_id => 'order-43');
SELECT count(*) FROM queue_put('dedup-q', 'plain');
SELECT count(*) AS messages FROM queue_peek('dedup-q', 10);

-- handed out, then deleted: a repeat still stores nothing, and gets no
-- pop receipt
SELECT message_id AS got_id, pop_receipt AS got_receipt
FROM queue_get('dedup-q') \gset
SELECT :got_id = :first_id AS got_first;
SELECT message_id = :first_id AS same_message, pop_receipt IS NULL AS no_receipt
FROM queue_put('dedup-q', 'thrice', deduplication_id => 'order-42');
SELECT queue_delete('dedup-q', :got_id, :'got_receipt');
SELECT message_id = :first_id AS same_message, pop_receipt IS NULL AS no_receipt
FROM queue_put('dedup-q', 'after delete', deduplication_id => 'order-42');
SELECT count(*) AS messages FROM queue_peek('dedup-q', 10);

-- a put that rolls back reserves nothing
BEGIN;
SELECT count(*) FROM queue_put('dedup-q', 'rolled back', deduplication_id => 'retry-1');
ROLLBACK;
SELECT message_id AS kept_id FROM queue_put('dedup-q', 'kept', deduplication_id => 'retry-1') \gset
SELECT body FROM queue_peek('dedup-q', 10) WHERE message_id = :kept_id;

-- per queue: the same id in another queue is stored
SELECT queue_create('dedup-other');
SELECT count(*) FROM queue_put('dedup-other', 'elsewhere', deduplication_id => 'order-42');
SELECT count(*) AS messages FROM queue_peek('dedup-other', 10);

-- a batch: a repeat inside the batch and one of an earlier put store nothing
SELECT count(DISTINCT message_id) AS ids, count(*) AS receipts
FROM queue_put_batch('dedup-q', ARRAY['b1', 'b2', 'b3', 'b4'],
                     deduplication_ids => ARRAY['batch-1', 'batch-1', 'order-43', NULL]);
SELECT body FROM queue_peek('dedup-q', 10) ORDER BY message_id;

-- past the window, the id is free again; the sweep forgets it
SELECT queue_alter('dedup-q', deduplication_window => '10 milliseconds');
SELECT count(*) FROM queue_put('dedup-q', 'short', deduplication_id => 'short-1');
SELECT pg_sleep(0.05);
SELECT count(*) FROM queue_put('dedup-q', 'short again', deduplication_id => 'short-1');
SELECT count(*) FILTER (WHERE body LIKE 'short%') AS shorts FROM queue_peek('dedup-q', 20);
SELECT pg_sleep(0.05);
SELECT expired FROM queue_maintain();
SELECT count(*) AS remembered FROM queue_storage.deduplication d
JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'dedup-q';

-- groups and priorities are stored
SELECT message_id AS grouped_id
FROM queue_put('dedup-q', 'grouped', group_id => 'customer-7', priority => 5) \gset
SELECT group_id, priority FROM queue_storage.messages WHERE message_id = :grouped_id;

-- arguments
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', deduplication_id => '')$$);
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', deduplication_id => repeat('d', 129))$$);
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', group_id => '')$$);
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', priority => 101)$$);
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', priority => -101)$$);
SELECT check_error($$SELECT * FROM queue_put('dedup-q', 'x', priority => NULL)$$);
SELECT check_error($$SELECT * FROM queue_put_batch('dedup-q', ARRAY['x', 'y'], deduplication_ids => ARRAY['a'])$$);
SELECT check_error($$SELECT * FROM queue_put_batch('dedup-q', ARRAY['x'], priorities => ARRAY[500])$$);
SELECT check_error($$SELECT queue_create('dedup-bad', deduplication_window => '0')$$);
SELECT check_error($$SELECT queue_create('dedup-bad', deduplication_window => '8 days')$$);
SELECT check_error($$SELECT queue_alter('dedup-q', deduplication_window => '-1 second')$$);

-- a dropped queue forgets its ids
SELECT queue_drop('dedup-other');
SELECT count(*) AS remembered FROM queue_storage.deduplication d
WHERE NOT EXISTS (SELECT 1 FROM queue_storage.queues q WHERE q.queue_id = d.queue_id);

SELECT drop_all_queues();
