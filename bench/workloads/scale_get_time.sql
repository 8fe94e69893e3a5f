-- scale, depth: the time of a get from the queue named by bench.queue, as
-- the server sees it (from the call to the return of its row, the client's
-- round trip left out, the same for every queue): 1,050 gets, each followed
-- by the delete of its message, each its own transaction; the first 50 (a
-- new session reads its catalogs, prepares its statements) are left out.
-- Prints "get_us <median> <p90>" in microseconds.
SET synchronous_commit = off;
DO $$
DECLARE
	queue text := current_setting('bench.queue');
	started timestamptz;
	took float8[] := '{}';
	message record;
BEGIN
	FOR i IN 1..1050 LOOP
		started := clock_timestamp();
		SELECT message_id, pop_receipt INTO message FROM queue_get(queue);
		IF i > 50 THEN
			took := took || extract(epoch FROM clock_timestamp() - started)::float8 * 1e6;
		END IF;
		COMMIT;
		IF message.message_id IS NULL THEN
			RAISE EXCEPTION 'queue % ran out of messages', queue;
		END IF;
		PERFORM queue_delete(queue, message.message_id, message.pop_receipt);
		COMMIT;
	END LOOP;
	RAISE NOTICE 'get_us % %',
		(SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY t)::numeric, 1) FROM unnest(took) t),
		(SELECT round(percentile_cont(0.9) WITHIN GROUP (ORDER BY t)::numeric, 1) FROM unnest(took) t);
END
$$;
