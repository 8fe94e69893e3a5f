-- The queue extension from a producer's and a consumer's side.
-- Run by demo/run.sh against a throwaway server.
\pset footer off

\echo '== CREATE EXTENSION; a queue whose messages go to orders-poison after 2 deliveries'
CREATE EXTENSION queue;
SELECT queue_create('orders', visibility_timeout => '30 seconds',
                    message_ttl => '1 day', max_dequeue_count => 2);
SELECT queue, visibility_timeout, message_ttl, max_dequeue_count, poison_queue
FROM queue_list();

\echo
\echo '== Producer: put, put with headers, put_batch'
SELECT message_id, left(pop_receipt::text, 8) || '…' AS pop_receipt, expires_at - inserted_at AS ttl
FROM queue_put('orders', 'order #1');
SELECT message_id FROM queue_put('orders', 'order #2', headers => '{"priority": "high"}');
SELECT message_id FROM queue_put_batch('orders', ARRAY['order #3', 'order #4']);

\echo
\echo '== Consumer: get 2 messages, oldest first; each is leased for 30 s with a fresh receipt'
SELECT message_id, body, headers, dequeue_count, left(pop_receipt::text, 8) || '…' AS pop_receipt
FROM queue_get('orders', 2);
SELECT message_id AS first_id, pop_receipt AS first_receipt
FROM queue_storage.messages WHERE body = 'order #1' \gset
SELECT message_id AS second_id, pop_receipt AS second_receipt
FROM queue_storage.messages WHERE body = 'order #2' \gset
SELECT queue, visible, in_flight, delayed, total FROM queue_stats('orders');

\echo
\echo '== Consumer: a heartbeat extends the lease of order #1 to 2 minutes, with a new receipt'
SELECT message_id, left(pop_receipt::text, 8) || '…' AS new_receipt,
       round(extract(epoch FROM visible_at - clock_timestamp())) AS seconds_left
FROM queue_update('orders', :first_id, :'first_receipt', '2 minutes');
SELECT pop_receipt AS newest_receipt FROM queue_storage.messages WHERE message_id = :first_id \gset

\echo
\echo '== The receipt from before the heartbeat is stale: refused with QU409'
\set ON_ERROR_STOP 0
SELECT queue_delete('orders', :first_id, :'first_receipt');
\echo SQLSTATE :LAST_ERROR_SQLSTATE
\set ON_ERROR_STOP 1

\echo
\echo '== Consumer: done with order #1: deleted with the newest receipt'
SELECT queue_delete('orders', :first_id, :'newest_receipt');

\echo
\echo '== Consumer: order #2 failed: released (visibility 0), visible again, dequeue_count kept'
SELECT message_id, visible_at <= clock_timestamp() AS visible_now
FROM queue_update('orders', :second_id, :'second_receipt', '0');
SELECT message_id, body, dequeue_count FROM queue_peek('orders', 10);

\echo
\echo '== A delayed message: put with 2 seconds of initial invisibility'
SELECT queue_create('reminders');
SELECT message_id, visible_at - inserted_at AS invisible_for
FROM queue_put('reminders', 'call back', visibility_timeout => '2 seconds');
SELECT count(*) AS handed_out_now FROM queue_get('reminders');
SELECT pg_sleep(2);
\echo '-- 2 seconds later'
SELECT body, dequeue_count FROM queue_get('reminders');

\echo
\echo '== Poison: the consumer gets the next batch with 1 s leases; #3 and #4 succeed, #2 fails again'
CREATE TEMP TABLE batch AS SELECT * FROM queue_get('orders', 10, visibility_timeout => '1 second');
SELECT message_id, body, dequeue_count FROM batch;
SELECT count(*) AS deleted
FROM batch, LATERAL queue_delete('orders', batch.message_id, batch.pop_receipt)
WHERE body <> 'order #2';
\echo '-- nobody deletes order #2; its lease runs out'
SELECT pg_sleep(1.1);
\echo '-- the third get finds order #2 handed out twice already: it goes to orders-poison'
SELECT body, dequeue_count FROM queue_get('orders', 10, visibility_timeout => '1 second');
SELECT message_id, body, headers, dequeue_count, expires_at AS never_expires
FROM queue_peek('orders-poison');

\echo
\echo '== Expiry: a message with a 1 second ttl is never handed out after it'
SELECT queue_create('news');
SELECT message_id, expires_at - inserted_at AS ttl FROM queue_put('news', 'flash', ttl => '1 second');
SELECT pg_sleep(1.1);
SELECT count(*) AS handed_out FROM queue_get('news');
\echo '-- the sweep (what the background worker runs) deletes it'
SELECT * FROM queue_maintain();

\echo
\echo '== Where everything is now'
SELECT queue, visible, in_flight, delayed, total, puts, gets, deletes, poisoned, expired
FROM queue_stats();
