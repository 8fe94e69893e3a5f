# The worker vacuums queue_storage.messages once queue.vacuum_threshold rows
# of it (and a fifth of its live rows) were updated or deleted since its
# last vacuum, with autovacuum off: not before, never with 0, and without
# waiting while another session holds a lock that conflicts with vacuum (it
# vacuums once the lock is gone, keeps sweeping meanwhile, and does not
# fill the server log with VACUUM's "skipping" line); it gives a burst's
# room back to the file system, which a plain VACUUM of the table does not.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('vacuum');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
queue.vacuum_threshold = 2000
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
		SELECT queue_create('churn');
});

my $vacuum_count =
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = 'queue_storage.messages'::regclass};
my $vacuums = sub { return $node->safe_psql('postgres', $vacuum_count); };

# Waits until the table was vacuumed more than $before times.
my $vacuumed_after = sub {
	my ($before) = @_;
	return $node->poll_query_until('postgres', "SELECT ($vacuum_count) > $before");
};

# Puts, gets and deletes $n messages, up to 1000 at a time: 2 * $n rows
# changed (each get updates a row, each delete deletes one).
my $churn = sub {
	my ($n) = @_;
	for (my $done = 0; $done < $n; $done += 1000)
	{
		my $batch = $n - $done < 1000 ? $n - $done : 1000;
		my $deleted = $node->safe_psql('postgres', qq{
			SELECT count(*) FROM queue_put_batch('churn', array_fill('x'::text, ARRAY[$batch])) \\gset
			SELECT array_agg(message_id) AS ids, array_agg(pop_receipt) AS receipts
			  FROM queue_get('churn', 1000) \\gset
			SELECT count(*) FROM queue_delete_batch('churn', :'ids', :'receipts')
			 WHERE status = 'deleted';
		});
		die "churn: $deleted of $batch deleted" unless $deleted == $batch;
	}
};

is($vacuums->(), '0', 'no vacuum of the messages table yet');

# --- below the threshold: 1000 rows changed, no vacuum
$churn->(500);
sleep 2;
is($vacuums->(), '0', '1000 rows changed, threshold 2000: no vacuum');

# --- past it: vacuumed, and the dead rows are gone
my $start = time;
$churn->(1000);
ok($vacuumed_after->(0), 'past the threshold the worker vacuums the messages table');
note(sprintf('measured: the worker vacuumed %.2f s after the churn past its threshold began', time - $start));
is($node->safe_psql('postgres',
	q{SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'queue_storage.messages'::regclass}),
	'0', 'no dead rows left after the vacuum');

# --- a conflicting lock held elsewhere: no vacuum, no wait, sweeps go on
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE queue_storage.messages IN SHARE UPDATE EXCLUSIVE MODE;');
my $before = $vacuums->();
my $log_offset = -s $node->logfile;
$churn->(2000);
$node->safe_psql('postgres', q{SELECT queue_put('churn', 'short-lived', ttl => '100 milliseconds')});
ok($node->poll_query_until('postgres', q{SELECT total = 0 FROM queue_stats('churn')}),
	'while vacuum is locked out, the worker still sweeps (an expired message is deleted)');
is($vacuums->(), $before, 'and does not vacuum');
unlike(slurp_file($node->logfile, $log_offset), qr/skipping vacuum/,
	'nor has VACUUM log that it skipped the table at each sweep');
$locker->query_safe('COMMIT');
$locker->quit;
ok($vacuumed_after->($before), 'once the lock is gone, it vacuums');
# The worker counts the rows changed since a vacuum from its first look
# after it (every 200 ms here): rows changed before that look count as the
# vacuum's.  Let it look before the churn below, which counts on every row.
sleep 1;

# --- a big table waits for a fifth of its live rows to change
$node->safe_psql('postgres', q{
	SELECT queue_create('backlog');
	SELECT count(*) FROM generate_series(1, 20) g,
		LATERAL queue_put_batch('backlog', array_fill('b' || g, ARRAY[1000])) p;
});
# An ANALYZE or VACUUM that ran while the puts were not yet committed may
# have reported the table with none of them live: count them again.  But
# first wait for the backend that made them to be gone: it reports its
# inserts to the statistics as it exits, which can be after psql returned,
# and a report that came after the ANALYZE would count them twice (40,000
# live, and the fifth below out of reach).
$node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity
	 WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()});
$node->safe_psql('postgres', 'ANALYZE queue_storage.messages');
ok($node->poll_query_until('postgres',
	q{SELECT n_live_tup BETWEEN 20000 AND 20999 FROM pg_stat_user_tables WHERE relid = 'queue_storage.messages'::regclass}),
	'20,000 messages wait in another queue');
$before = $vacuums->();
$churn->(1500);
sleep 2;
is($vacuums->(), $before, '3000 rows changed, past the threshold but under a fifth of 20,000 live: no vacuum');
$churn->(1000);
ok($vacuumed_after->($before), '5000 rows changed: vacuumed');

# --- 0: never
$node->safe_psql('postgres', q{ALTER SYSTEM SET queue.vacuum_threshold = 0; SELECT pg_reload_conf()});
sleep 1;
$before = $vacuums->();
$churn->(4000);
sleep 2;
is($vacuums->(), $before, 'queue.vacuum_threshold = 0: 8000 rows changed, no vacuum');

# --- the table's empty tail: a plain VACUUM keeps it (vacuum_truncate is
# off on the table), the worker's vacuum gives it back once the table is far
# bigger than the rows written since the last vacuum need.  The burst is
# made and measured while queue.vacuum_threshold is still 0 (the section
# above), so that no vacuum of the worker's comes in between.
my $table_size = sub {
	return $node->safe_psql('postgres', q{SELECT pg_relation_size('queue_storage.messages')});
};
$node->safe_psql('postgres', q{
	SELECT queue_create('burst');
	SELECT count(*) FROM generate_series(1, 20) g,
		LATERAL queue_put_batch('burst', array_fill(repeat('x', 1024) || g, ARRAY[1000])) p;
	SELECT queue_clear('burst');
});
my $burst_size = $table_size->();
cmp_ok($burst_size, '>', 20_000 * 1024, 'a burst of 20,000 1 KiB messages, cleared: the table holds their room');
$node->safe_psql('postgres', 'VACUUM queue_storage.messages');
is($table_size->(), $burst_size, 'a plain VACUUM keeps the empty tail');
$node->safe_psql('postgres', q{ALTER SYSTEM SET queue.vacuum_threshold = 2000; SELECT pg_reload_conf()});
sleep 1;
$before = $vacuums->();
$churn->(2500);
ok($vacuumed_after->($before), 'churn past the threshold and a fifth: the worker vacuums');
my $after_size = $table_size->();
cmp_ok($after_size, '<', $burst_size / 2, 'and its vacuum gives the empty tail back');
note("measured: table $burst_size bytes after the burst, $after_size after the worker's vacuum");

done_testing();
