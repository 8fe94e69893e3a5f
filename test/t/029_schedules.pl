# Schedules and the background worker: a schedule due every minute puts
# exactly one message per due time, checked over four due times in a row,
# across
#  1. an immediate stop of the primary (a crash) and its restart;
#  2. a clean restart, then a due time that finds the worker sweeping
#     10,000 expired messages;
#  3. a failover: the primary stops ('immediate') and its synchronous
#     standby is promoted, whose worker goes on;
# and due times missed while no worker ran give one message, not one each.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep);

my $settings = qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
queue.maintenance_batch_size = 100
};

my $primary = PostgreSQL::Test::Cluster->new('schedules_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', $settings);
$primary->start;
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('schedules_standby');
$standby->init_from_backup($primary, 'base');
$standby->append_conf('postgresql.conf', "
primary_conninfo = '" . $primary->connstr . " application_name=standby'
synchronous_standby_names = ''
");
$standby->set_standby_mode;
$standby->start;
$primary->append_conf('postgresql.conf', "synchronous_standby_names = 'standby'");
$primary->reload;
ok($primary->poll_query_until('postgres', q{
	SELECT sync_state = 'sync' AND state = 'streaming' FROM pg_stat_replication}),
	'the standby is synchronous');

$primary->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('ticks', max_dequeue_count => NULL);
	SELECT queue_create('filler', max_dequeue_count => NULL);
	SELECT queue_schedule('every-minute', 'ticks', '* * * * *', 'tick', '{"from": "test"}')});

# the messages of the schedule: "count|distinct due times|minutes from the
# first due time to the last, plus one"
my $ticks_sql = q{
	SELECT count(*) || '|' || count(DISTINCT headers ->> 'scheduled_for') || '|'
		|| coalesce(extract(epoch FROM max((headers ->> 'scheduled_for')::timestamptz)
			- min((headers ->> 'scheduled_for')::timestamptz))::bigint / 60 + 1, 0)
	FROM queue_peek('ticks', 100)};

sub wait_for_ticks
{
	my ($node, $count, $what) = @_;
	ok($node->poll_query_until('postgres',
		qq{SELECT count(*) >= $count FROM queue_peek('ticks', 100)}),
		"$what: due time $count gave its message");
	is($node->safe_psql('postgres', $ticks_sql), "$count|$count|$count",
		"$what: $count messages, for $count due times a minute apart, none twice");
	return;
}

wait_for_ticks($primary, 1, 'first');
is($primary->safe_psql('postgres', q{
	SELECT headers ->> 'schedule' || ' ' || (headers ->> 'from') || ' ' || body
		|| ' ' || ((headers ->> 'scheduled_for')::timestamptz = (SELECT last_at FROM queue_schedules()))
	FROM queue_peek('ticks')}),
	'every-minute test tick true', "the message: the schedule's body and headers, its name and due time");

# 1. a crash right after a due time: the message and the move of next_at
# came back together, or neither did
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $ticks_sql), '1|1|1', 'after the crash: still one message');
wait_for_ticks($primary, 2, 'after the crash');

# 2. a clean restart; then 10,000 messages expire at the next due time:
# the worker sweeps them (100 a transaction) when the schedule is due
$primary->restart;
is($primary->safe_psql('postgres', $ticks_sql), '2|2|2', 'after the restart: still two messages');
my $to_due = $primary->safe_psql('postgres', q{
	SELECT extract(epoch FROM date_trunc('minute', now()) + interval '1 minute' - now())});
my $ttl = $to_due > 2 ? $to_due : $to_due + 60;
$primary->safe_psql('postgres', qq{
	SELECT count(*) FROM generate_series(1, 10) g,
		LATERAL queue_put_batch('filler', array_fill('x' || g, ARRAY[1000]), ttl => '$ttl s')});
wait_for_ticks($primary, 3, 'while sweeping');
# (queue_stats' total leaves out expired messages the worker has not
# deleted yet: its counter of expired messages tells the sweep's progress)
ok($primary->poll_query_until('postgres', q{SELECT expired >= 10000 FROM queue_stats('filler')}),
	'the worker swept the 10,000 expired messages');
is($primary->safe_psql('postgres', q{
	SELECT s.expired || ' ' || (SELECT count(*) FROM queue_storage.messages m
		JOIN queue_storage.queues q USING (queue_id) WHERE q.name = 'filler')
	FROM queue_stats('filler') s}),
	'10000 0', '... each counted once as expired, and none left in the table');

# 3. failover: the standby, synchronous, has every commit; promoted, its
# worker puts the next due time's message
ok($standby->poll_query_until('postgres', q{SELECT count(*) = 3 FROM queue_peek('ticks', 100)}),
	'the standby has the three messages');
$primary->stop('immediate');
$standby->promote;
wait_for_ticks($standby, 4, 'after the failover');

# due times missed while no worker ran: the worker off, the schedule as a
# worker finds it three due times later; on again, one message
$standby->safe_psql('postgres', q{ALTER SYSTEM SET queue.enable_worker = off; SELECT pg_reload_conf()});
ok($standby->poll_query_until('postgres', q{
	SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'queue worker'}),
	'the worker is off');
my $last_id = $standby->safe_psql('postgres', q{SELECT max(message_id) FROM queue_peek('ticks', 100)});
my $missed_from = $standby->safe_psql('postgres', q{
	UPDATE queue_storage.schedules SET next_at = date_trunc('minute', now()) - interval '3 minutes'
	RETURNING next_at});
$standby->safe_psql('postgres', q{ALTER SYSTEM RESET queue.enable_worker; SELECT pg_reload_conf()});
ok($standby->poll_query_until('postgres', qq{
	SELECT count(*) > 0 FROM queue_peek('ticks', 100) WHERE message_id > $last_id}),
	'the worker back: a message for the missed due times');
sleep(1);
# (a due time that comes meanwhile gives a message of its own, later)
is($standby->safe_psql('postgres', qq{
	SELECT count(*) FILTER (WHERE scheduled_for = '$missed_from') || ' '
		|| count(*) FILTER (WHERE scheduled_for > '$missed_from'
			AND scheduled_for <= timestamptz '$missed_from' + interval '3 minutes')
	FROM (SELECT (headers ->> 'scheduled_for')::timestamptz AS scheduled_for
		FROM queue_peek('ticks', 100) WHERE message_id > $last_id) m}),
	'1 0', 'one message, for the first missed due time, none for the others');
is($standby->safe_psql('postgres', q{SELECT next_at > now() AND last_at < now() FROM queue_schedules()}),
	't', 'next_at moved past now');

$standby->stop;
done_testing();
