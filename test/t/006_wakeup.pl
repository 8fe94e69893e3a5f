# Long polling wakes on commit: a getter waiting in queue_get(wait => ...)
# returns as soon as a put commits in another session.  1000 rounds: a
# getter starts waiting (over dblink), a put commits, the getter's return
# time minus the commit's end is the wake-up latency.  Without the wake the
# getter would only notice at its next look (every 100 ms), so a median
# under 20 ms shows the wake works; the p50 and p99 are printed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

my $rounds = 1000;
my $node = getters_node('wakeup');
$node->safe_psql('postgres', q{
	SELECT queue_create('wake', max_dequeue_count => NULL);
	CREATE TABLE latency (round int, ms float8);
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

$node->safe_psql('postgres', qq{
DO \$\$
DECLARE
	done timestamptz;
	returned text;
BEGIN
	PERFORM dblink_connect('getter', '$connstr');
	FOR round IN 1..$rounds LOOP
		PERFORM dblink_send_query('getter',
			'SELECT clock_timestamp() FROM queue_get(''wake'', 1, NULL, ''5 s'')');
		PERFORM pg_sleep(0.005);			-- the getter is waiting by now
		PERFORM queue_put('wake', 'x');
		COMMIT;
		done := clock_timestamp();
		SELECT ts INTO returned FROM dblink_get_result('getter') AS t(ts text);
		PERFORM * FROM dblink_get_result('getter') AS t(ts text);
		INSERT INTO latency VALUES (round, greatest(0, extract(epoch FROM returned::timestamptz - done) * 1000));
		COMMIT;
	END LOOP;
	PERFORM dblink_disconnect('getter');
END
\$\$;
});

my ($count, $p50, $p99, $max) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
	       round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 2),
	       round(max(ms)::numeric, 2)
	FROM latency});
is($count, $rounds, "$rounds waiting getters got their message");
cmp_ok($p50, '<', 20, 'the median wake-up comes well before the next look (100 ms)');
diag("measured: wake-up latency from the put's commit to the get's return over $rounds wakes: "
	. "p50 $p50 ms, p99 $p99 ms, max $max ms");

# a put that rolls back wakes nobody: the getter waits its time out
$node->safe_psql('postgres', q{SELECT queue_clear('wake')});
my $waited = $node->safe_psql('postgres', qq{
DO \$\$
BEGIN
	PERFORM dblink_connect('getter', '$connstr');
	PERFORM dblink_send_query('getter',
		'SELECT count(*) FROM queue_get(''wake'', 1, NULL, ''300 ms'')');
	PERFORM pg_sleep(0.02);
	BEGIN
		PERFORM queue_put('wake', 'never');
		RAISE EXCEPTION 'roll back';
	EXCEPTION WHEN raise_exception THEN NULL;
	END;
	CREATE TEMP TABLE got AS SELECT n FROM dblink_get_result('getter') AS t(n bigint);
	PERFORM dblink_disconnect('getter');
END
\$\$;
SELECT n FROM got;});
is($waited, '0', 'a rolled-back put wakes nobody and is never handed out');

# What pg_stat_activity shows while a get waits and while the worker sleeps:
# from PostgreSQL 17, which lets an extension name its wait events, our own
# names; before, PostgreSQL's "Extension".
my $named = $node->safe_psql('postgres', 'SHOW server_version_num') >= 170000;
my ($get_wait, $worker_wait) = split /\|/, $node->safe_psql('postgres', qq{
DO \$\$
DECLARE
	get_shown text;
	worker_shown text;
BEGIN
	PERFORM dblink_connect('getter', '$connstr');
	PERFORM dblink_send_query('getter',
		'SELECT count(*) FROM queue_get(''wake'', 1, NULL, ''20 s'')');
	-- each is caught asleep, not between two looks or in a sweep (where
	-- it may wait on I/O or a lock for a moment); for up to 10 s
	FOR i IN 1..1000 LOOP
		-- pg_stat_activity is read once per transaction unless cleared
		PERFORM pg_stat_clear_snapshot();
		SELECT wait_event_type || '/' || wait_event INTO get_shown FROM pg_stat_activity
		WHERE query LIKE '%queue_get(''wake''%' AND pid <> pg_backend_pid()
			AND wait_event_type = 'Extension';
		SELECT wait_event_type || '/' || wait_event INTO worker_shown FROM pg_stat_activity
		WHERE backend_type = 'queue worker' AND datname = 'postgres'
			AND wait_event_type = 'Extension';
		EXIT WHEN get_shown IS NOT NULL AND worker_shown IS NOT NULL;
		PERFORM pg_sleep(0.01);
	END LOOP;
	CREATE TEMP TABLE seen AS SELECT get_shown, worker_shown;
	PERFORM queue_put('wake', 'done');
	COMMIT;
	PERFORM * FROM dblink_get_result('getter') AS t(n bigint);
	PERFORM dblink_disconnect('getter');
END
\$\$;
SELECT get_shown, worker_shown FROM seen;});
is($get_wait, $named ? 'Extension/QueueGetWait' : 'Extension/Extension',
	'a waiting get shows its wait event in pg_stat_activity');
is($worker_wait, $named ? 'Extension/QueueWorkerSleep' : 'Extension/Extension',
	'the sleeping worker shows its wait event in pg_stat_activity');

$node->stop;
done_testing();
