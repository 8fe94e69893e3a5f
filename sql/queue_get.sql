-- queue_get: claiming, leases, delays, expiry, poison routing, wait,
-- errors, transactions.

SELECT queue_create('get-q', message_ttl => '1 hour', max_dequeue_count => 2);
SELECT count(*) FROM queue_put_batch('get-q', ARRAY['a', 'b', 'c']);

-- oldest visible first; each gets dequeue_count 1, a receipt and a lease of
-- the queue's visibility_timeout (30 s), counted from the clock
SELECT body, dequeue_count, pop_receipt IS NOT NULL AS has_receipt,
       visible_at BETWEEN clock_timestamp() + interval '29 s'
                      AND clock_timestamp() + interval '30 s' AS leased_30s
FROM queue_get('get-q', 2);
-- those two are in flight: the next get takes the third, then nothing
SELECT body FROM queue_get('get-q', 10);
SELECT count(*) FROM queue_get('get-q', 10);

-- a visibility_timeout of the get's own
SELECT count(*) FROM queue_put('get-q', 'own lease');
SELECT body, visible_at BETWEEN clock_timestamp() + interval '59 s'
                            AND clock_timestamp() + interval '60 s' AS leased_60s
FROM queue_get('get-q', visibility_timeout => '1 minute');

-- times come from the clock, not the transaction start
BEGIN;
SELECT count(*) FROM queue_put('get-q', 'clock');
SELECT pg_sleep(0.05);
SELECT visible_at > now() + interval '30 s 40 ms' AS from_clock FROM queue_get('get-q');
COMMIT;

-- a delayed message is handed out only once visible
SELECT count(*) FROM queue_put('get-q', 'delayed', '500 milliseconds');
SELECT count(*) AS before_visible FROM queue_get('get-q');
SELECT pg_sleep(0.55);
SELECT body FROM queue_get('get-q');

-- an expired message is never handed out
SELECT count(*) FROM queue_put('get-q', 'expires', ttl => '10 milliseconds');
SELECT pg_sleep(0.02);
SELECT count(*) AS expired_not_returned FROM queue_get('get-q');

-- a lease that runs out makes the message visible again, with a new receipt
SELECT queue_create('lease-q', max_dequeue_count => NULL);
SELECT count(*) FROM queue_put('lease-q', 'again');
SELECT message_id AS first_id, pop_receipt AS first_receipt
FROM queue_get('lease-q', visibility_timeout => '10 milliseconds') \gset
SELECT pg_sleep(0.02);
-- (held for an hour now, so that it stays out of the way of the next get)
SELECT message_id = :first_id AS same_message, dequeue_count,
       pop_receipt <> :'first_receipt' AS new_receipt
FROM queue_get('lease-q', visibility_timeout => '1 hour');

-- a lease never runs past the message's expiry
SELECT count(*) FROM queue_put('lease-q', 'short life', ttl => '1 second');
SELECT pg_sleep(0.02);
SELECT body, visible_at = expires_at AS lease_ends_at_expiry
FROM queue_get('lease-q', visibility_timeout => '1 minute');

-- poison routing: after max_dequeue_count (2) deliveries the message goes to
-- lease-q's poison queue instead of being handed out a third time, keeping
-- its id, body, headers, inserted_at and dequeue_count
SELECT queue_create('poison-q', max_dequeue_count => 2);
SELECT message_id AS poison_id, inserted_at AS poison_inserted
FROM queue_put('poison-q', 'bad', headers => '{"try": "hard"}') \gset
SELECT dequeue_count FROM queue_get('poison-q', visibility_timeout => '10 milliseconds');
SELECT pg_sleep(0.02);
SELECT dequeue_count FROM queue_get('poison-q', visibility_timeout => '10 milliseconds');
SELECT pg_sleep(0.02);
SELECT count(*) FROM queue_put_batch('poison-q', ARRAY['good 1', 'good 2']);
-- the poison message is the oldest visible; the get moves it and still
-- fills its two places with good messages
SELECT body, dequeue_count FROM queue_get('poison-q', 2);
SELECT message_id = :poison_id AS same_id, body, headers, dequeue_count,
       inserted_at = :'poison_inserted' AS same_inserted_at, expires_at
FROM queue_peek('poison-q-poison');
SELECT source_queue FROM queue_storage.messages WHERE message_id = :poison_id;
SELECT poisoned FROM queue_stats('poison-q');

