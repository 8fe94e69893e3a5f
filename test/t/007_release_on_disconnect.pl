# queue_get(..., release_on_disconnect => true): when the consumer's session
# ends while it holds the message, the message becomes visible again within
# about a sweep (1 s) instead of waiting out its visibility timeout, with its
# dequeue count kept.  A lease without the flag, or whose session lives, is
# left alone.  DISCARD ALL, which a pooler runs between two clients of one
# connection, ends them too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

my $node = PostgreSQL::Test::Cluster->new('release');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'queue'\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('leases', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put('leases', 'held by a session that dies');
	SELECT count(*) FROM queue_put('leases', 'held without the flag');
	SELECT count(*) FROM queue_put('leases', 'held by a killed client');
});

# the worker does the releasing: wait until it serves the database
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'queue worker'}),
	'the worker runs');

my $consumer = $node->background_psql('postgres');
my $pid = $consumer->query_safe('SELECT pg_backend_pid()');
$consumer->query_safe(q{SELECT message_id FROM queue_get('leases', 1, '10 minutes', '0', true)});
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_get('leases', 1, '10 minutes')});

sleep(2.5);
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_peek('leases', 10)}), '1',
	'while the session lives its lease holds');

$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
my $start = time();
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM queue_peek('leases', 10) WHERE body = 'held by a session that dies'}),
	'the message of a terminated session becomes visible again');
my $back = time() - $start;
cmp_ok($back, '<', 10, sprintf('... long before its 10 minute lease ends (%.2f s)', $back));
is($node->safe_psql('postgres', q{SELECT dequeue_count FROM queue_peek('leases', 10) WHERE body = 'held by a session that dies'}),
	'1', '... with its dequeue count kept');
is($node->safe_psql('postgres', q{SELECT state FROM queue_inspect('leases') WHERE body = 'held without the flag'}),
	'in_flight', 'a lease taken without the flag waits out its time');
$consumer->quit;

# a client killed between get and delete: its backend ends, the lease too
my $client = $node->background_psql('postgres');
$client->query_safe(q{SELECT count(*) FROM queue_get('leases', 10, '10 minutes', '0', true)});
$client->{run}->kill_kill;
$start = time();
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM queue_peek('leases', 10)}),
	'the messages of a killed client become visible again');
my $back_kill = time() - $start;
note(sprintf('measured: a dead session\'s message came back after %.2f s (terminated) and %.2f s (client killed)',
	$back, $back_kill));

# A pooler in session mode (PgBouncer's default server_reset_query) keeps
# the server connection when its client leaves and runs DISCARD ALL before
# handing it to the next client: that ends the session's leases at once,
# as a disconnect would; another session's stay.
$node->safe_psql('postgres', q{
	SELECT queue_create('pooled');
	SELECT count(*) FROM queue_put_batch('pooled', ARRAY['first client', 'other session']);
});
my $pooled = $node->background_psql('postgres');
my $other = $node->background_psql('postgres');
my $pooled_pid = $pooled->query_safe('SELECT pg_backend_pid()');
$pooled->query_safe(q{SELECT count(*) FROM queue_get('pooled', 1, '10 minutes', '0', true)});
$other->query_safe(q{SELECT count(*) FROM queue_get('pooled', 1, '10 minutes', '0', true)});
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_peek('pooled', 10)}), '0',
	'both leases held');
$pooled->query_safe('DISCARD ALL');
is($node->safe_psql('postgres', q{SELECT string_agg(body, ',') FROM queue_peek('pooled', 10)}),
	'first client', 'DISCARD ALL makes the leases of its session visible again at once');
is($node->safe_psql('postgres', q{SELECT dequeue_count FROM queue_peek('pooled', 10)}), '1',
	'... with their dequeue count kept');
is($pooled->query_safe('SELECT pg_backend_pid()'), $pooled_pid, '... in a session that goes on');
$pooled->query_safe(q{SELECT count(*) FROM queue_get('pooled', 1, '10 minutes', '0', true)});
$pooled->query_safe('DISCARD ALL');
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_peek('pooled', 10)}), '1',
	'the next client\'s leases end at the next DISCARD ALL');
is($node->safe_psql('postgres', q{SELECT state FROM queue_inspect('pooled') WHERE body = 'other session'}),
	'in_flight', 'another session\'s lease is left alone');
$pooled->query_safe('DISCARD ALL');
pass('DISCARD ALL in a session holding no lease');
$pooled->quit;
$other->quit;

$node->stop;
done_testing();
