# Streaming replication: a primary and a synchronous hot standby, both with
# the library preloaded.
#  1. The standby reads what the primary wrote: queue_peek, queue_stats,
#     queue_list, queue_inspect.
#  2. Every writing call fails at once with 25006 (read_only_sql_transaction)
#     on the standby, and on the primary in a read-only transaction, where
#     it changes nothing.
#  3. Failover under load: the primary stops ('immediate') while producers
#     and consumers run, the standby is promoted; no acknowledged put is
#     lost, a lease taken before holds with its receipt, and the worker,
#     long polls and release_on_disconnect work on the promoted server.
#  4. A switchover and back (A -> B -> A, A's old data directory following
#     B as a standby): queue_stats counts every put exactly once and never
#     goes backwards.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use IPC::Run;
use POSIX ();
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueFixture;

# allows_streaming limits max_connections to 10: the load below needs more
my $settings = qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
max_connections = 30
};

# Makes $node (stopped) a standby of $primary on its next start.  Its
# walreceiver names itself after the node, for synchronous_standby_names;
# it waits for no standby of its own (when promoted, nothing follows it).
sub follow
{
	my ($node, $primary) = @_;
	$node->append_conf('postgresql.conf', "
primary_conninfo = '" . $primary->connstr . ' application_name=' . $node->name . "'
synchronous_standby_names = ''
");
	$node->set_standby_mode;
	return;
}

# Sets synchronous_standby_names of $primary to $standby and waits until
# the standby streams and confirms commits.
sub make_synchronous
{
	my ($primary, $standby) = @_;
	my $name = $standby->name;
	$primary->append_conf('postgresql.conf', "synchronous_standby_names = '$name'");
	$primary->reload;
	ok($primary->poll_query_until('postgres', qq{
		SELECT sync_state = 'sync' AND state = 'streaming'
		FROM pg_stat_replication WHERE application_name = '$name'}),
		"$name is a synchronous standby of " . $primary->name);
	return;
}

# A started primary and a started synchronous standby made from its backup.
sub make_pair
{
	my ($primary_name, $standby_name, $extra) = @_;
	my $primary = PostgreSQL::Test::Cluster->new($primary_name);
	$primary->init(allows_streaming => 1);
	$primary->append_conf('postgresql.conf', $settings . $extra);
	$primary->start;
	$primary->backup('base');
	my $standby = PostgreSQL::Test::Cluster->new($standby_name);
	$standby->init_from_backup($primary, 'base');
	follow($standby, $primary);
	$standby->start;
	make_synchronous($primary, $standby);
	return ($primary, $standby);
}

# wait_for_replay_catchup is not in PostgreSQL 15's Cluster.pm
sub replayed
{
	my ($primary, $standby) = @_;
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	return;
}

sub promote
{
	my ($node) = @_;
	$node->promote;
	ok($node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'),
		$node->name . ' is promoted');
	return;
}

# The SQLSTATE $sql fails with ('none' if it succeeds) and how long the
# call took, in seconds.
sub refusal
{
	my ($node, $sql) = @_;
	my $start = time();
	my ($ret, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	my $took = time() - $start;
	my $code = $ret == 0 ? 'none'
	  : $err =~ /ERROR:\s+([0-9A-Z]{5}):/ ? $1
	  : "no SQLSTATE in: $err";
	return ($code, $took);
}

# The queue worker of database postgres is asleep: it has swept since it
# started (it sweeps first, then sleeps).
sub worker_asleep
{
	my ($node) = @_;
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'queue worker' AND datname = 'postgres'
			AND wait_event_type = 'Extension'}),
		'the worker runs and has swept on ' . $node->name);
	return;
}

my ($primary, $standby) = make_pair('primary', 'standby', '');

