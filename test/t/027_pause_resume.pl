# Waiting getters across a pause and a resume.  Five getters wait (20 s)
# on a paused queue that holds messages; a put while paused wakes one of
# them, which finds the queue paused and waits on.  None returns while the
# queue is paused; when the resume commits, every one of them returns a
# message of its own, well before its wait runs out.  Then the resume's
# wake, timed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

my $getters = 5;
my $node = getters_node('pause_resume');
$node->safe_psql('postgres', q{
	SELECT queue_create('paused', max_dequeue_count => NULL);
	SELECT queue_put_batch('paused', ARRAY['a', 'b', 'c', 'd']);
	SELECT queue_pause('paused');
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

my $result = $node->safe_psql('postgres', qq{
CREATE TABLE returned (getter int, body text, at timestamptz);
DO \$\$
DECLARE
	resumed timestamptz;
	busy int;
BEGIN
	FOR g IN 1..$getters LOOP
		PERFORM dblink_connect('g' || g, '$connstr');
		PERFORM dblink_send_query('g' || g,
			'SELECT body, clock_timestamp() FROM queue_get(''paused'', 1, NULL, ''20 s'')');
	END LOOP;
	PERFORM pg_sleep(0.5);
	PERFORM queue_put('paused', 'e');		-- wakes a getter, which waits on
	COMMIT;
	PERFORM pg_sleep(1);
	SELECT count(*) INTO busy FROM generate_series(1, $getters) g
	WHERE dblink_is_busy('g' || g) = 1;
	RAISE NOTICE 'waiting while paused: %', busy;
	INSERT INTO returned VALUES (0, 'still waiting while paused: ' || busy, clock_timestamp());
	PERFORM queue_resume('paused');
	COMMIT;
	resumed := clock_timestamp();
	INSERT INTO returned VALUES (-1, 'resumed', resumed);
	FOR g IN 1..$getters LOOP
		INSERT INTO returned
		SELECT g, body, ts FROM dblink_get_result('g' || g) AS t(body text, ts timestamptz);
		PERFORM * FROM dblink_get_result('g' || g) AS t(body text, ts timestamptz);
		PERFORM dblink_disconnect('g' || g);
	END LOOP;
END
\$\$;
SELECT body FROM returned WHERE getter = 0;
});
is($result, "still waiting while paused: $getters", 'no getter returns while the queue is paused');

my ($count, $distinct, $latest) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT body),
		round(extract(epoch FROM max(r.at) - (SELECT at FROM returned WHERE getter = -1))::numeric, 3)
	FROM returned r WHERE getter > 0 AND body IS NOT NULL});
is($count, $getters, 'after the resume every getter returns a message');
is($distinct, $getters, 'each a message of its own');
cmp_ok($latest, '<', 5, 'all of them within 5 s of the resume, their wait being 20 s');
diag("measured: the last getter returned $latest s after the resume committed");
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('paused', 10)}), '0',
	'no message is left or handed out twice');

# The resume wakes its waiting getters as it commits: 20 rounds of one
# getter waiting on the paused queue, which holds a message, then the
# resume.  Without the wake the getter would see the resume at its next
# look, up to 100 ms later (the newest getter of a queue looks that
# often), so a median under 20 ms shows the wake works.
$node->safe_psql('postgres', qq{
CREATE TABLE latency (round int, ms float8);
DO \$\$
DECLARE
	resumed timestamptz;
	returned timestamptz;
BEGIN
	PERFORM dblink_connect('getter', '$connstr');
	FOR round IN 1..20 LOOP
		PERFORM queue_pause('paused');
		PERFORM queue_put('paused', 'round ' || round);
		COMMIT;
		PERFORM dblink_send_query('getter',
			'SELECT clock_timestamp() FROM queue_get(''paused'', 1, NULL, ''20 s'')');
		PERFORM pg_sleep(0.05);
		PERFORM queue_resume('paused');
		COMMIT;
		resumed := clock_timestamp();
		SELECT ts INTO returned FROM dblink_get_result('getter') AS t(ts timestamptz);
		PERFORM * FROM dblink_get_result('getter') AS t(ts timestamptz);
		INSERT INTO latency VALUES (round, greatest(0, extract(epoch FROM returned - resumed) * 1000));
		COMMIT;
	END LOOP;
	PERFORM dblink_disconnect('getter');
END
\$\$;
});
my ($rounds, $p50, $max) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(ms), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 2),
		round(max(ms)::numeric, 2) FROM latency});
is($rounds, '20', 'in each of 20 rounds the getter returned a message after the resume');
cmp_ok($p50, '<', 20, 'the median return comes well before the next look (100 ms)');
diag("measured: the resume's commit to the getter's return over 20 rounds: p50 $p50 ms, max $max ms");

$node->stop;
done_testing();
