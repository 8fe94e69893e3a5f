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

-- The counts in the table, written in each transaction (durable mode);
-- the same cases with shared memory come after.
SET queue.durable_counters = on;

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
SELECT puts, gets FROM queue_stats('stats-other');	-- written or not, all of them
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

-- Shared memory (the default when preloaded): a transaction's counts
-- there at commit, all of them visible to it before; the sweep writes the
-- totals to the row of shard -1.
RESET queue.durable_counters;
SELECT puts, gets, total FROM queue_stats('stats-other');
BEGIN;
SELECT count(*) FROM queue_put('stats-other', 'kept');
SAVEPOINT s1;
SELECT count(*) FROM queue_put('stats-other', 'dropped');
ROLLBACK TO SAVEPOINT s1;
SELECT count(*) FROM queue_get('stats-other');
SELECT puts, gets FROM queue_stats('stats-other');	-- this transaction's counts too
ROLLBACK;
SELECT puts, gets, total FROM queue_stats('stats-other');	-- none of them
BEGIN;
SELECT count(*) FROM generate_series(1, 300) g, LATERAL queue_put('stats-other', g::text);
SELECT count(*) FROM queue_get('stats-other', 10);
COMMIT;
SELECT puts, gets, total FROM queue_stats('stats-other');
SELECT count(*) FROM queue_storage.counters WHERE shard = -1;	-- not written yet
SELECT * FROM queue_maintain();
SELECT c.puts, c.gets FROM queue_storage.counters c
  JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'stats-other' AND c.shard = -1;
SELECT puts, gets, total FROM queue_stats('stats-other');	-- the same, not twice

-- durable and shared counts add up
SET queue.durable_counters = on;
SELECT count(*) FROM queue_put('stats-other', 'durable');
RESET queue.durable_counters;
SELECT count(*) FROM queue_put('stats-other', 'shared');
SELECT puts, gets, total FROM queue_stats('stats-other');

-- a drop rolled back to a savepoint keeps the counts; a committed one
-- leaves none behind, in shared memory or in the table
BEGIN;
SAVEPOINT s1;
SELECT queue_drop('stats-other');
ROLLBACK TO SAVEPOINT s1;
COMMIT;
SELECT puts, gets, total FROM queue_stats('stats-other');
SELECT queue_create('stats-dropped');
SELECT count(*) FROM queue_put('stats-dropped', 'x');
SELECT * FROM queue_maintain();
SELECT queue_drop('stats-dropped');
SELECT * FROM queue_maintain();
SELECT count(*) FROM queue_storage.counters c
 WHERE NOT EXISTS (SELECT FROM queue_storage.queues q WHERE q.queue_id = c.queue_id);

-- errors
SELECT check_error($$SELECT * FROM queue_stats('no-such-queue')$$);
SELECT check_error($$SELECT * FROM queue_stats('no!')$$);

SELECT drop_all_queues();