# ---------------------------------------------------------------------
# 1. Reads on the standby
# ---------------------------------------------------------------------
$primary->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	CREATE ROLE reader;
	SELECT queue_create('orders', max_dequeue_count => 3);
	SELECT count(*) FROM generate_series(1, 5) i,
		queue_put('orders', 'order ' || i, headers => jsonb_build_object('n', i)) p;
	SELECT count(*) FROM queue_put('orders', 'delayed', visibility_timeout => '1 hour');
	SELECT queue_grant('orders', 'reader', 'send');
	SELECT queue_create('empty', max_dequeue_count => NULL);
	-- a message in a poison queue, for queue_redrive
	SELECT queue_create('fragile', max_dequeue_count => 1);
	SELECT count(*) FROM queue_put('fragile', 'fails');
	SELECT count(*) FROM queue_get('fragile', 1, '0.1 s');
});
# the lease of the oldest order, held on the primary for an hour
my ($leased_id, $receipt) = split /\|/, $primary->safe_psql('postgres',
	q{SELECT message_id, pop_receipt FROM queue_get('orders', 1, '1 hour')});
# the 'fails' message went to fragile-poison; the sweep writes the counters
# to the table, which is what the standby reads
ok($primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM queue_peek('fragile-poison', 10)}),
	'a message reached a poison queue on the primary');
$primary->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
replayed($primary, $standby);

my %reads = (
	queue_list => q{SELECT * FROM queue_list() ORDER BY queue},
	queue_peek => q{SELECT * FROM queue_peek('orders', 10)},
	queue_inspect => q{SELECT * FROM queue_inspect('orders')},
	queue_stats => q{SELECT queue, visible, in_flight, delayed, total,
		puts, gets, deletes, poisoned, expired FROM queue_stats() ORDER BY queue},
);
for my $function (sort keys %reads)
{
	my ($ret, $out, $err) = $standby->psql('postgres', $reads{$function});
	is($ret, 0, "on the standby $function works") or diag($err);
	is($out, $primary->safe_psql('postgres', $reads{$function}),
		"... and shows what it shows on the primary");
}
# the exporter's rows: the census and counters the primary wrote
is($standby->safe_psql('postgres', q{
	SELECT value FROM queue_metrics() WHERE queue = 'orders' AND metric = 'queue_puts_total'}),
	'6', 'on the standby queue_metrics works and shows the swept counters');
is($standby->safe_psql('postgres', q{
	SELECT concat_ws(' ', visible, in_flight, delayed, total, puts, gets)
	FROM queue_stats('orders')}), '4 1 1 6 6 1',
	'the standby counts the primary\'s messages and its swept counters');
is($standby->safe_psql('postgres', q{SELECT string_agg(queue, ',' ORDER BY queue) FROM queue_list()}),
	'empty,fragile,fragile-poison,orders,orders-poison', 'the standby lists every queue');
is($standby->safe_psql('postgres',
	"SELECT state || ' ' || dequeue_count FROM queue_inspect('orders') WHERE message_id = $leased_id"),
	'in_flight 1', 'the standby sees the primary\'s lease');

# ---------------------------------------------------------------------
# 2. Writes refused with 25006, at once
# ---------------------------------------------------------------------
my @writes = (
	[ queue_put => q{SELECT queue_put('orders', 'x')} ],
	[ queue_put_batch => q{SELECT queue_put_batch('orders', ARRAY['x', 'y'])} ],
	[ queue_get => q{SELECT * FROM queue_get('orders')} ],
	[ 'queue_get waiting 5 s on a full queue' =>
		q{SELECT * FROM queue_get('orders', 1, NULL, '5 seconds')} ],
	[ 'queue_get waiting 5 s on an empty queue' =>
		q{SELECT * FROM queue_get('empty', 1, NULL, '5 seconds')} ],
	[ queue_update => "SELECT queue_update('orders', $leased_id, '$receipt', '1 minute')" ],
	[ queue_update_batch => "SELECT * FROM queue_update_batch('orders',
		ARRAY[$leased_id]::bigint[], ARRAY['$receipt']::uuid[], '1 minute')" ],
	[ 'queue_delete with a valid receipt' =>
		"SELECT queue_delete('orders', $leased_id, '$receipt')" ],
	[ queue_delete_batch => "SELECT * FROM queue_delete_batch('orders',
		ARRAY[$leased_id]::bigint[], ARRAY['$receipt']::uuid[])" ],
	[ queue_create => q{SELECT queue_create('new')} ],
	[ queue_alter => q{SELECT queue_alter('orders', visibility_timeout => '1 minute')} ],
	[ queue_drop => q{SELECT queue_drop('empty')} ],
	[ queue_clear => q{SELECT queue_clear('orders')} ],
	[ queue_redrive => q{SELECT queue_redrive('fragile-poison')} ],
	[ queue_grant => q{SELECT queue_grant('orders', 'reader', 'read')} ],
	[ queue_revoke => q{SELECT queue_revoke('orders', 'reader', 'send')} ],
	[ queue_maintain => q{SELECT * FROM queue_maintain()} ],
);

