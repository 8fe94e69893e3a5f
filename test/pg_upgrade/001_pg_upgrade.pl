# pg_upgrade of a cluster that holds queues, from one PostgreSQL major to a
# newer one (OLD_INSTALL and NEW_INSTALL name their installations;
# test/pg_upgrade.sh sets them).  The old cluster has the extension's first
# version, with a queue and its poison queue, visible, delayed, leased and
# poisoned messages, and a grant.  After pg_upgrade every stored row is as it
# was (visibility times, dequeue counts, receipts), the counters are kept,
# the leases taken before work after, and ALTER EXTENSION queue UPDATE brings
# the extension to its newest version on the new server.  A second database
# has the newest version, with a topic, its subscriptions (one filtered)
# and a grant on it: they are kept, and the topic publishes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueFixture;

my $old_install = $ENV{OLD_INSTALL} or die "OLD_INSTALL is not set";
my $new_install = $ENV{NEW_INSTALL} or die "NEW_INSTALL is not set";
my $preload = "shared_preload_libraries = 'queue'\nqueue.enable_worker = off\n";

# both without data checksums (initdb turns them on from 18): pg_upgrade
# needs the two clusters alike
sub no_checksums
{
	my ($node) = @_;
	return $node->pg_version >= 18 ? ['--no-data-checksums'] : [];
}

my $old = PostgreSQL::Test::Cluster->new('old', install_path => $old_install);
$old->init(extra => no_checksums($old));
$old->append_conf('postgresql.conf', $preload);
$old->start;
my $old_version = $old->safe_psql('postgres', 'SHOW server_version_num');
$old->safe_psql('postgres', q{CREATE EXTENSION queue VERSION '1.0'; CREATE ROLE producer});
fill_queues($old, 'postgres');
my @leases = take_leases($old, 'postgres');
$old->safe_psql('postgres', 'CREATE DATABASE topics');
$old->safe_psql('topics', q{CREATE EXTENSION queue;
	SELECT queue_create('eu'); SELECT queue_create('all');
	SELECT queue_topic_create('news');
	SELECT queue_subscribe('news', 'eu', '{"region": [{"prefix": "eu-"}]}');
	SELECT queue_subscribe('news', 'all');
	SELECT queue_grant('news', 'producer', 'send')});
my $topics_before = $old->safe_psql('topics', 'SELECT * FROM queue_topics()');

# The sweep writes the counters to their table (the worker does it every
# second; it is off here).  What was counted after the last sweep lives in
# pg_stat/queue_counters.stat only, which pg_upgrade does not carry over.
$old->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
my $before = queues_state($old, 'postgres');
like($before, qr/stats orders\|1 5 1 7 8 7 0 1 0/, 'the old cluster counted 8 puts, 7 gets, 1 poisoned');
$old->stop;

my $new = PostgreSQL::Test::Cluster->new('new', install_path => $new_install);
$new->init(extra => no_checksums($new));
$new->append_conf('postgresql.conf', $preload);

# pg_upgrade runs the old server's programs too: an unpacked old release
# finds the libraries this Debian lacks in its lib folder (test/pg_upgrade.sh)
local $ENV{LD_LIBRARY_PATH} = "$old_install/lib";
my $upgraded = $new->command_ok(
	[
		"$new_install/bin/pg_upgrade", '--no-sync',
		'--old-datadir' => $old->data_dir, '--new-datadir' => $new->data_dir,
		'--old-bindir' => "$old_install/bin", '--new-bindir' => "$new_install/bin",
		'--socketdir' => $new->host, '--old-port' => $old->port, '--new-port' => $new->port,
	],
	"pg_upgrade from PostgreSQL $old_version");
if (!$upgraded)
{
	foreach my $log (glob($new->data_dir . '/pg_upgrade_output.d/*/log/*.log'))
	{
		diag("$log:\n" . slurp_file($log));
	}
}
$new->start;
diag('measured: upgraded from ' . $old_version . ' to '
	. $new->safe_psql('postgres', 'SHOW server_version_num'));

is(queues_state($new, 'postgres'), $before,
	'every queue, message (visibility, dequeue count, receipt), grant and counter kept');
is($new->safe_psql('postgres', q{SELECT count(*) FROM queue_inspect('orders-poison')}), '1',
	'the poisoned message is in the poison queue');

$new->safe_psql('postgres', qq{SELECT queue_delete('orders', $leases[0][0], '$leases[0][1]')});
is($new->safe_psql('postgres', qq{SELECT count(*) FROM queue_inspect('orders') WHERE message_id = $leases[0][0]}),
	'0', 'a delete with a receipt from before the upgrade works');
is($new->safe_psql('postgres', qq{
	SELECT count(*) FROM queue_update('orders', $leases[1][0], '$leases[1][1]', '0')}),
	'1', 'an update with a receipt from before the upgrade works');

$new->safe_psql('postgres', 'ALTER EXTENSION queue UPDATE');
is($new->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'queue'}),
	$new->safe_psql('postgres', q{SELECT default_version FROM pg_available_extensions WHERE name = 'queue'}),
	'ALTER EXTENSION queue UPDATE after pg_upgrade');
is($new->safe_psql('postgres', q{SELECT string_agg(body, ',' ORDER BY message_id) FROM queue_get('orders', 10)}),
	'leased 2,lives forever',
	'the new server hands out what is visible (the others are leased or delayed)');
is($new->safe_psql('postgres', q{SET ROLE producer; SELECT count(*) FROM queue_put('orders', 'after')}),
	'1', 'the grant holds on the new server');

is($new->safe_psql('topics', 'SELECT * FROM queue_topics()'), $topics_before,
	'the topic and its subscriptions are kept');
is($new->safe_psql('topics', q{SET ROLE producer;
	SELECT string_agg(queue, ',' ORDER BY queue) FROM queue_publish('news', 'n', '{"region": "eu-west"}')}),
	'all,eu', 'the topic publishes through its filter, by the grant kept');

$new->stop;
done_testing();
