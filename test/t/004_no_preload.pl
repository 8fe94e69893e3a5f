# Without shared_preload_libraries the API works all the same: no launcher,
# no worker; get routes poison messages itself, and expired messages are
# deleted by queue_maintain().
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('no_preload');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('plain', max_dequeue_count => 1);
});

is($node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'queue%'}),
	'0', 'no launcher and no worker without the preload');

my ($id, $receipt) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*) FROM queue_put('plain', 'work');
	SELECT message_id || '|' || pop_receipt FROM queue_get('plain');
}) =~ s/^1\n//r;
my $updated = $node->safe_psql('postgres',
	"SELECT pop_receipt FROM queue_update('plain', $id, '$receipt', '1 minute', 'changed')");
$node->safe_psql('postgres', "SELECT queue_delete('plain', $id, '$updated')");
is($node->safe_psql('postgres', q{SELECT deletes FROM queue_stats('plain')}), '1',
	'put, get, update and delete work');

$node->safe_psql('postgres', q{
	SELECT count(*) FROM queue_put('plain', 'fails');
	SELECT count(*) FROM queue_get('plain', 1, '1 millisecond');
	SELECT pg_sleep(0.01);
	SELECT count(*) FROM queue_get('plain');
});
is($node->safe_psql('postgres', q{SELECT body FROM queue_peek('plain-poison')}), 'fails',
	'get moves a poison message itself');

$node->safe_psql('postgres', q{
	SELECT count(*) FROM queue_put('plain', 'short', ttl => '1 millisecond');
	SELECT pg_sleep(0.01);
});
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('plain')}), '0',
	'an expired message is not handed out');
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.messages WHERE body = 'short'}), '1',
	'... and stays stored, with no worker to delete it');
is($node->safe_psql('postgres', q{SELECT expired FROM queue_maintain()}), '1',
	'queue_maintain() deletes it');

is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_list(); SHOW queue.maintenance_interval}),
	"2\n1s", 'the settings exist once a session has loaded the library');

$node->stop;
done_testing();
