-- Long polling with a crowd: bench.getters getters wait on one queue (over
-- dblink), and bench.rounds times one put commits.  Per round: the time
-- from the end of the put's commit to the return of the getter that got
-- the message (its own clock), and how many of the other getters woke,
-- counted as the kernel counts it: voluntary context switches of their
-- backends (/proc/PID/status) over the round.  Left out of that count:
--  - the getter that looks every 100 ms for what no commit announces (the
--    one that began waiting last), the one that began waiting before it,
--    and those that began waiting in the second before the round (each
--    looks once more, up to 100 ms after a newer getter took over, before
--    it sees it no longer has to);
--  - the getters whose 20 s wait ran out or was about to (waiting for 19.5 s
--    or more, or no longer waiting at the round's end);
--  - the getters PostgreSQL itself wakes, 10 s after a statement of theirs
--    ended, to write out their statistics (its idle statistics timer,
--    armed when a backend goes idle and left running if it is running
--    already; strace shows the SIGALRM): those whose connection's first
--    statement or previous statement ended 9.7 to 10.5 s before the round's
--    window.  They are counted apart.
-- A getter that returned waits again at once, and becomes the one that
-- looks.  The session waits 10 ms after the put before it looks for the
-- taker, so that its polling of 1,000 connections does not take the CPU
-- the woken getter needs.  Needs a superuser (pg_read_file of /proc).
-- Prints: rounds with a taker, wake p50 and p99 in ms, other getters woken
-- in all rounds, rounds in which one or more did, getters woken by the
-- statistics timer.
CREATE EXTENSION IF NOT EXISTS dblink;
SELECT queue_create('herd', max_dequeue_count => NULL)
WHERE NOT EXISTS (SELECT FROM queue_list() WHERE queue = 'herd');
SELECT queue_clear('herd');
CREATE TEMP TABLE herd_getter (n int PRIMARY KEY, pid int, switches bigint,
	armed timestamptz, connected timestamptz);
CREATE TEMP TABLE herd_round (round int, ms float8, others_woken int, stats_woken int);
CREATE FUNCTION pg_temp.switches(pid int) RETURNS bigint LANGUAGE sql AS $$
	SELECT substring(pg_read_file('/proc/' || pid || '/status')
		FROM 'voluntary_ctxt_switches:\s+(\d+)')::bigint $$;
-- the getters whose wait ran out (they returned) wait again, 20 s
CREATE FUNCTION pg_temp.wait_again(get_sql text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	g record;
BEGIN
	FOR g IN SELECT n FROM herd_getter WHERE dblink_is_busy('h' || n) = 0 LOOP
		PERFORM * FROM dblink_get_result('h' || g.n) AS t(ts text);
		PERFORM * FROM dblink_get_result('h' || g.n) AS t(ts text);
		UPDATE herd_getter SET armed = clock_timestamp() WHERE n = g.n;
		PERFORM dblink_send_query('h' || g.n, format(get_sql, '20 s'));
	END LOOP;
END $$;
DO $$
DECLARE
	getters int := current_setting('bench.getters')::int;
	-- leased for an hour: a message taken is never handed out again during
	-- the run (with the queue's 30 s, it came back, and a later round had
	-- two takers)
	-- the get, its wait (%L) filled in by format()
	get_sql text := 'SELECT clock_timestamp()::text FROM queue_get(''herd'', 1, ''1 hour'', %L)';
	done timestamptz;
	taker int;
	g record;
	returned text;
	looker int;
	previous_looker int;
	round_start timestamptz;
	pause_end timestamptz;
BEGIN
	FOR i IN 1..getters LOOP
		PERFORM dblink_connect('h' || i, current_setting('bench.getter_dsn'));
		INSERT INTO herd_getter VALUES (i,
			(SELECT pid FROM dblink('h' || i, 'SELECT pg_backend_pid()') AS t(pid int)), 0,
			clock_timestamp(), clock_timestamp());
	END LOOP;
	-- The first waits are spread over 20 s, as the waits of getters that
	-- have been polling for a while are, and are sent once every getter is
	-- connected (connecting a thousand takes longer than 20 s): waits that
	-- began together would run out together, and their getters would look
	-- again all at once, in the middle of the rounds.
	FOR i IN 1..getters LOOP
		PERFORM dblink_send_query('h' || i, format(get_sql, (20.0 * i / getters)::text || ' s'));
		UPDATE herd_getter SET armed = clock_timestamp() WHERE n = i;
	END LOOP;
	-- The rounds begin once the statistics timers the getters armed when
	-- they connected have run out (10 s): otherwise many getters look at
	-- once during a few rounds, on PostgreSQL's account, and take the CPU
	-- the woken getter needs.  Meanwhile a getter whose wait ran out waits
	-- again at once, as it does during the rounds, so the waits stay spread.
	pause_end := clock_timestamp() + interval '11 s';
	WHILE clock_timestamp() < pause_end LOOP
		PERFORM pg_temp.wait_again(get_sql);
		PERFORM pg_sleep(0.02);
	END LOOP;
	FOR r IN 1..current_setting('bench.rounds')::int LOOP
		-- a getter whose wait ran out (20 s) waits again
		PERFORM pg_temp.wait_again(get_sql);
		round_start := clock_timestamp();
		UPDATE herd_getter SET switches = pg_temp.switches(pid);
		SELECT n INTO looker FROM herd_getter ORDER BY armed DESC LIMIT 1;
		SELECT n INTO previous_looker FROM herd_getter ORDER BY armed DESC OFFSET 1 LIMIT 1;
		COMMIT;
		PERFORM queue_put('herd', 'x');
		COMMIT;
		done := clock_timestamp();
		-- the getter that returned with the message (one whose wait ran out
		-- returns with none: it woke for that, not for the put)
		taker := NULL;
		PERFORM pg_sleep(0.01);
		WHILE taker IS NULL AND clock_timestamp() < done + interval '5 s' LOOP
			FOR g IN SELECT n FROM herd_getter WHERE dblink_is_busy('h' || n) = 0 LOOP
				returned := NULL;
				SELECT ts INTO returned FROM dblink_get_result('h' || g.n) AS t(ts text);
				PERFORM * FROM dblink_get_result('h' || g.n) AS t(ts text);
				IF returned IS NOT NULL THEN
					taker := g.n;
					INSERT INTO herd_round VALUES (r,
						greatest(0, extract(epoch FROM returned::timestamptz - done) * 1000), 0);
				END IF;
				UPDATE herd_getter SET armed = clock_timestamp() WHERE n = g.n;
				PERFORM dblink_send_query('h' || g.n, format(get_sql, '20 s'));
			END LOOP;
		END LOOP;
		PERFORM pg_sleep(0.02);
		UPDATE herd_round SET (others_woken, stats_woken) = (SELECT
				count(*) FILTER (WHERE NOT stats_timer), count(*) FILTER (WHERE stats_timer)
			FROM (SELECT (armed + interval '9.7 s' < clock_timestamp()
						AND armed + interval '10.5 s' > round_start)
					OR (connected + interval '9.7 s' < clock_timestamp()
						AND connected + interval '10.5 s' > round_start) AS stats_timer
				FROM herd_getter
				WHERE armed < round_start - interval '1 s' AND n NOT IN (looker, previous_looker)
					AND armed > clock_timestamp() - interval '19.5 s'
					AND dblink_is_busy('h' || n) = 1 AND pg_temp.switches(pid) > switches) woken)
		WHERE round = r;
		COMMIT;
		PERFORM pg_sleep(0.05);
	END LOOP;
	FOR i IN 1..getters LOOP
		PERFORM dblink_cancel_query('h' || i);
		PERFORM dblink_disconnect('h' || i);
	END LOOP;
END
$$;
SELECT count(DISTINCT round), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2),
       sum(others_woken), count(*) FILTER (WHERE others_woken > 0), sum(stats_woken)
FROM herd_round;
