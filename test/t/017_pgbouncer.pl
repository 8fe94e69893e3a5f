# Behind PgBouncer.  In session mode the pooler keeps the server connection
# when a client leaves and runs its server_reset_query (DISCARD ALL by
# default) before the next client gets it: the leases the leaving client
# took with release_on_disconnect become visible again at once, as if it
# had disconnected, though the server session lives on.  In transaction
# mode every call of the API works, each a statement of its own.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(make_path);

my $pgbouncer = '/usr/sbin/pgbouncer';
plan skip_all => "no PgBouncer at $pgbouncer (test/prepare.sh installs the package pgbouncer)"
	unless -x $pgbouncer;

my $node = PostgreSQL::Test::Cluster->new('pooled');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'queue'\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('pooled', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put_batch('pooled', ARRAY['one', 'two', 'three']);
});
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# One pooler per mode, each with one server connection, so every client
# of a mode gets the same server session.
my $dir = PostgreSQL::Test::Utils::tempdir_short();
my %port;
foreach my $mode ('session', 'transaction')
{
	$port{$mode} = PostgreSQL::Test::Cluster::get_free_port();
	make_path("$dir/$mode");
	PostgreSQL::Test::Utils::append_to_file("$dir/$mode/users.txt", qq{"$user" ""\n});
	PostgreSQL::Test::Utils::append_to_file("$dir/$mode/pgbouncer.ini", qq{
[databases]
postgres = host=@{[ $node->host ]} port=@{[ $node->port ]} dbname=postgres

[pgbouncer]
listen_addr =
listen_port = $port{$mode}
unix_socket_dir = $dir/$mode
auth_type = trust
auth_file = $dir/$mode/users.txt
pool_mode = $mode
default_pool_size = 1
server_reset_query = DISCARD ALL
logfile = $dir/$mode/pgbouncer.log
pidfile = $dir/$mode/pgbouncer.pid
});
	system($pgbouncer, '-d', "$dir/$mode/pgbouncer.ini") == 0
	  or BAIL_OUT("pgbouncer did not start in $mode mode");
}

# runs SQL as one client of the pooler of a mode, which then disconnects
sub through
{
	my ($mode, $sql) = @_;
	my ($stdout, $stderr);
	foreach my $try (1 .. 50)    # the pooler may still be starting
	{
		IPC::Run::run(['psql', '-X', '-A', '-t', '-h', "$dir/$mode", '-p', $port{$mode},
			'-U', $user, '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c', $sql],
			'>', \$stdout, '2>', \$stderr);
		last unless $stderr =~ /could not connect|No such file/;
		select(undef, undef, undef, 0.1);
	}
	chomp $stdout;
	return $stderr eq '' ? $stdout : "error: $stderr";
}

my $visible = q{SELECT count(*) FROM queue_peek('pooled', 10)};

# session mode
my $server = through('session', 'SELECT pg_backend_pid()');
like($server, qr/^\d+$/, 'a client of the session pooler reaches the server');
is(through('session', q{SELECT body FROM queue_get('pooled', 1, '10 minutes', '0', true)}),
	'one', 'a client takes a message with release_on_disconnect and leaves');
ok($node->poll_query_until('postgres', q{SELECT count(*) = 3 FROM queue_peek('pooled', 10)}),
	'its message is visible again: the pooler\'s DISCARD ALL ended the lease')
  or diag($node->safe_psql('postgres', q{SELECT * FROM queue_inspect('pooled')}));
is($node->safe_psql('postgres', q{SELECT dequeue_count FROM queue_inspect('pooled') WHERE body = 'one'}),
	'1', '... with its dequeue count kept');
is(through('session', 'SELECT pg_backend_pid()'), $server,
	'... while the server session lives on (the next client gets it)');
like(through('session', q{SELECT body FROM queue_get('pooled', 1, '10 minutes')}), qr/^(one|two|three)$/,
	'a lease taken without the flag ...');
is($node->safe_psql('postgres', $visible), '2', '... outlives its client, as it should');

# transaction mode: the API, a statement at a time
my $id = through('transaction', q{SELECT message_id FROM queue_put('pooled', 'via transaction pooling')});
like($id, qr/^\d+$/, 'transaction mode: a put');
my $got = through('transaction', q{
	SELECT message_id || ' ' || pop_receipt FROM queue_get('pooled', 1, '1 minute') WHERE body <> 'one'});
my ($got_id, $receipt) = split / /, $got;
ok(defined $receipt, 'transaction mode: a get');
is(through('transaction', qq{SELECT pop_receipt IS NOT NULL FROM queue_update('pooled', $got_id, '$receipt', '1 minute')}),
	't', 'transaction mode: an update');
is(through('transaction', q{SELECT count(*) FROM queue_stats('pooled')}), '1', 'transaction mode: stats');

foreach my $mode ('session', 'transaction')
{
	my $pid = PostgreSQL::Test::Utils::slurp_file("$dir/$mode/pgbouncer.pid");
	chomp $pid;
	kill 'TERM', $pid;
}
$node->stop;
done_testing();
