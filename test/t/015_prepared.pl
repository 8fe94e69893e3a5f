# Prepared transactions (two-phase commit) that put, get or delete never
# block other sessions: a prepared transaction keeps the row locks it took
# until it is committed or rolled back, perhaps much later, so it counts in
# a row of queue_storage.counters of its own; a session that finds its
# backend's row held by one (a durable count made before PREPARE) counts
# in a row of its own too.  The sweep folds those rows in once committed;
# a rolled-back one counts nothing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('prepared');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
max_prepared_transactions = 10
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('two-phase', max_dequeue_count => NULL);
});

# Each call is a new connection, which takes the backend slot the previous
# one left: the slot whose counters row a prepared transaction may hold.
# A lock wait of more than 5 s fails the call (55P03).
sub run
{
	my ($sql, @settings) = @_;
	my $set = join '', map { "SET $_; " } ("lock_timeout = '5s'", @settings);
	my ($ret, $out, $err) = $node->psql('postgres', "$set$sql");
	return $ret == 0 ? 'ok' : $err;
}

my $put = q{SELECT count(*) FROM queue_put('two-phase', 'm')};
is(run("BEGIN; $put; PREPARE TRANSACTION 'a'"), 'ok', 'a prepared put');
is(run("BEGIN; $put; PREPARE TRANSACTION 'b'"), 'ok',
	'a second prepared put in the same backend slot does not wait for the first');
is(run($put, 'queue.durable_counters = on'), 'ok',
	'nor does a durably counted put');
is(run("BEGIN; $put; $put; PREPARE TRANSACTION 'c'", 'queue.durable_counters = on'), 'ok',
	'a prepared transaction whose first count was durable (it holds its backend\'s row)');
is(run($put, 'queue.durable_counters = on'), 'ok',
	'a durably counted put in that slot does not wait for it');
is(run("BEGIN; $put; PREPARE TRANSACTION 'd'"), 'ok', 'nor does a prepared put');
is(run(q{BEGIN; SELECT queue_delete('two-phase', message_id, pop_receipt) FROM queue_get('two-phase');
	PREPARE TRANSACTION 'e'}), 'ok', 'a prepared get and delete');

is($node->safe_psql('postgres', q{SELECT puts || ' ' || gets FROM queue_stats('two-phase')}), '2 0',
	'prepared transactions count nothing until they commit');
$node->safe_psql('postgres', q{
	COMMIT PREPARED 'a'; COMMIT PREPARED 'b'; COMMIT PREPARED 'c';
	ROLLBACK PREPARED 'd'; COMMIT PREPARED 'e';
});
is($node->safe_psql('postgres', q{SELECT puts || ' ' || gets || ' ' || deletes FROM queue_stats('two-phase')}),
	'6 1 1', 'committed ones count once, a rolled-back one not at all');
ok($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.counters WHERE shard < -1}) > 0,
	'they counted in rows of their own');

$node->safe_psql('postgres', 'SELECT queue_maintain()');
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.counters WHERE shard < -1}), '0',
	'a sweep folds those rows into the shared one');
is($node->safe_psql('postgres', q{SELECT puts || ' ' || gets || ' ' || deletes FROM queue_stats('two-phase')}),
	'6 1 1', '... counting them once');

# a sweep folds only committed rows
is(run("BEGIN; $put; PREPARE TRANSACTION 'f'"), 'ok', 'another prepared put');
is(run('SELECT queue_maintain()'), 'ok', 'a sweep does not wait for it');
$node->safe_psql('postgres', q{COMMIT PREPARED 'f'});
$node->safe_psql('postgres', 'SELECT queue_maintain()');
is($node->safe_psql('postgres', q{SELECT puts FROM queue_stats('two-phase')}), '7',
	'... and folds it after its commit');

# a sweep may not be prepared: it would hold the shared row, and the worker
like(run("BEGIN; SELECT queue_maintain(); PREPARE TRANSACTION 'g'"),
	qr/cannot PREPARE a transaction that has run queue_maintain\(\)/,
	'PREPARE of a transaction that ran queue_maintain is refused');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_prepared_xacts}), '0',
	'no transaction is left prepared');

$node->stop;
done_testing();
