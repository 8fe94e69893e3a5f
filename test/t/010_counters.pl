# The counters of queue_stats across restarts and crashes.  In shared
# memory (the default when preloaded): a stop keeps every count (the worker
# writes them to the table as it stops; what it could not is saved to a
# file by the postmaster as it exits, and the next start reads it back,
# once, unless it starts as a standby), the sweep adds them to the table,
# and a crash keeps what the last sweep wrote.  With
# queue.durable_counters on, a crash loses no count.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('counters');
$node->init(allows_streaming => 1);    # it starts as a standby at the end
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('counted', max_dequeue_count => NULL);
});

my $stats = q{SELECT puts || ' ' || gets || ' ' || deletes FROM queue_stats('counted')};
my $row = q{SELECT coalesce(max(puts || ' ' || gets || ' ' || deletes), 'none')
	FROM queue_storage.counters WHERE shard = -1};

# $n puts, then a get and a delete of one message, each its own transaction
sub work
{
	my ($n, @settings) = @_;
	my $set = join '', map { "SET $_; " } @settings;
	$node->safe_psql('postgres', "${set}SELECT count(*) FROM queue_put('counted', 'm')") for 1 .. $n;
	$node->safe_psql('postgres', qq{$set
		SELECT queue_delete('counted', message_id, pop_receipt) FROM queue_get('counted')});
}

work(5);
is($node->safe_psql('postgres', $stats), '5 1 1', 'counted in shared memory');
is($node->safe_psql('postgres', $row), 'none', '... not yet in the table (no sweep ran)');

$node->restart;
is($node->safe_psql('postgres', $stats), '5 1 1', 'a clean restart keeps every count');
ok(!-e $node->data_dir . '/pg_stat/queue_counters.stat', '... and reads the saved file only once');

$node->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
is($node->safe_psql('postgres', $row), '5 1 1', 'a sweep writes the totals to the table');

work(3);
is($node->safe_psql('postgres', $stats), '8 2 2', 'more counts after the sweep');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $stats), '8 2 2',
	'an immediate stop keeps them too (the postmaster exits normally)');

# A crash: a backend killed, the server resets shared memory.
sub crash
{
	my $victim = $node->background_psql('postgres');
	my $pid = $victim->query_safe('SELECT pg_backend_pid()');
	kill 'KILL', $pid;
	eval { $victim->quit };    # its psql lost its backend
	ok($node->poll_query_until('postgres', 'SELECT 1', '1'), 'the server is back after a crash');
}

work(1);
crash();
is($node->safe_psql('postgres', $stats), '5 1 1',
	'a crash keeps what the last sweep wrote, and loses the counts made since');
ok(!-e $node->data_dir . '/pg_stat/queue_counters.stat', 'no file after a crash');

work(2, 'queue.durable_counters = on');
is($node->safe_psql('postgres', $stats), '7 2 2', 'durable counts add to the shared ones');
crash();
is($node->safe_psql('postgres', $stats), '7 2 2', 'a crash loses no durable count');

# the worker writes on its own
$node->append_conf('postgresql.conf', qq{
queue.enable_worker = on
queue.maintenance_interval = 100ms
});
$node->reload;
work(4);
ok($node->poll_query_until('postgres', qq{SELECT ($row) = '9 2 2'}),
	'the worker writes the shared totals to the table');
is($node->safe_psql('postgres', $stats), '11 3 3', 'queue_stats counts them once');

# A clean stop: the worker writes what shared memory holds as it stops, so
# the table has every count, even where the file is not read back (pg_upgrade,
# a start as a standby).
$node->append_conf('postgresql.conf', 'queue.maintenance_interval = 1h');
$node->reload;
sleep(1);    # the reload itself wakes the worker for one sweep
work(2);
is($node->safe_psql('postgres', $row), '9 2 2', 'with an interval of 1 h the counts wait in shared memory');
$node->stop;
ok(!-e $node->data_dir . '/pg_stat/queue_counters.stat', 'a clean stop leaves no count for the file');
$node->start;
is($node->safe_psql('postgres', $row), '11 3 3', '... the worker wrote them as it stopped');
is($node->safe_psql('postgres', $stats), '13 4 4', '... and queue_stats counts them once');

# Counts saved at a stop the worker did not see (immediate) are dropped by a
# server that starts as a standby: promoted, it must not add counts its new
# primary never had, nor count them twice if it had.
work(1);
is($node->safe_psql('postgres', $stats), '14 5 5', 'one more of each');
$node->stop('immediate');
ok(-e $node->data_dir . '/pg_stat/queue_counters.stat', 'an immediate stop saves them to the file');
$node->append_conf('standby.signal', '');
$node->start;
ok($node->log_contains(qr/the counts of 1 queues made after the last sweep before the stop are dropped: the server starts as a standby/),
	'a server that starts as a standby drops them, and says so');
is($node->safe_psql('postgres', $stats), '13 4 4', '... its queue_stats shows what the table holds');
$node->promote;
$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()');
is($node->safe_psql('postgres', $stats), '13 4 4', '... and so does the promoted server');
work(1);
is($node->safe_psql('postgres', $stats), '14 5 5', '... which counts on from there');

$node->stop;
done_testing();
