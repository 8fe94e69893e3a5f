# Prometheus through the exporter users already run: Debian's
# prometheus-postgres-exporter, given monitoring/queries.yaml, scrapes a
# throwaway server, and its /metrics page shows every queue's gauges and
# counters with the values queue_stats gives, typed (gauge, counter) and
# described; a put shows up within the census interval; counters never go
# back while messages flow; a role granted one queue exports that queue only.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use HTTP::Tiny;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "no exporter at $exporter (test/prepare.sh installs the package prometheus-postgres-exporter)"
	unless -x $exporter;
my $queries = "$FindBin::Bin/../../monitoring/queries.yaml";
ok(-f $queries, "monitoring/queries.yaml is there");

my $node = PostgreSQL::Test::Cluster->new('exported');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'queue'\nqueue.metrics_interval = 1\n");
$node->start;
# the safe install monitoring/queries.yaml is written for; the calls below
# find the functions through search_path
$node->safe_psql('postgres', q{
	CREATE SCHEMA queue;
	CREATE EXTENSION queue SCHEMA queue;
	ALTER DATABASE postgres SET search_path = "$user", public, queue;
});
$node->safe_psql('postgres', q{
	SELECT queue_create('orders', max_dequeue_count => NULL);
	SELECT queue_create('fails', max_dequeue_count => 1);
	SELECT queue_create('idle');
	SELECT count(*) FROM queue_put_batch('orders', ARRAY['1', '2', '3', '4', '5']);
	SELECT count(*) FROM queue_put('orders', 'later', visibility_timeout => '1 hour');
	SELECT count(*) FROM queue_get('orders', 2, '1 hour');
	SELECT count(*) FROM queue_put('fails', 'bad');
	SELECT count(*) FROM queue_get('fails', 1, '1 millisecond');
	CREATE ROLE monitor LOGIN;
	GRANT USAGE ON SCHEMA queue TO monitor;
	SELECT queue_grant('orders', 'monitor', 'read');
});
my $user = $node->safe_psql('postgres', 'SELECT current_user');

# starts an exporter connecting as ROLE; returns (handle, url, log)
sub start_exporter
{
	my ($role) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = PostgreSQL::Test::Utils::tempdir_short() . "/exporter-$role.log";
	local $ENV{DATA_SOURCE_NAME} =
	  'host=' . $node->host . ' port=' . $node->port . " user=$role dbname=postgres sslmode=disable";
	my $handle = IPC::Run::start(
		[ $exporter, "--extend.query-path=$queries",
		  "--web.listen-address=127.0.0.1:$port", '--disable-default-metrics',
		  '--disable-settings-metrics' ],
		'<', \undef, '>', $log, '2>', $log);
	return ($handle, "http://127.0.0.1:$port/metrics", $log);
}

my $http = HTTP::Tiny->new(timeout => 10);

# the page's samples: { 'name{labels}' => value }, and the page itself
sub scrape
{
	my ($url) = @_;
	my $response = $http->get($url);
	return ({}, '') unless $response->{success};
	my %samples;
	foreach my $line (split /\n/, $response->{content})
	{
		next if $line =~ /^#/;
		# the exporter may add labels of its own (server=...): keep queue only
		if ($line =~ /^(queue_[a-z_]+)\{[^}]*queue="([^"]+)"[^}]*\} (\S+)$/)
		{
			$samples{"$1\{$2\}"} = $3;
		}
	}
	return (\%samples, $response->{content});
}

# scrapes until CONDITION(samples) holds or SECONDS pass; returns the
# samples, the page and the milliseconds it took
sub scrape_until
{
	my ($url, $seconds, $condition) = @_;
	my $started = time;
	my ($samples, $page) = ({}, '');
	while (time - $started < $seconds)
	{
		($samples, $page) = scrape($url);
		last if $condition->($samples);
		usleep(200_000);
	}
	return ($samples, $page, int((time - $started) * 1000));
}

sub stats
{
	my ($queue) = @_;
	my @row = split /\|/, $node->safe_psql('postgres', qq{
		SELECT visible, in_flight, delayed, puts, gets, deletes, poisoned
		FROM queue_stats('$queue')});
	my %s;
	@s{qw(visible in_flight delayed puts gets deletes poisoned)} = @row;
	return \%s;
}

# nobody reads queue_metrics yet: no census, by the worker or a sweep by hand
sleep(2);
$node->safe_psql('postgres', 'SELECT count(*) FROM queue_maintain()');
is($node->safe_psql('postgres', 'SELECT count(*) FROM queue_storage.census'), '0',
	'no census while nobody reads queue_metrics (worker and queue_maintain)');

my ($exporter_all, $url, $log) = start_exporter($user);

# the worker moves the failing message to fails-poison, and the first
# scrape starts the censuses
my $expected = stats('orders');
is($expected->{visible} . ' ' . $expected->{in_flight} . ' ' . $expected->{delayed}, '3 2 1',
	'orders holds 3 visible, 2 in flight, 1 delayed');
