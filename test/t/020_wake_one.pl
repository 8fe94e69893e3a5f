# A put wakes one waiting getter per message, not every getter of the
# queue.  Twenty getters wait on one queue (over dblink); a wake is counted
# as the kernel counts it, a voluntary context switch of the getter's
# backend (/proc/PID/status).  One put: one getter returns with the message,
# the one that began waiting last other than the looker (the one that looks
# every 100 ms for what no commit announces: delays, leases that run out),
# and no other getter wakes but the looker.  When the looker stops waiting,
# another takes over its looking: a delayed message is still found soon
# after it becomes visible.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

my $getters = 20;
my $node = getters_node('wake_one', "max_connections = 60\nautovacuum = off\n");
$node->safe_psql('postgres', q{
	SELECT queue_create('herd', max_dequeue_count => NULL);
	-- the voluntary context switches of a backend so far
	CREATE FUNCTION switches(pid int) RETURNS bigint LANGUAGE sql AS $$
		SELECT substring(pg_read_file('/proc/' || pid || '/status')
			FROM 'voluntary_ctxt_switches:\s+(\d+)')::bigint $$;
	CREATE TABLE getter (name text, pid int, before bigint, after bigint, returned bool);
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

# The getters start waiting one after the other; the last one is the
# looker.  One put, then the looker is cancelled and a delayed message is
# put.  (dblink's connections live as long as the session: one block.)
my $last = "g$getters";
$node->safe_psql('postgres', qq{
CREATE TABLE delayed (ms float8);
DO \$\$
DECLARE
	put_at timestamptz;
	waits bool;
	looker_pid int;
	looker_switches bigint;
BEGIN
	FOR i IN 1..$getters LOOP
		PERFORM dblink_connect('g' || i, '$connstr');
		INSERT INTO getter (name, pid) VALUES ('g' || i,
			(SELECT pid FROM dblink('g' || i, 'SELECT pg_backend_pid()') AS t(pid int)));
		PERFORM dblink_send_query('g' || i,
			'SELECT message_id FROM queue_get(''herd'', 1, NULL, ''20 s'')');
		-- asleep in its wait before the next one starts: the order of
		-- their waits is the order of i
		FOR tries IN 1..1000 LOOP
			PERFORM pg_stat_clear_snapshot();
			waits := EXISTS (SELECT FROM pg_stat_activity a JOIN getter USING (pid)
				WHERE getter.name = 'g' || i AND a.wait_event IN ('QueueGetWait', 'Extension'));
			EXIT WHEN waits;
			PERFORM pg_sleep(0.01);
		END LOOP;
		IF NOT waits THEN
			RAISE EXCEPTION 'getter g% is not waiting after 10 s', i;
		END IF;
	END LOOP;
	-- the one that looked every 100 ms until the next began has stopped
	PERFORM pg_sleep(0.5);
	UPDATE getter SET before = switches(pid);
	COMMIT;
	-- The looker's own look every 100 ms, were it to come between the
	-- put's commit and the look of the getter the put wakes, would take
	-- the message first.  The put comes 20 ms after one of its looks (its
	-- backend went back to sleep), 80 ms before the next.
	looker_pid := (SELECT pid FROM getter WHERE name = '$last');
	looker_switches := switches(looker_pid);
	FOR tries IN 1..100 LOOP
		EXIT WHEN switches(looker_pid) > looker_switches;
		PERFORM pg_sleep(0.002);
	END LOOP;
	PERFORM pg_sleep(0.02);
	PERFORM queue_put('herd', 'one');
	COMMIT;
	PERFORM pg_sleep(0.3);
	UPDATE getter SET after = switches(pid), returned = dblink_is_busy(name) = 0;
	COMMIT;

	-- the looker stops waiting; a message's delay runs out without a put
	PERFORM dblink_cancel_query('$last');
	PERFORM pg_sleep(0.2);
	put_at := clock_timestamp();
	PERFORM queue_put('herd', 'later', visibility_timeout => '300 ms');
	COMMIT;
	LOOP
		EXIT WHEN (SELECT bool_or(dblink_is_busy(name) = 0) FROM getter
			WHERE NOT returned AND name <> '$last');
		EXIT WHEN clock_timestamp() > put_at + interval '10 s';
		PERFORM pg_sleep(0.01);
	END LOOP;
	INSERT INTO delayed VALUES (extract(epoch FROM clock_timestamp() - put_at) * 1000);
	COMMIT;

	FOR i IN 1..$getters LOOP
		PERFORM dblink_cancel_query('g' || i);
		PERFORM dblink_disconnect('g' || i);
	END LOOP;
END
\$\$;
});

is($node->safe_psql('postgres', q{SELECT count(*) FROM getter WHERE returned}),
	'1', "one put into a queue $getters getters wait on: one getter returns");
my $second_last = 'g' . ($getters - 1);
is($node->safe_psql('postgres', q{SELECT string_agg(name, ',') FROM getter WHERE returned}),
	$second_last, 'the one that began waiting last, other than the one that looks');
my $woken = $node->safe_psql('postgres', qq{
	SELECT coalesce(string_agg(name, ','), '') FROM getter
	WHERE NOT returned AND name <> '$last' AND after > before});
is($woken, '', 'no other getter woke (context switches of their backends in the 0.3 s after the put)');
note("measured: backends that woke after the put: "
	. $node->safe_psql('postgres',
		q{SELECT count(*) FILTER (WHERE after > before) || ' of ' || count(*) FROM getter})
	. " (the one that returned, and the one that looks every 100 ms)");

my $delayed_found = $node->safe_psql('postgres', q{SELECT round(ms) FROM delayed});
cmp_ok($delayed_found, '<', 2000,
	'after the looker left, a message delayed by 300 ms is found by another getter');
note("measured: the delayed message was returned $delayed_found ms after its put");
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_inspect('herd')}), '2',
	'both messages are in flight (nothing lost)');

$node->stop;
done_testing();
