# The counters of queue_stats across restarts and crashes.  In shared
# memory (the default when preloaded): a stop keeps every count (the
# postmaster saves them to a file as it exits, the next start reads it back,
# once), the sweep writes them to the table, and a crash keeps what the last
# sweep wrote.  With queue.durable_counters on, a crash loses no count.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('counters');
$node->init;
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

$node->stop;
done_testing();
