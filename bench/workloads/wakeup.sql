-- Long-poll wake-up latency: a getter waits (over dblink), a put commits,
-- the getter's return time minus the end of the commit; bench.rounds rounds
-- (set by bench/floor.sh, with bench.getter_dsn).
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT queue_create('wake', max_dequeue_count => NULL)
WHERE NOT EXISTS (SELECT FROM queue_list() WHERE queue = 'wake');
CREATE TEMP TABLE latency (ms float8);
DO $$
DECLARE
	done timestamptz;
	returned text;
BEGIN
	PERFORM dblink_connect('getter', current_setting('bench.getter_dsn'));
	FOR round IN 1..current_setting('bench.rounds')::int LOOP
		PERFORM dblink_send_query('getter',
			'SELECT clock_timestamp() FROM queue_get(''wake'', 1, NULL, ''5 s'')');
		PERFORM pg_sleep(0.005);
		PERFORM queue_put('wake', 'x');
		COMMIT;
		done := clock_timestamp();
		SELECT ts INTO returned FROM dblink_get_result('getter') AS t(ts text);
		PERFORM * FROM dblink_get_result('getter') AS t(ts text);
		INSERT INTO latency VALUES (greatest(0, extract(epoch FROM returned::timestamptz - done) * 1000));
		COMMIT;
	END LOOP;
	PERFORM dblink_disconnect('getter');
END
$$;
SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2)
FROM latency;