# Each call of @writes through $node after $prefix: refused with 25006 in
# less than 2 s (a get that waited would take its 5 s).
sub all_refused
{
	my ($node, $where, $prefix) = @_;
	for my $write (@writes)
	{
		my ($function, $sql) = @$write;
		my ($code, $took) = refusal($node, $prefix . $sql);
		is($code, '25006', "$where: $function is refused with 25006");
		cmp_ok($took, '<', 2, sprintf('... at once (%.2f s)', $took));
	}
	return;
}

all_refused($standby, 'on the standby', '');

# On the primary, in a read-only transaction: refused, and nothing changes
# (queues_state: every queue, message, grant and counter).
my $before = queues_state($primary, 'postgres');
all_refused($primary, 'in BEGIN READ ONLY', "BEGIN READ ONLY;\n");
all_refused($primary, 'with default_transaction_read_only',
	"SET default_transaction_read_only = on;\n");
is(queues_state($primary, 'postgres'), $before,
	'the refused calls changed nothing on the primary');
is($primary->safe_psql('postgres', q{
	SELECT string_agg(body || ':' || dequeue_count, ',' ORDER BY message_id)
	FROM queue_peek('orders', 10)}),
	'order 2:0,order 3:0,order 4:0,order 5:0',
	'a get in a read-only transaction leased nothing: the messages are visible, dequeue count 0');
is((refusal($primary, "SELECT queue_delete('orders', $leased_id, '$receipt')"))[0], 'none',
	'the receipt tried on the standby still deletes on the primary');

