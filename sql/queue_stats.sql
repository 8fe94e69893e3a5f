-- queue_stats: messages by state now, and counters since creation.

SELECT queue_create('stats-q', max_dequeue_count => 1);
SELECT queue_create('stats-other', max_dequeue_count => NULL);

SELECT * FROM queue_stats('stats-q');

SELECT count(*) FROM queue_put_batch('stats-q', ARRAY['a', 'b', 'c', 'd']);
SELECT count(*) FROM queue_put('stats-q', 'delayed', '1 hour');
SELECT count(*) FROM queue_put('stats-q', 'expired', ttl => '1 millisecond');
SELECT message_id AS id, pop_receipt AS r FROM queue_get('stats-q') \gset
SELECT queue_delete('stats-q', :id, :'r');
SELECT count(*) FROM queue_get('stats-q');
SELECT count(*) FROM queue_get('stats-q', visibility_timeout => '1 millisecond');
SELECT pg_sleep(0.01);
-- this get meets d and the released c: c goes to the poison queue
SELECT body FROM queue_get('stats-q', 2);

-- visible 0, in flight 2 (b, d), delayed 1; the expired one is not counted
SELECT queue, visible, in_flight, delayed, total, oldest_visible_age,
       puts, gets, deletes, poisoned, expired
FROM queue_stats('stats-q');
SELECT queue, visible, total, oldest_visible_age > interval '0' AS aged, poisoned
FROM queue_stats('stats-q-poison');

-- NULL means every queue
SELECT queue FROM queue_stats();
SELECT queue FROM queue_stats(NULL);

-- a rolled-back put or get is not counted
BEGIN;
SELECT count(*) FROM queue_put('stats-other', 'x');
ROLLBACK;
SELECT puts FROM queue_stats('stats-other');

-- a transaction's first counts are written at once, the rest when it
-- commits: a subtransaction that rolls back takes its counts with it, one
-- that commits keeps them
BEGIN;
SELECT count(*) FROM queue_put('stats-other', 'kept');
SAVEPOINT s1;
SELECT count(*) FROM queue_put('stats-other', 'dropped');
SAVEPOINT s2;
SELECT count(*) FROM queue_put('stats-other', 'dropped too');
ROLLBACK TO SAVEPOINT s1;
SAVEPOINT s3;
SELECT count(*) FROM queue_put('stats-other', 'kept too');
SELECT count(*) FROM queue_get('stats-other');
RELEASE SAVEPOINT s3;
SELECT puts, gets FROM queue_stats('stats-other');	-- only the first put's yet
COMMIT;
SELECT puts, gets, total FROM queue_stats('stats-other');

-- the counts written at once roll back with their subtransaction; the
-- next call's, waiting for the commit, are kept
BEGIN;
SAVEPOINT s1;
SELECT count(*) FROM queue_put('stats-other', 'dropped');
ROLLBACK TO SAVEPOINT s1;
SELECT count(*) FROM queue_get('stats-other');
COMMIT;
SELECT puts, gets, total FROM queue_stats('stats-other');

-- many calls in one transaction: counted once each
BEGIN;
SELECT count(*) FROM generate_series(1, 500) g, LATERAL queue_put('stats-other', g::text);
SELECT count(*) FROM generate_series(1, 200) g, LATERAL queue_get('stats-other', 1 + 0 * g);
COMMIT;
SELECT puts, gets, total FROM queue_stats('stats-other');

-- a queue dropped in the transaction that counted leaves no counts behind
-- (its poison queue stays, as always)
BEGIN;
SELECT queue_create('stats-gone');
SELECT count(*) FROM queue_put('stats-gone', 'x');
SELECT queue_drop('stats-gone');
COMMIT;
SELECT count(*) FROM queue_storage.counters c
 WHERE NOT EXISTS (SELECT FROM queue_storage.queues q WHERE q.queue_id = c.queue_id);

-- errors
SELECT check_error($$SELECT * FROM queue_stats('no-such-queue')$$);
SELECT check_error($$SELECT * FROM queue_stats('No')$$);

SELECT drop_all_queues();