-- wait: returns empty when nothing comes in time ...
SELECT queue_create('wait-q');
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) FROM queue_get('wait-q', wait => '200 milliseconds');
SELECT clock_timestamp() - :'t0' >= interval '200 ms' AS waited;
-- ... and as soon as a message becomes visible
SELECT count(*) FROM queue_put('wait-q', 'soon', '100 milliseconds');
SELECT clock_timestamp() AS t0 \gset
SELECT body FROM queue_get('wait-q', wait => '10 seconds');
SELECT clock_timestamp() - :'t0' < interval '2 s' AS returned_early;
-- a waiting get is cancelled by statement_timeout
SET statement_timeout = '100ms';
SELECT * FROM queue_get('wait-q', wait => '20 seconds');
RESET statement_timeout;
-- a waiting get whose look only moved a message to the poison queue returns
-- at once, empty, so that the move commits instead of waiting unseen (in a
-- transaction, so that the worker's sweep cannot move it first)
SELECT queue_create('wait-poison-q', max_dequeue_count => 1);
SELECT count(*) FROM queue_put('wait-poison-q', 'doomed');
BEGIN;
SELECT count(*) FROM queue_get('wait-poison-q', visibility_timeout => '1 millisecond');
SELECT pg_sleep(0.01);
SELECT clock_timestamp() AS t0 \gset
SELECT count(*) FROM queue_get('wait-poison-q', wait => '10 seconds');
SELECT clock_timestamp() - :'t0' < interval '2 s' AS returned_early;
COMMIT;
SELECT visible FROM queue_stats('wait-poison-q-poison');

-- the largest get
SELECT count(*) FROM queue_put_batch('lease-q', array_fill('m'::text, ARRAY[1000]));
SELECT count(*) FROM queue_get('lease-q', 1000);

-- NULLs: 22004 (visibility_timeout NULL is the queue's)
SELECT check_error($$SELECT * FROM queue_get(NULL)$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', NULL)$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', wait => NULL)$$);
SELECT count(*) FROM queue_get('get-q', 1, NULL);

-- out of range: 22023
SELECT check_error($$SELECT * FROM queue_get('get-q', 0)$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', 1001)$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', -1)$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', 1, '0')$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', 1, '-1 second')$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', 1, '7 days 1 second')$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', wait => '-1 second')$$);
SELECT check_error($$SELECT * FROM queue_get('get-q', wait => '21 seconds')$$);
SELECT check_error($$SELECT * FROM queue_get('get q')$$);
SELECT check_error($$SELECT * FROM queue_get('no-such-queue')$$);

-- transactional: a rolled-back get leaves the message as it was
SELECT queue_create('tx-q');
SELECT count(*) FROM queue_put('tx-q', 'once');
BEGIN;
SELECT body, dequeue_count FROM queue_get('tx-q');
ROLLBACK;
SELECT body, dequeue_count, pop_receipt FROM queue_peek('tx-q');
SELECT gets FROM queue_stats('tx-q');
SELECT body, dequeue_count FROM queue_get('tx-q');
SELECT gets FROM queue_stats('tx-q');

-- the claim order is visible_at first, then id: a message put later but
-- visible earlier comes first, for get (the claim index walked in C) and
-- peek (a statement) alike
SELECT queue_create('order-q');
SELECT count(*) FROM queue_put('order-q', 'put first, visible later',
                               visibility_timeout => '200 milliseconds');
SELECT count(*) FROM queue_put('order-q', 'put second, visible at once');
SELECT pg_sleep(0.3);
SELECT body FROM queue_peek('order-q', 2);
SELECT body FROM queue_get('order-q', 2);

-- first_dequeued_at: NULL until the first get, then that get's time, kept
-- by later gets and by a release
SELECT queue_create('first-q');
SELECT count(*) FROM queue_put('first-q', 'once');
SELECT first_dequeued_at FROM queue_peek('first-q');
CREATE TEMP TABLE first_get AS SELECT message_id, pop_receipt, first_dequeued_at FROM queue_get('first-q');
SELECT first_dequeued_at IS NOT NULL AND first_dequeued_at <= clock_timestamp() AS set_at_the_get FROM first_get;
SELECT count(*) FROM first_get f, LATERAL queue_update('first-q', f.message_id, f.pop_receipt, '0');
SELECT pg_sleep(0.01);
SELECT g.first_dequeued_at = f.first_dequeued_at AS kept, g.dequeue_count
FROM queue_get('first-q') g, first_get f;

SELECT drop_all_queues();