# ---------------------------------------------------------------------
# 3. Failover under load
# ---------------------------------------------------------------------
$primary->safe_psql('postgres', q{
	SELECT queue_create('load', max_dequeue_count => NULL);
	SELECT queue_create('leases', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put('leases', 'kept');
	SELECT count(*) FROM queue_put('leases', 'short');
	SELECT queue_create('ttl', max_dequeue_count => NULL);
	SELECT queue_create('fragile2', max_dequeue_count => 1);
	SELECT queue_create('wake', max_dequeue_count => NULL);
	SELECT queue_create('session', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put('session', 'held by a session');
});
# two leases taken on the old primary: one for 10 minutes, one for 30 s
my $lease_of = q{
	SELECT message_id || ' ' || pop_receipt || ' ' || visible_at || ' ' || dequeue_count
	FROM queue_get('leases', 1, '%s')};
my ($kept_id, $kept_receipt) = split / /,
	$primary->safe_psql('postgres', sprintf($lease_of, '10 minutes'));
my $short = $primary->safe_psql('postgres', sprintf($lease_of, '30 seconds'));
my ($short_id, undef, $short_visible_at) = split / /, $short, 3;
$short_visible_at =~ s/ \d+$//;

# Producers and consumers: child processes calling psql in a loop, each
# writing what was acknowledged (the call returned) to its own file:
# "put ID" once a put returned, "deleted ID" once a delete returned,
# "unsure ID" when a delete's answer was lost (it may have committed).
my $dir = PostgreSQL::Test::Utils::tempdir;
my $stop_file = "$dir/stop";
my $connstr = $primary->connstr('postgres');

sub call_psql
{
	my ($sql) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run([ 'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $connstr, '-c', $sql ],
			'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(60));
	};
	return $ok ? $out : undef;
}

sub start_client
{
	my ($name, $step) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	return $pid if $pid;
	open my $log, '>', "$dir/$name" or die "$dir/$name: $!";
	$log->autoflush(1);
	$step->($log) until -e $stop_file;
	close $log;
	POSIX::_exit(0);    # no END blocks: they belong to the parent
}

sub producer
{
	my ($log) = @_;
	my $out = call_psql(q{SELECT message_id FROM queue_put('load', 'work')});
	if (defined $out && $out =~ /^(\d+)$/)
	{
		print $log "put $1\n";
	}
	else
	{
		sleep(0.05);
	}
	return;
}

sub consumer
{
	my ($log) = @_;
	my $out = call_psql(q{SELECT message_id || ' ' || pop_receipt FROM queue_get('load', 1, '10 minutes')});
	if (defined $out && $out =~ /^(\d+) (\S+)$/)
	{
		my ($id, $pop_receipt) = ($1, $2);
		my $done = call_psql("SELECT queue_delete('load', $id, '$pop_receipt')");
		print $log (defined $done ? "deleted $id\n" : "unsure $id\n");
	}
	else
	{
		sleep(0.05);
	}
	return;
}

my @clients = (
	start_client('producer1', \&producer),
	start_client('producer2', \&producer),
	start_client('consumer1', \&consumer),
);

# the acknowledged ids of each kind ("put", "deleted", "unsure")
sub acknowledged
{
	my %ids = (put => {}, deleted => {}, unsure => {});
	for my $file (glob("$dir/producer* $dir/consumer*"))
	{
		open my $fh, '<', $file or next;
		while (my $line = <$fh>)
		{
			$ids{$1}{$2} = 1 if $line =~ /^(put|deleted|unsure) (\d+)$/;
		}
		close $fh;
	}
	return \%ids;
}

# let the load run until enough was acknowledged (at most a minute)
my $deadline = time() + 60;
while (time() < $deadline)
{
	my $ids = acknowledged();
	last if keys %{ $ids->{put} } >= 150 && keys %{ $ids->{deleted} } >= 30;
	sleep(0.2);
}
$primary->stop('immediate');
sleep(0.5);    # the clients go on failing against the stopped server
open my $flag, '>', $stop_file or die "$stop_file: $!";
close $flag;
waitpid($_, 0) for @clients;
my $ids = acknowledged();
my @puts = sort { $a <=> $b } keys %{ $ids->{put} };
cmp_ok(scalar @puts, '>=', 20, 'the producers had puts acknowledged before the crash');

promote($standby);
my $new = $standby;
my %present = map { $_ => 1 } split /\n/,
	$new->safe_psql('postgres', q{SELECT message_id FROM queue_inspect('load', 10000)});
my @lost = grep { !$present{$_} && !$ids->{deleted}{$_} && !$ids->{unsure}{$_} } @puts;
is(scalar @lost, 0, sprintf('0 of %d acknowledged puts lost (%d deleted, %d deletes unanswered)',
	scalar @puts, scalar keys %{ $ids->{deleted} }, scalar keys %{ $ids->{unsure} }))
	or diag("lost: @lost");
my @undeleted = grep { $present{$_} } keys %{ $ids->{deleted} };
is(scalar @undeleted, 0, 'no acknowledged delete undone') or diag("back: @undeleted");
note(sprintf('measured: %d puts and %d deletes acknowledged before the crash; %d messages on the new primary',
	scalar @puts, scalar keys %{ $ids->{deleted} }, scalar keys %present));

# the leases taken on the old primary
is($new->safe_psql('postgres', "
	SELECT message_id || ' ' || state || ' ' || visible_at || ' ' || dequeue_count
	FROM queue_inspect('leases') WHERE message_id = $short_id"),
	"$short_id in_flight $short_visible_at 1",
	'a lease taken on the old primary is kept: same end, same dequeue count');
SKIP:
{
	skip 'the 30 s lease already ended: the promotion took too long to see it invisible', 1
	  unless $new->safe_psql('postgres', "SELECT now() < '$short_visible_at'") eq 't';
	is($new->safe_psql('postgres', "SELECT count(*) FROM queue_peek('leases', 10)"), '0',
		'... its message is invisible until the lease ends');
}
ok($new->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM queue_peek('leases', 10) WHERE message_id = $short_id"),
	'... and visible again when it ends');
is($new->safe_psql('postgres', "SELECT now() >= '$short_visible_at'"), 't',
	'... not before');
is((refusal($new, "SELECT queue_delete('leases', $kept_id, gen_random_uuid())"))[0], 'QU409',
	'a wrong receipt of a lease from the old primary is refused (QU409)');
is((refusal($new, "SELECT queue_delete('leases', $kept_id, '$kept_receipt')"))[0], 'none',
	'the receipt from the old primary deletes its message on the new one');

# the worker sweeps on the promoted server
worker_asleep($new);
$new->safe_psql('postgres', q{
	SELECT count(*) FROM queue_put('ttl', 'expires', ttl => '1 second');
	SELECT count(*) FROM queue_put('fragile2', 'poisoned');
	SELECT count(*) FROM queue_get('fragile2', 1, '1 second');
});
ok($new->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM queue_storage.messages WHERE body = 'expires'}),
	'the worker removes an expired message on the promoted server');
ok($new->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM queue_peek('fragile2-poison', 10) WHERE body = 'poisoned'}),
	'the worker moves a message past max_dequeue_count to the poison queue');
