# The background worker: found in pg_stat_activity, sweeps without being
# called, finds databases extended later, leaves alone a database whose
# extension was dropped, comes back after pg_terminate_backend and after a
# crash, and follows a reloaded queue.maintenance_interval.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('worker');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION queue');

my $worker_of = sub {
	my ($db) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = '$db'");
};

# --- present, with a clear backend_type
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'postgres'}),
	'a queue worker serves database postgres');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'queue launcher'}),
	'1', 'one queue launcher runs');

# --- expired messages vanish and poison messages move without any call
$node->safe_psql('postgres', q{
	SELECT queue_create('swept', max_dequeue_count => 1);
	SELECT count(*) FROM queue_put_batch('swept', ARRAY['e1', 'e2', 'e3'], ttl => '100 milliseconds');
});
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('swept', 3, '100 milliseconds')});
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('swept', 'bad')});
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('swept', 1, '100 milliseconds')});
ok($node->poll_query_until('postgres',
	q{SELECT total = 0 AND expired = 3 AND poisoned = 1 FROM queue_stats('swept')}),
	'the worker deleted 3 expired messages and moved 1 poison message, counted in queue_stats');
is($node->safe_psql('postgres', q{SELECT body FROM queue_peek('swept-poison')}), 'bad',
	'the poison message is in swept-poison');
like(slurp_file($node->logfile),
	qr/queue worker: database "postgres": \d+ expired messages deleted, \d+ poison messages moved, \d+ leases of ended sessions released, \d+ retained messages removed, in \d+ transactions/,
	'the worker logged its sweep');

# --- a database created and extended later is swept within 10 s
$node->safe_psql('postgres', 'CREATE DATABASE late');
$node->safe_psql('late', q{
	CREATE EXTENSION queue;
	SELECT queue_create('later');
	SELECT count(*) FROM queue_put('later', 'x', ttl => '1 millisecond');
});
my $start = time();
ok($node->poll_query_until('late', q{SELECT count(*) = 0 FROM queue_storage.messages}),
	'a database extended later gets swept');
my $pickup = time() - $start;
cmp_ok($pickup, '<', 10, sprintf('... within 10 s (%.1f s)', $pickup));
note(sprintf('measured: database extended later swept after %.2f s', $pickup));

# --- a database whose extension is dropped is left alone
$node->safe_psql('late', 'DROP EXTENSION queue');
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'late'}),
	'the worker of a database whose extension was dropped stops');
ok($node->log_contains(qr/stopping in database "late": the extension was dropped/),
	'... and says why');
# The launcher still looks at the database every 5 s (a short-lived check
# that exits at once); nothing stays connected to it.
my $lingering = 0;
for (1 .. 12)
{
	$lingering += $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE datname = 'late'
		  AND backend_type = 'queue worker' AND backend_start < now() - interval '1 second'});
	sleep(0.5);
}
is($lingering, 0, 'no worker stays in a database without the extension');

# --- DROP DATABASE is not blocked by a worker (it is stopped first)
$node->safe_psql('late', q{CREATE EXTENSION queue});
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'late'}),
	'the worker comes back with CREATE EXTENSION');
$node->safe_psql('postgres', 'DROP DATABASE late');
pass('DROP DATABASE of a database with a worker succeeds without FORCE');

# --- pg_terminate_backend: the worker comes back
my $pid = $worker_of->('postgres');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
ok($node->poll_query_until('postgres',
	qq{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'postgres' AND pid <> $pid}),
	'after pg_terminate_backend a new worker serves the database');

# --- CREATE DATABASE ... TEMPLATE by a role that may not copy the database
# (it may create databases, but neither owns it nor is it a template) is
# refused, and leaves the worker alone
$node->safe_psql('postgres', 'CREATE ROLE copier LOGIN CREATEDB');
$pid = $worker_of->('postgres');
my ($copy_ret, $copy_out, $copy_err) = $node->psql('postgres',
	'CREATE DATABASE copied TEMPLATE postgres', extra_params => ['-U', 'copier']);
like($copy_err, qr/permission denied to copy database/,
	'CREATE DATABASE ... TEMPLATE by a role that may not copy it is refused');
is($worker_of->('postgres'), $pid, '... and the worker was not stopped');

# --- kill -9 of a backend: crash restart, and the worker comes back
$pid = $worker_of->('postgres');
kill 'KILL', $pid;
ok($node->poll_query_until('postgres',
	qq{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'postgres' AND pid <> $pid}),
	'after kill -9 and the crash restart a new worker serves the database');
ok($node->log_contains(qr/all server processes terminated; reinitializing/),
	'the server went through a crash restart');
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('swept', 'after crash', ttl => '1 millisecond')});
ok($node->poll_query_until('postgres', q{SELECT total = 0 FROM queue_stats('swept')}),
	'the worker sweeps again after the crash');

# --- queue.maintenance_interval follows a reload
$node->append_conf('postgresql.conf', 'queue.maintenance_interval = 1h');
$node->reload;
sleep(1);    # the reload itself wakes the worker for one sweep
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('swept', 'waits', ttl => '1 millisecond')});
sleep(2);
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.messages WHERE body = 'waits'}),
	'1', 'with an interval of 1 h the expired message waits');
$node->append_conf('postgresql.conf', 'queue.maintenance_interval = 100ms');
$node->reload;
$start = time();
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM queue_storage.messages WHERE body = 'waits'}),
	'after a reload to 100 ms it is deleted');
cmp_ok(time() - $start, '<', 2, 'within 2 s of the reload');

# --- an error in a sweep is logged, and the same worker goes on
$pid = $worker_of->('postgres');
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE queue_storage.messages IN ACCESS EXCLUSIVE MODE;');
ok($node->poll_query_until('postgres',
	qq{SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid}),
	'the worker waits for a table another session locked');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
$locker->query_safe('COMMIT');
$locker->quit;
ok($node->poll_query_until('postgres', q{SELECT true},),
	'the server is up');
ok($node->log_contains(qr/sweep of database "postgres" failed; the next one is in/),
	'the failed sweep is logged');
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('swept', 'after error', ttl => '1 millisecond')});
ok($node->poll_query_until('postgres', q{SELECT total = 0 FROM queue_stats('swept')}),
	'the next sweep works');
is($worker_of->('postgres'), $pid, 'by the same worker process');

# --- queue.enable_worker = off stops the workers
$node->append_conf('postgresql.conf', 'queue.enable_worker = off');
$node->reload;
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'queue worker'}),
	'queue.enable_worker = off stops the workers');

$node->stop;
done_testing();