my ($samples, $page, $ms) = scrape_until($url, 30, sub {
	my ($s) = @_;
	return defined $s->{'queue_messages_visible{orders}'}
	  && $s->{'queue_messages_visible{orders}'} eq '3'
	  && ($s->{'queue_messages_visible{fails-poison}'} // '') eq '1';
});
ok(defined $samples->{'queue_messages_visible{orders}'}, "the exporter serves the queue metrics (after $ms ms)")
	or diag("exporter log:\n" . slurp_file($log) . "\npage:\n$page");

foreach my $pair ([ 'messages_visible', 'visible' ], [ 'messages_in_flight', 'in_flight' ],
	[ 'messages_delayed', 'delayed' ], [ 'puts_total', 'puts' ], [ 'gets_total', 'gets' ],
	[ 'deletes_total', 'deletes' ])
{
	is($samples->{"queue_$pair->[0]\{orders}"}, $expected->{ $pair->[1] },
		"queue_$pair->[0] of orders is queue_stats' $pair->[1]");
}
is($samples->{'queue_poisoned_total{fails}'}, '1', 'queue_poisoned_total of fails is 1');
is($samples->{'queue_messages_visible{fails-poison}'}, '1', 'the poison message is visible in fails-poison');
is($samples->{'queue_messages_visible{idle}'}, '0', 'an idle queue exports 0');
ok($samples->{'queue_oldest_message_age_seconds{orders}'} > 0,
	'queue_oldest_message_age_seconds of orders is above 0');
ok($samples->{'queue_census_age_seconds{orders}'} < 10, 'the census is less than 10 s old');
like($page, qr/^# TYPE queue_messages_visible gauge$/m, 'queue_messages_visible is a gauge');
like($page, qr/^# TYPE queue_oldest_message_age_seconds gauge$/m, 'queue_oldest_message_age_seconds is a gauge');
like($page, qr/^# TYPE queue_puts_total counter$/m, 'queue_puts_total is a counter');
like($page, qr/^# TYPE queue_poisoned_total counter$/m, 'queue_poisoned_total is a counter');
like($page, qr/^# HELP queue_messages_in_flight Messages handed out/m, 'the metrics are described');

# a put shows up within the census interval (1 s here) and a scrape
$node->safe_psql('postgres', q{SELECT count(*) FROM queue_put_batch('orders', ARRAY['6', '7', '8'])});
($samples, $page, $ms) = scrape_until($url, 15, sub {
	my ($s) = @_;
	return ($s->{'queue_messages_visible{orders}'} // '') eq '6';
});
is($samples->{'queue_messages_visible{orders}'}, '6', 'three puts: 6 visible');
is($samples->{'queue_puts_total{orders}'}, $expected->{puts} + 3, 'three puts: queue_puts_total up by 3');
note("measured: a put reached the exporter's page in $ms ms (queue.metrics_interval = 1 s)");

# counters never go back while messages flow and the worker writes the
# counts of shared memory to the table every second
my $flow = IPC::Run::start(
	[ 'psql', '-X', '-q', '-h', $node->host, '-p', $node->port, '-d', 'postgres', '-c', q{
		DO $$
		DECLARE m record;
		BEGIN
			FOR i IN 1..400 LOOP
				PERFORM queue_put('orders', 'flow ' || i);
				SELECT message_id, pop_receipt INTO m FROM queue_get('orders', 1, '1 hour');
				PERFORM queue_delete('orders', m.message_id, m.pop_receipt);
				COMMIT;
				PERFORM pg_sleep(0.01);
			END LOOP;
		END
		$$} ],
	'<', \undef, '>', \my $flow_out, '2>', \my $flow_err);
my %last;
my $backwards = 0;
my $scrapes = 0;
while ($flow->pumpable && $scrapes < 200)
{
	my ($s) = scrape($url);
	$scrapes++;
	foreach my $name (qw(queue_puts_total queue_gets_total queue_deletes_total))
	{
		my $value = $s->{"$name\{orders}"};
		next unless defined $value;
		$backwards++ if defined $last{$name} && $value < $last{$name};
		$last{$name} = $value;
	}
	$flow->pump_nb;
	usleep(50_000);
}
$flow->finish;
is($flow_err, '', 'the flow of messages ran') or diag($flow_err);
ok($scrapes >= 10, "$scrapes scrapes during the flow");
is($backwards, 0, 'no counter went back between two scrapes');
($samples) = scrape_until($url, 10, sub { ($_[0]->{'queue_deletes_total{orders}'} // 0) >= 400 });
is($samples->{'queue_deletes_total{orders}'}, 400, 'queue_deletes_total counted the 400 deletes');

# a role sees what it is granted: monitor holds read on orders only
my ($exporter_monitor, $monitor_url, $monitor_log) = start_exporter('monitor');
($samples, $page) = scrape_until($monitor_url, 20, sub { defined $_[0]->{'queue_puts_total{orders}'} });
ok(defined $samples->{'queue_puts_total{orders}'}, 'the role monitor exports orders')
	or diag(slurp_file($monitor_log));
is(join(',', sort grep { !/\{orders\}$/ } keys %$samples), '', 'and no other queue');

$exporter_monitor->kill_kill;
$exporter_all->kill_kill;
$node->stop;
done_testing();
