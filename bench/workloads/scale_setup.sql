-- scale: the queues of bench/scale.sh, in the database named by the psql
-- variable side: "one" holds one queue; "many" 10,000 (many1 to many10000);
-- "deep" three queues for the get's latency: small (10,000 visible
-- messages), deep (:deep visible behind the first) and ahead (:ahead in
-- flight, leased for an hour, before 10,000 visible).  Bodies in deep and
-- ahead are 16 bytes: the claim reads the index, not the bodies, and 16
-- bytes keep ten million rows within a few GiB.  Puts in batches of 1000,
-- synchronous_commit off for the filling only.
SET synchronous_commit = off;
CREATE EXTENSION IF NOT EXISTS queue;
\if :{?many}
SELECT count(queue_create('many' || q, message_ttl => NULL, max_dequeue_count => NULL))
FROM generate_series(1, 10000) q \gset
\elif :{?deep}
SELECT count(queue_create(name, message_ttl => NULL, max_dequeue_count => NULL))
FROM unnest(ARRAY['small', 'deep', 'ahead']) name \gset
SELECT count(*) FROM generate_series(1, 10) b,
	LATERAL queue_put_batch('small', array_fill(repeat('x', 16), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
SELECT count(*) FROM generate_series(1, :deep / 1000) b,
	LATERAL queue_put_batch('deep', array_fill(repeat('x', 16), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
SELECT count(*) FROM generate_series(1, :ahead / 1000) b,
	LATERAL queue_put_batch('ahead', array_fill(repeat('x', 16), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
SELECT count(*) FROM generate_series(1, :ahead / 1000) b,
	LATERAL queue_get('ahead', 1000 + 0 * b, visibility_timeout => '1 hour') \gset
SELECT count(*) FROM generate_series(1, 10) b,
	LATERAL queue_put_batch('ahead', array_fill(repeat('x', 16), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
VACUUM ANALYZE queue_storage.messages;
\else
SELECT queue_create('one', message_ttl => NULL, max_dequeue_count => NULL) \gset
\endif
