# The sweep never waits for a lock a user's transaction holds.  A producer
# that put into a message group and left its transaction open holds the
# group's lock for as long as it stays open.  A message of that group that
# expires, or is due for the poison queue, is passed over and left for a
# later sweep; meanwhile the sweep does everything else: other messages
# expire, leases of ended sessions come back.  Once the producer commits,
# the next sweeps hand each group's turn on to the message it put.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('sweep_never_waits');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 100ms
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('grouped', max_dequeue_count => 1);
	SELECT queue_create('other', max_dequeue_count => NULL);
});
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker'}),
	'the worker runs');
my $producer = $node->background_psql('postgres');
my $consumer = $node->background_psql('postgres');

$node->safe_psql('postgres', q{
	-- handed out once (the limit), due for the poison queue when its lease ends
	SELECT count(*) FROM queue_put('grouped', 'first of h', group_id => 'h');
	SELECT count(*) FROM queue_get('grouped', 1, '5 seconds');
	-- expires; its group g gets a message from the open transaction
	SELECT count(*) FROM queue_put('grouped', 'first of g', group_id => 'g', ttl => '5 seconds');
	-- another queue's message, expiring after the group's
	SELECT count(*) FROM queue_put('other', 'expires later', ttl => '6 seconds');
	SELECT count(*) FROM queue_put('other', 'leased by a session that ends');
});

# The producer: a message behind each group's first one, its transaction
# left open.
$producer->query_safe('BEGIN');
is($producer->query_safe(q{
	SELECT visible_at FROM queue_put('grouped', 'second of g', group_id => 'g')
	UNION ALL
	SELECT visible_at FROM queue_put('grouped', 'second of h', group_id => 'h')}),
	"infinity\ninfinity", 'the producer\'s two messages wait behind their groups\' first ones');

# A consumer whose lease ends with its session, once the group's first
# message has expired.
$consumer->query_safe(q{SELECT count(*) FROM queue_get('other', 1, '10 minutes', '0', true)});
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM queue_storage.messages
	WHERE body = 'first of g' AND expires_at > pg_catalog.now()}),
	'the first message of g expires');
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM queue_storage.messages
	WHERE body = 'first of h' AND visible_at <= pg_catalog.now()}),
	'the lease of the first message of h ends');
$consumer->quit;

# Both groups' first messages are due after 5 s, the other queue's after 6 s.
my $start = time();
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM queue_storage.messages m
	JOIN queue_storage.queues q USING (queue_id)
	WHERE q.name = 'other' AND m.body = 'expires later'}),
	'while the producer stays in its transaction, the other queue\'s expired message is deleted');
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM queue_peek('other', 10) WHERE body = 'leased by a session that ends'}),
	'... and the lease of the ended session comes back');
my $waited = time() - $start;
cmp_ok($waited, '<', 30, sprintf('... within 30 s (%.1f s)', $waited));
note(sprintf('measured: swept past a locked group after %.2f s', $waited));

is($node->safe_psql('postgres', q{
	SELECT string_agg(m.body, ', ' ORDER BY m.body) FROM queue_storage.messages m
	JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'grouped'}),
	'first of g, first of h',
	'the messages of the locked groups are passed over, left in the table');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM pg_stat_activity
	WHERE backend_type = 'queue worker' AND wait_event_type = 'Lock'}),
	'0', 'the worker waits on no lock');
is($node->safe_psql('postgres', q{SELECT expired FROM queue_stats('other')}), '1',
	'the other queue counts its expired message');

# The producer commits: the next sweeps delete the expired message, move the
# poison one and hand both groups' turns on.
$producer->query_safe('COMMIT');
$producer->quit;
ok($node->poll_query_until('postgres', q{
	SELECT count(*) = 2 FROM queue_peek('grouped', 10)
	WHERE body IN ('second of g', 'second of h')}),
	'after the commit, each group\'s next message is visible');
is($node->safe_psql('postgres', q{SELECT body FROM queue_peek('grouped-poison', 10)}),
	'first of h', 'the poison message was moved');
is($node->safe_psql('postgres', q{SELECT expired || ' ' || poisoned FROM queue_stats('grouped')}),
	'1 1', 'grouped counts one expired and one poison message');
is($node->safe_psql('postgres', q{
	SELECT string_agg(body, ', ' ORDER BY body) FROM queue_get('grouped', 10)}),
	'second of g, second of h', 'a get hands both out');

done_testing();
