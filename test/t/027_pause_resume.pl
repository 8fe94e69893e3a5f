# Waiting getters across a pause and a resume.  Five getters wait (30 s)
# on a paused queue that holds messages; a put while paused wakes one of
# them, which finds the queue paused and waits on.  None returns while the
# queue is paused; when the resume commits, every one of them returns a
# message of its own, well before its wait runs out (the resume wakes
# them; without it all but one would sleep until their wait ran out).
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
			'SELECT body, clock_timestamp() FROM queue_get(''paused'', 1, NULL, ''30 s'')');
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
cmp_ok($latest, '<', 5, 'all of them within 5 s of the resume, their wait being 30 s');
diag("measured: the last getter returned $latest s after the resume committed");
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('paused', 10)}), '0',
	'no message is left or handed out twice');

$node->stop;
done_testing();
