# Before any ANALYZE of queue_storage.messages, the worker's vacuum keeps
# the room that the rows written since the last vacuum used.  It judges
# whether the table is worth truncating by the size of those rows, which
# only statistics give: without them the planner guesses 32 bytes for a
# text column, 1 KiB messages looked five times smaller than they are, and
# a table holding just what they needed looked worth truncating (under the
# batch benchmark on a new server the vacuum then waited seconds in
# "truncating heap" for a lock the clients never left free).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('vacuum_unanalyzed');
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
	SELECT queue_create('unmeasured');
	SELECT count(*) FROM generate_series(1, 20) g,
		LATERAL queue_put_batch('unmeasured', array_fill(repeat('u', 1024) || g, ARRAY[1000])) p;
});

my $size_sql = q{SELECT pg_relation_size('queue_storage.messages')};
my $vacuum_count =
	q{SELECT vacuum_count FROM pg_stat_user_tables WHERE relid = 'queue_storage.messages'::regclass};

is($node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_stats WHERE schemaname = 'queue_storage' AND tablename = 'messages'}),
	'0', 'the messages table was never analyzed');
my $size = $node->safe_psql('postgres', $size_sql);
cmp_ok($size, '>', 20_000 * 1024, '20,000 messages of 1 KiB put');
is($node->safe_psql('postgres', $vacuum_count), '0', 'no vacuum yet');

$node->safe_psql('postgres', q{SELECT queue_clear('unmeasured')});
ok($node->poll_query_until('postgres', "SELECT ($vacuum_count) > 0"),
	'all 20,000 deleted: the worker vacuums');
is($node->safe_psql('postgres', $size_sql), $size,
	'and keeps the pages they used');
is($node->safe_psql('postgres',
	q{SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = 'queue_storage.messages'::regclass}),
	'0', 'with no dead rows left in them');

done_testing();
