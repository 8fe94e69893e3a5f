# A backlog of 200,000 expired messages is cleared by the worker while a
# consumer keeps getting and deleting from the same queue: the sweep works
# in batches of their own transactions, with SKIP LOCKED, so no get ever
# waits on a row the sweep holds.  Lock waits are logged (log_lock_waits,
# deadlock_timeout = 1ms).  The only wait allowed is the one for the whole
# table while the worker's vacuum gives the burst's empty pages back (that
# takes the table's exclusive lock; PostgreSQL's vacuum lets go within
# about 20 ms of someone waiting), and it must end within a second.
# Prints the time the sweep took, the longest such wait and the consumer's
# latencies (measurements, not targets).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);
use IPC::Run;

my $backlog = 200_000;
my $fresh = 60_000;

my $node = PostgreSQL::Test::Cluster->new('backlog');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
queue.maintenance_interval = 1s
log_lock_waits = on
deadlock_timeout = 1ms
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('backlog', max_dequeue_count => NULL, message_ttl => NULL);
});

# the backlog first (it sorts first, the worst case for a get), then the
# messages the consumer takes
$node->safe_psql('postgres', qq{
	SELECT count(*) FROM generate_series(1, $backlog / 1000) g,
		LATERAL queue_put_batch('backlog', array_fill('expired ' || g, ARRAY[1000]), ttl => '1 millisecond');
	SELECT count(*) FROM generate_series(1, $fresh / 1000) g,
		LATERAL queue_put_batch('backlog', array_fill('fresh ' || g, ARRAY[1000]));
	VACUUM ANALYZE queue_storage.messages;
});
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_storage.messages WHERE expires_at <= now()}),
	$backlog, "$backlog expired messages wait");

# the consumer: get one, delete it, one transaction each, for 12 s
my $script = $node->basedir . '/consume.sql';
open(my $fh, '>', $script) or die;
print $fh "SELECT count(queue_delete('backlog', m.message_id, m.pop_receipt)) FROM queue_get('backlog') m;\n";
close($fh);
my $log_prefix = $node->basedir . '/consume';
my ($out, $err) = ('', '');
my $consumer = IPC::Run::start(
	[ 'pgbench', '-n', '-c', '1', '-T', '12', '-f', $script, '-l', "--log-prefix=$log_prefix",
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
sleep(1);

# switch the worker on and time the sweep
my $log_offset = -s $node->logfile;
$node->append_conf('postgresql.conf', 'queue.enable_worker = on');
$node->reload;
my $start = time();
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM queue_storage.messages WHERE expires_at IS NOT NULL}),
	'the worker clears the backlog');
my $swept = time() - $start;

$consumer->finish;
is($?, 0, 'the consumer ran without error');
like($out, qr/number of failed transactions: 0/, 'no consumer transaction failed');

my @latencies;
for my $file (glob("$log_prefix.*"))
{
	open(my $lf, '<', $file) or die;
	while (<$lf>) { push @latencies, (split / /)[2] / 1000.0; }
	close($lf);
}
@latencies = sort { $a <=> $b } @latencies;
cmp_ok(scalar(@latencies), '>', 1000, 'the consumer made more than 1000 get+delete transactions');

my $log = substr(slurp_file($node->logfile), $log_offset);
my %worker = map { $_ => 1 } ($log =~ /\[(\d+)\] LOG:  queue worker: database/g);
my ($row_waits, $table_waits, $longest) = ('', 0, 0);
my $waits_logged = () = $log =~ /still waiting for/g;
while ($log =~ /process (\d+) still waiting for (\w+) on (.*?) after [\d.]+ ms\n.*DETAIL:  Process holding the lock: (\d+)\./g)
{
	my ($pid, $mode, $what, $holder) = ($1, $2, $3, $4);
	$waits_logged--;
	if ($what !~ /^relation / || !$worker{$holder})
	{
		$row_waits .= "process $pid waited for $mode on $what, held by $holder\n";
		next;
	}
	$table_waits++;
	# the end of this wait: the first "acquired" of the process after it
	my ($ms) = (substr($log, pos($log)) =~ /process $pid acquired $mode on \Q$what\E after ([\d.]+) ms/);
	$longest = $ms // 1e9 if ($ms // 1e9) > $longest;
}
# a wait whose holder the log did not name as one process
$row_waits .= "$waits_logged waits held by several processes or none named\n" if $waits_logged;
is($row_waits, '', 'no session waited on a row or transaction lock, or a lock the worker did not hold');
cmp_ok($longest, '<', 1000, "each wait for the table the worker's vacuum held ended within a second");
my ($deleted, $transactions) = (0, 0);
while ($log =~ /(\d+) expired messages deleted, \d+ poison messages moved, \d+ leases of ended sessions released, \d+ retained messages removed, in (\d+) transactions/g)
{
	$deleted += $1;
	$transactions += $2;
}
is($deleted, $backlog, "the worker logged $backlog deletions");
cmp_ok($transactions, '>=', $backlog / 1000, 'in batches of at most 1000 messages, a transaction each');
is($node->safe_psql('postgres', q{SELECT expired FROM queue_stats('backlog')}), $backlog,
	'queue_stats counts them as expired');

my $pct = sub { $latencies[ int($_[0] * $#latencies) ] };
diag(sprintf('measured: backlog of %d expired messages swept in %.2f s (%d transactions); '
	  . 'waits for the table while the vacuum truncated it: %d, the longest %.1f ms; '
	  . 'consumer: %d get+delete, latency p50 %.2f ms, p99 %.2f ms, max %.2f ms',
	  $backlog, $swept, $transactions, $table_waits, $longest, scalar(@latencies),
	  $pct->(0.5), $pct->(0.99), $latencies[-1]));

$node->stop;
done_testing();
