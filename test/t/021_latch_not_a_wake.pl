# A waiting getter's latch is set for more than wakes: PostgreSQL's timer
# signal sets it (the statistics flush it arms when a backend goes idle
# runs on into the next statement), and so does every interrupt another
# backend sends.  A getter that was not picked by a wake, and is not the
# one that looks for delays, sleeps on after such a set instead of looking
# at its queue.  Counted here as the index scans a getter's own transaction
# made on the messages table (pg_stat_xact_user_tables), over a wait of
# 2 s: once left alone, once sent 20 interrupts that only set its latch
# (pg_log_backend_memory_contexts).  That a put's wake still reaches such a
# getter is 020_wake_one.pl's test.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

# (the memory contexts the interrupts ask for are logged at LOG)
my $node = getters_node('latch_not_a_wake', "autovacuum = off\nlog_min_messages = warning\n");
$node->safe_psql('postgres', q{
	SELECT queue_create('latch', max_dequeue_count => NULL);
	CREATE TABLE scans (signals int, scans bigint);
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

# g1 waits 2 s; g2 begins waiting after it, so g2 is the one that looks
# every 100 ms and g1 sleeps until it is woken.  g1's result: the messages
# it took (none), and the index scans its transaction made on the messages
# table.
$node->safe_psql('postgres', qq{
DO \$\$
DECLARE
	pid int;
	pid2 int;
	signals int;
	get_sql text := 'SELECT (SELECT count(*) FROM queue_get(''latch'', 1, NULL, %L)),
		(SELECT idx_scan FROM pg_stat_xact_user_tables
		 WHERE relid = ''queue_storage.messages''::regclass)';
BEGIN
	PERFORM dblink_connect('g1', '$connstr');
	PERFORM dblink_connect('g2', '$connstr');
	SELECT p INTO pid FROM dblink('g1', 'SELECT pg_backend_pid()') AS t(p int);
	SELECT p INTO pid2 FROM dblink('g2', 'SELECT pg_backend_pid()') AS t(p int);
	FOREACH signals IN ARRAY ARRAY[0, 20] LOOP
		PERFORM dblink_send_query('g1', format(get_sql, '2 s'));
		PERFORM pg_sleep(0.3);
		PERFORM dblink_send_query('g2', format(get_sql, '3 s'));
		-- g2 asleep in its wait, and g1's last look as the looker done
		FOR tries IN 1..1000 LOOP
			PERFORM pg_stat_clear_snapshot();
			EXIT WHEN EXISTS (SELECT FROM pg_stat_activity a
				WHERE a.pid = pid2 AND a.wait_event IN ('QueueGetWait', 'Extension'));
			PERFORM pg_sleep(0.01);
		END LOOP;
		PERFORM pg_sleep(0.2);
		FOR i IN 1..signals LOOP
			PERFORM pg_log_backend_memory_contexts(pid);
			PERFORM pg_sleep(0.05);
		END LOOP;
		INSERT INTO scans SELECT signals, s
			FROM dblink_get_result('g1') AS r(t bigint, s bigint);
		PERFORM * FROM dblink_get_result('g1') AS r(t bigint, s bigint);
		-- a result, then the end of the results
		PERFORM * FROM dblink_get_result('g2') AS r(t bigint, s bigint);
		PERFORM * FROM dblink_get_result('g2') AS r(t bigint, s bigint);
	END LOOP;
	PERFORM dblink_disconnect('g1');
	PERFORM dblink_disconnect('g2');
END
\$\$;
});

my ($alone, $signalled) = split /\|/, $node->safe_psql('postgres',
	q{SELECT (SELECT scans FROM scans WHERE signals = 0) || '|' ||
		(SELECT scans FROM scans WHERE signals = 20)});
note("measured: index scans of the getter's 2 s wait: $alone left alone, $signalled with 20 interrupts");
cmp_ok($alone, '>', 0, 'the getter looked at its queue');
# a look is three to four scans; one look more or less is timing
cmp_ok($signalled, '<=', $alone + 8,
	'20 interrupts that set its latch do not make the getter look again');

$node->stop;
done_testing();
