# pg_dump keeps queues, messages (with their pop receipts and leases),
# counters, topics with their subscriptions and grants, schedules, and the
# id sequences: a restored database goes on where the old one stopped.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'queue'");
$node->start;

$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('orders', '1 minute', '1 day', 2, 4096);
	SELECT queue_create('plain', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put_batch('orders', ARRAY['a', 'b', 'c'],
		headers => ARRAY['{"k": 1}', NULL, NULL]::jsonb[]);
	SELECT count(*) FROM queue_put('plain', 'delayed', '1 hour');
	CREATE ROLE dump_sender;
	SELECT queue_grant('orders', 'dump_sender', 'send');
	SELECT queue_grant('*', 'dump_sender', 'read');
	SELECT queue_topic_create('news');
	SELECT queue_subscribe('news', 'orders', '{"kind": ["order"], "total": [{"numeric": [">", 10]}]}');
	SELECT queue_subscribe('news', 'plain');
	SELECT queue_grant('news', 'dump_sender', 'send');
	SELECT queue_schedule('nightly', 'plain', '30 2 * * *', 'report', '{"k": "v"}', 'Europe/Paris');
});
my $receipt = $node->safe_psql('postgres',
	q{SELECT message_id || ' ' || pop_receipt FROM queue_get('orders', 1, '10 minutes')});
my ($held_id, $held_receipt) = split / /, $receipt;

my $messages = q{SELECT message_id, body, headers, dequeue_count, pop_receipt,
	inserted_at, visible_at, expires_at FROM queue_storage.messages ORDER BY message_id};
my $queues = q{SELECT * FROM queue_list()};
my $stats = q{SELECT queue, total, puts, gets FROM queue_stats()};
my $grants = q{SELECT coalesce(q.name, t.name, '*'), g.grantee, g.permission
	FROM queue_storage.grants g LEFT JOIN queue_storage.queues q USING (queue_id)
	LEFT JOIN queue_storage.topics t ON t.topic_id = g.queue_id ORDER BY 1, 3};
my $topics = q{SELECT * FROM queue_topics()};
my $schedules = q{SELECT * FROM queue_schedules()};

# pg_dump copies the counters table: the totals the last sweep wrote from
# shared memory.  queue_maintain() writes them now.
$node->safe_psql('postgres', 'SELECT * FROM queue_maintain()');

my $before_messages = $node->safe_psql('postgres', $messages);
my $before_queues = $node->safe_psql('postgres', $queues);
my $before_stats = $node->safe_psql('postgres', $stats);
my $before_grants = $node->safe_psql('postgres', $grants);
my $before_topics = $node->safe_psql('postgres', $topics);
my $before_schedules = $node->safe_psql('postgres', $schedules);

my $dump = $node->basedir . '/dump.sql';
$node->command_ok([ 'pg_dump', '-d', $node->connstr('postgres'), '-f', $dump ],
	'pg_dump succeeds');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('restored'), '-f', $dump ],
	'the dump restores into a new database');

is($node->safe_psql('restored', $queues), $before_queues, 'queues restored');
is($node->safe_psql('restored', $messages), $before_messages,
	'messages restored with receipts, leases and dequeue counts');
is($node->safe_psql('restored', $stats), $before_stats, 'counters restored');
is($node->safe_psql('restored', $grants), $before_grants, 'grants restored');
is($node->safe_psql('restored', q{SET ROLE dump_sender; SELECT count(*) FROM queue_put('orders', 'granted')}),
	'1', 'a restored grant lets its role send');
is($node->safe_psql('restored', $topics), $before_topics, 'topics and subscriptions restored');
is($node->safe_psql('restored', $schedules), $before_schedules, 'schedules restored, with their next due time');
is($node->safe_psql('restored', q{SET ROLE dump_sender;
	SELECT string_agg(queue, ',' ORDER BY queue) FROM queue_publish('news', 'n', '{"kind": "order", "total": 11}')}),
	'orders,plain', 'a restored topic publishes through its filters, by its restored grant');
my ($taken) = $node->psql('restored', q{SELECT queue_create('news')});
isnt($taken, 0, 'a restored topic still holds its name');

# the consumer's receipt still works in the restored database
$node->safe_psql('restored', "SELECT queue_delete('orders', $held_id, '$held_receipt')");
is($node->safe_psql('restored', "SELECT count(*) FROM queue_storage.messages WHERE message_id = $held_id"),
	'0', 'a receipt issued before the dump deletes after the restore');

# new messages get new ids
my $max_before = $node->safe_psql('postgres', 'SELECT max(message_id) FROM queue_storage.messages');
my $new_id = $node->safe_psql('restored', q{SELECT message_id FROM queue_put('plain', 'new')});
cmp_ok($new_id, '>', $max_before, 'the message id sequence goes on after the restore');

# and storage is still closed to ordinary roles after the restore
$node->safe_psql('restored', 'CREATE ROLE plain_after_restore');
is($node->safe_psql('restored',
	q{SELECT has_table_privilege('plain_after_restore', 'queue_storage.messages', 'SELECT')}),
	'f', 'storage stays closed after the restore');

$node->stop;
done_testing();
