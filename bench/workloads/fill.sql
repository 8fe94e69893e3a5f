-- Fills both sides with :visible visible, :delayed delayed and :inflight
-- in-flight messages of 1 KiB (psql variables set by bench/floor.sh), in
-- batches of 1000, invisible ones first (they are older: ahead of the
-- visible ones in insertion order).  The floor gets rows of the same shape.
SELECT queue_clear('bench') \gset
TRUNCATE floor_q;
SELECT count(*) FROM generate_series(1, :delayed / 1000) b,
	LATERAL queue_put_batch('bench', array_fill(repeat('x', 1024), ARRAY[1000]), visibility_timeout => '1 hour' + b * interval '0') \gset
SELECT count(*) FROM generate_series(1, :inflight / 1000) b,
	LATERAL queue_put_batch('bench', array_fill(repeat('x', 1024), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
SELECT count(*) FROM generate_series(1, :inflight / 1000) b,
	LATERAL queue_get('bench', 1000 + 0 * b, visibility_timeout => '1 hour') \gset
SELECT count(*) FROM generate_series(1, :visible / 1000) b,
	LATERAL queue_put_batch('bench', array_fill(repeat('x', 1024), ARRAY[1000]), visibility_timeout => b * interval '0') \gset
INSERT INTO floor_q (queue_id, visible_at, body)
	SELECT 1, clock_timestamp() + interval '1 hour', repeat('x', 1024) FROM generate_series(1, :delayed);
INSERT INTO floor_q (queue_id, visible_at, receipt, dequeue_count, body)
	SELECT 1, clock_timestamp() + interval '1 hour', gen_random_uuid(), 1, repeat('x', 1024) FROM generate_series(1, :inflight);
INSERT INTO floor_q (queue_id, visible_at, body)
	SELECT 1, clock_timestamp(), repeat('x', 1024) FROM generate_series(1, :visible);
VACUUM ANALYZE queue_storage.messages;
VACUUM ANALYZE floor_q;