is($new->safe_psql('postgres', q{
	SELECT string_agg(queue || ' ' || expired || ' ' || poisoned, ',' ORDER BY queue)
	FROM queue_stats() WHERE queue IN ('ttl', 'fragile2')}),
	'fragile2 0 1,ttl 1 0', '... and counts them');

# a long poll on the promoted server, woken by a put from another session
my ($got, $get_err) = ('', '');
my $waiter = IPC::Run::start(
	[ 'psql', '-XAtq', '-d', $new->connstr('postgres'), '-c',
		q{SELECT body FROM queue_get('wake', 1, NULL, '20 seconds')} ],
	'<', \undef, '>', \$got, '2>', \$get_err, IPC::Run::timeout(120));
ok($new->poll_query_until('postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE query LIKE '%queue_get(''wake''%' AND pid <> pg_backend_pid()
		AND wait_event_type = 'Extension'}),
	'a get waits on the promoted server');
my $put_at = time();
$new->safe_psql('postgres', q{SELECT count(*) FROM queue_put('wake', 'wake up')});
$waiter->finish;
my $woken = time() - $put_at;
is($got, "wake up\n", '... a put in another session wakes it with the message') or diag($get_err);
cmp_ok($woken, '<', 10, sprintf('... long before its 20 s wait ends (the longest allowed) (%.2f s)', $woken));

# release_on_disconnect on the promoted server
my $holder = $new->background_psql('postgres');
$holder->query_safe(q{SELECT count(*) FROM queue_get('session', 1, '10 minutes', '0', true)});
is($new->safe_psql('postgres', q{SELECT count(*) FROM queue_peek('session', 10)}), '0',
	'release_on_disconnect: the message is leased while the session lives');
$holder->quit;
my $ended = time();
ok($new->poll_query_until('postgres', q{SELECT count(*) = 1 FROM queue_peek('session', 10)}),
	'... visible again when the session ends');
my $back = time() - $ended;
cmp_ok($back, '<', 10, sprintf('... within seconds, not 10 minutes (%.2f s)', $back));
$new->stop;

# ---------------------------------------------------------------------
# 4. Switchover and back: the counters
# ---------------------------------------------------------------------
# The worker sweeps when it starts and then once an hour: the sweeps below
# are the explicit ones (queue_maintain) and those of a worker starting.
my ($node_a, $node_b) = make_pair('node_a', 'node_b', "queue.maintenance_interval = 1h\n");
$node_a->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('counted', max_dequeue_count => NULL);
});
worker_asleep($node_a);

my $stats = q{SELECT puts || ' ' || gets || ' ' || deletes FROM queue_stats('counted')};
my @highest = (0, 0, 0);    # the highest puts, gets, deletes read so far

