# Crashes lose nothing committed and keep nothing uncommitted: after
# stop('immediate') a committed put is there, a committed get keeps its
# visibility time, dequeue count and pop receipt, an uncommitted put is
# gone, and the background worker comes back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('crash-q', visibility_timeout => '10 minutes', max_dequeue_count => NULL);
});

my $put_id = $node->safe_psql('postgres', q{SELECT message_id FROM queue_put('crash-q', 'committed put')});
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('crash-q', 'will be got')});
my $got = $node->safe_psql('postgres', q{
	SELECT message_id || ' ' || pop_receipt || ' ' || visible_at || ' ' || dequeue_count
	FROM queue_get('crash-q', 1)});
my ($got_id, $receipt) = split / /, $got;

# an uncommitted put, left open when the server goes down
my $open = $node->background_psql('postgres');
$open->query_safe(q{BEGIN; SELECT queue_put('crash-q', 'uncommitted put');});

$node->stop('immediate');
$open->{run}->finish;
$node->start;

my $state = q{SELECT message_id || ' ' || coalesce(pop_receipt::text, '') || ' ' || visible_at || ' ' || dequeue_count
	FROM queue_storage.messages WHERE message_id = };
is($node->safe_psql('postgres', qq{SELECT body FROM queue_storage.messages WHERE message_id = $put_id}),
	'committed put', 'a committed put survives an immediate stop');
is($node->safe_psql('postgres', "$state $got_id"), $got,
	'a committed get keeps its visibility time, dequeue count and pop receipt');
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.messages WHERE body = 'uncommitted put'}),
	'0', 'an uncommitted put is gone');
$node->safe_psql('postgres', "SELECT queue_delete('crash-q', $got_id, '$receipt')");
pass('the receipt from before the crash deletes the message');

ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker' AND datname = 'postgres'}),
	'the worker comes back after the restart');
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put('crash-q', 'expires', ttl => '1 millisecond')});
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM queue_storage.messages WHERE body = 'expires'}),
	'... and sweeps');

$node->stop;
done_testing();
