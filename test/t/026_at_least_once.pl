# queue.durability = at_least_once: a transaction that only leased or
# acknowledged messages commits without waiting for its WAL flush, and
# every other write stays durable.  After stop('immediate') a put made in
# that mode is there, a caller's own row written beside a get is there,
# and an unflushed transaction of leases and acknowledgements is undone as
# a whole: its deleted message is handed out again, its claimed message
# was never claimed, and the durable counters say the same.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('at_least_once');
$node->init;
# The WAL writer flushes an asynchronous commit within 3 wal_writer_delay;
# at its longest, what this test commits is not flushed by it in time.
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
wal_writer_delay = 10s
autovacuum = off
checkpoint_timeout = 1h
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('alo', visibility_timeout => '1 hour', max_dequeue_count => NULL);
	SELECT queue_create('warm-up', visibility_timeout => '1 hour', max_dequeue_count => NULL);
	SELECT count(*) FROM queue_put('warm-up', 'w');
	CREATE TABLE caller_rows (x integer);
	SELECT count(*) FROM queue_put_batch('alo', ARRAY['p1', 'p2', 'p3', 'p4']);
	CHECKPOINT;
});

my $flushed = q{SELECT pg_current_wal_flush_lsn() >= pg_current_wal_insert_lsn()};
my @out = split /\n/, $node->safe_psql('postgres', qq{
SET queue.durability = at_least_once;
SET queue.durable_counters = on;
SELECT count(*) FROM queue_put('alo', 'p5');
$flushed;
-- WAL written before a call (the hint bits a first look at the catalog
-- sets after the checkpoint, with data checksums on from PostgreSQL 18's
-- initdb) keeps a transaction durable: a get on another queue looks first
SELECT count(*) AS warm FROM queue_get('warm-up') \\gset
SELECT message_id AS a_id, pop_receipt AS a_r FROM queue_get('alo', 1) \\gset
$flushed;
SELECT count(*) FROM (SELECT queue_delete('alo', :a_id, :'a_r')) d;
SELECT message_id AS b_id, pop_receipt AS b_r FROM queue_get('alo', 1) \\gset
BEGIN;
SELECT message_id AS c_id, pop_receipt AS c_r
	FROM queue_delete_and_get('alo', ARRAY[:b_id]::bigint[], ARRAY[:'b_r']::uuid[], 1)
	WHERE status = 'claimed' \\gset
INSERT INTO caller_rows VALUES (1);
COMMIT;
$flushed;
SELECT message_id AS d_id
	FROM queue_delete_and_get('alo', ARRAY[:c_id]::bigint[], ARRAY[:'c_r']::uuid[], 1)
	WHERE status = 'claimed' \\gset
$flushed;
SELECT :c_id || ' ' || :d_id || ' ' || :'c_r';
});
is($out[0], '1', 'a put in at_least_once mode');
is($out[1], 't', '... is flushed at its commit');
is($out[2], 'f', 'a get alone is not flushed at its commit');
is($out[3], '1', 'a delete alone');
is($out[4], 't', 'a delete_and_get beside a row of the caller is flushed at its commit');
is($out[5], 'f', 'a delete_and_get alone is not flushed at its commit');
my ($c_id, $d_id, $c_r) = split / /, $out[6];

$node->stop('immediate');
$node->start;

my $bodies = $node->safe_psql('postgres',
	q{SELECT string_agg(body, ' ' ORDER BY body) FROM queue_storage.messages});
like($bodies, qr/\bp5\b/, 'the put made in at_least_once mode survives the crash');
unlike($bodies, qr/\bp1\b|\bp2\b/,
	'acknowledgements flushed by a later durable commit stay acknowledged');
is($node->safe_psql('postgres', q{SELECT count(*) FROM caller_rows}), '1',
	'the row the caller wrote beside a delete_and_get survives');

# The last transaction deleted p3 and claimed p4; it was not flushed when
# the server stopped, so both are undone, or (had the WAL writer flushed
# it meanwhile) both kept: never one without the other.
my $state = $node->safe_psql('postgres', qq{
	SELECT (SELECT count(*) FROM queue_storage.messages WHERE message_id = $c_id) || ' ' ||
	       (SELECT dequeue_count FROM queue_storage.messages WHERE message_id = $d_id)});
ok($state eq '1 0' || $state eq '0 1',
	"the unflushed delete and claim are undone or kept together ($state)");
note($state eq '1 0' ? 'the last transaction was undone by the crash'
	: 'the WAL writer flushed the last transaction before the crash');
my $lost = $state eq '1 0';
is($node->safe_psql('postgres', q{SELECT deletes || ' ' || gets FROM queue_stats('alo')}),
	$lost ? '2 3' : '3 4', 'the durable counters count what the messages show');
if ($lost)
{
	is($node->safe_psql('postgres', qq{
		SELECT string_agg(message_id::text, ' ' ORDER BY message_id) FROM queue_get('alo', 10)}),
		"$d_id " . ($d_id + 1), 'the message whose claim was lost is handed out again');
	$node->safe_psql('postgres', qq{SELECT queue_delete('alo', $c_id, '$c_r')});
	pass('the lost acknowledgement is made again with the same pop receipt');
}
else
{
	pass('nothing to hand out again: the claim was kept');
	pass('nothing to acknowledge again: the acknowledgement was kept');
}

$node->stop;
done_testing();