# queue_stats on $node after $step: no counter below the highest read
# before and, if given, puts exactly $expected_puts.  Returns the puts.
sub counters_after
{
	my ($node, $step, $expected_puts) = @_;
	my @now = split / /, $node->safe_psql('postgres', $stats);
	my $backwards = grep { $now[$_] < $highest[$_] } 0 .. 2;
	is($backwards, 0, "$step: the counters never go backwards (puts gets deletes: "
		  . "highest before @highest, now @now on " . $node->name . ')');
	is($now[0], $expected_puts, "... puts is exactly $expected_puts") if defined $expected_puts;
	@highest = map { $now[$_] > $highest[$_] ? $now[$_] : $highest[$_] } 0 .. 2;
	return $now[0];
}

sub put_many
{
	my ($node, $count) = @_;
	$node->safe_psql('postgres',
		"SELECT count(*) FROM generate_series(1, $count) i, queue_put('counted', 'm ' || i) p");
	return;
}

# N puts on A with a get and a delete; a sweep, then more puts unswept
put_many($node_a, 12);
$node_a->safe_psql('postgres', q{
	SELECT count(queue_delete('counted', message_id, pop_receipt)) FROM queue_get('counted', 2);
	SELECT count(*) FROM queue_get('counted', 2, '1 hour');
});
$node_a->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
counters_after($node_a, 'A primary, after a sweep', 12);
put_many($node_a, 5);
my $n = 17;
counters_after($node_a, 'A primary, 5 puts since the sweep', $n);

# switchover to B
replayed($node_a, $node_b);
$node_a->stop('fast');
promote($node_b);
counters_after($node_b, 'B promoted', $n);
worker_asleep($node_b);
my $b_start = counters_after($node_b, 'B after its worker\'s first sweep');

# M puts on B, a sweep
my $m = 9;
put_many($node_b, $m);
$node_b->safe_psql('postgres',
	q{SELECT count(queue_delete('counted', message_id, pop_receipt)) FROM queue_get('counted', 1)});
is(counters_after($node_b, 'B after M puts') - $b_start, $m, '... B counted its M puts');
$node_b->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
my $b_end = counters_after($node_b, 'B after a sweep');

# A's old data directory follows B
follow($node_a, $node_b);
$node_a->start;
make_synchronous($node_b, $node_a);
replayed($node_b, $node_a);
# a standby shows what the primary's last sweep wrote, here all of B's counts
counters_after($node_a, 'A a standby of B', $b_end);

# and back to A
$node_b->stop('fast');
promote($node_a);
counters_after($node_a, 'A promoted again', $n + $m);
worker_asleep($node_a);
counters_after($node_a, 'A after its worker\'s first sweep', $n + $m);
$node_a->safe_psql('postgres', 'SELECT * FROM queue_maintain()');
counters_after($node_a, 'A after a sweep', $n + $m);
is($node_a->safe_psql('postgres',
	q{SELECT puts FROM queue_storage.counters c JOIN queue_storage.queues q USING (queue_id)
	  WHERE q.name = 'counted' AND c.shard = -1}),
	$n + $m, 'the table holds N+M puts after the sweep');

# A fast stop with counts to write while the synchronous standby is gone:
# the worker writes them as it stops without waiting for that standby, and
# the stop ends.
put_many($node_a, 1);
$node_a->append_conf('postgresql.conf', "synchronous_standby_names = 'gone'");
$node_a->reload;
my $stop_started = time();
$node_a->stop('fast');
my $stop_took = time() - $stop_started;
cmp_ok($stop_took, '<', 30,
	sprintf('a fast stop with the synchronous standby gone ends (%.1f s)', $stop_took));
$node_a->append_conf('postgresql.conf', "synchronous_standby_names = ''");
$node_a->start;
is($node_a->safe_psql('postgres',
	q{SELECT puts FROM queue_storage.counters c JOIN queue_storage.queues q USING (queue_id)
	  WHERE q.name = 'counted' AND c.shard = -1}),
	$n + $m + 1, '... and its worker wrote the last put\'s count to the table as it stopped');

$node_a->stop;
done_testing();
