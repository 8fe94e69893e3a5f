# Where claims start walking the claim index (src/shmem/claim_starts.c).  A get
# after many messages were claimed and deleted reads a few index pages, not
# every page of dead entries left below the first live message; and with
# producers, consumers and releases racing, no visible message is ever
# passed over: right after the race, gets in one transaction take every
# message the queue holds, and queue_peek (whose SQL walks from the bottom)
# sees none left.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('claim_start');
$node->init;
# no vacuum of any kind: the dead entries stay in the index
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('walked', max_dequeue_count => NULL);
	SELECT queue_create('raced', max_dequeue_count => NULL);
});

# 20,000 messages, then 200 transactions that each get 100 and delete them
$node->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 200) AS g(i),
		LATERAL queue_put_batch('walked', array_fill('m' || i, ARRAY[100]))});
my $drain = q{WITH g AS (SELECT array_agg(message_id) AS ids, array_agg(pop_receipt) AS r
	FROM queue_get('walked', 100, '1 hour'))
	SELECT count(*) FROM g, queue_delete_batch('walked', g.ids, g.r) WHERE status = 'deleted';};
my @deleted = split /\n/, $node->safe_psql('postgres', join("\n", ($drain) x 200));
is(scalar(grep { $_ == 100 } @deleted), 200, 'every get of the drain took 100 messages and deleted them');

# The blocks one get of the empty queue reads, the fewest of five in one
# session after a first get there (which prepares the extension's
# statements).  The start is trusted for a second after a walk from the
# bottom, so at most one of the five walks from the bottom.
my $measure = q{DO $$ DECLARE p json; BEGIN
		EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM queue_get(''walked'', 1)' INTO p;
		INSERT INTO plans VALUES ((p->0->'Plan'->>'Shared Hit Blocks')::int
			+ (p->0->'Plan'->>'Shared Read Blocks')::int);
	END $$;};
my @blocks = split /\n/, $node->safe_psql('postgres', join("\n",
	'CREATE TEMP TABLE plans (blocks int);',
	q{DO $$BEGIN PERFORM count(*) FROM queue_get('walked', 1); END $$;},
	($measure) x 5,
	'SELECT blocks FROM plans;'));
my ($fewest) = sort { $a <=> $b } @blocks;
my $index_pages = $node->safe_psql('postgres',
	q{SELECT pg_relation_size('queue_storage.messages_claim') / 8192});
cmp_ok($index_pages, '>', 60, "the claim index holds the dead entries ($index_pages pages)");
diag("measured: a get of the empty queue over $index_pages pages of dead claim-index entries read @blocks blocks");
cmp_ok($fewest, '<', 20, "a get of the empty queue reads $fewest blocks (of @blocks), not the dead pages");

# The race: 8 clients for 8 s, each putting 10, getting 10 with a 1 ms lease
# (visible again at once, while other claims move the start), releasing 3
# with queue_update(..., '0') and deleting what it still holds (if its get
# found any: a delete batch of none is refused).
my $script = $node->basedir . '/race.sql';
open my $fh, '>', $script or die $!;
print $fh q{SELECT count(*) FROM queue_put_batch('raced', array_fill('m'::text, ARRAY[10]));
SELECT count(*) AS n, coalesce(array_agg(message_id), '{}') AS ids, coalesce(array_agg(pop_receipt), '{}') AS rs FROM queue_get('raced', 10, '1 millisecond') \gset
SELECT count(*) FROM queue_get('raced', 3, '1 second') g, LATERAL queue_update('raced', g.message_id, g.pop_receipt, '0') u;
\if :n > 0
SELECT count(*) FROM queue_delete_batch('raced', :ids::bigint[], :rs::uuid[]);
\endif
};
close $fh;
my ($stdout, $stderr);
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-M', 'prepared', '-c', '8', '-j', '2', '-T', '8', '-f', $script,
	  '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$stdout, '2>', \$stderr);
ok($ok, 'the race ran without an error') or diag($stderr);
like($stdout, qr/number of failed transactions: 0/, '... every transaction of it succeeded');

my ($taken, $left, $stored) = split /\|/, $node->safe_psql('postgres', q{
	BEGIN;
	CREATE TEMP TABLE taken (message_id bigint);
	DO $$BEGIN
		LOOP
			INSERT INTO taken SELECT message_id FROM queue_get('raced', 1000, '1 hour');
			EXIT WHEN NOT FOUND;
		END LOOP;
	END $$;
	SELECT (SELECT count(*) FROM taken),
		(SELECT count(*) FROM queue_peek('raced', 1000)),
		(SELECT count(*) FROM queue_storage.messages m JOIN queue_storage.queues q USING (queue_id)
		 WHERE q.name = 'raced');
	COMMIT;});
diag("measured: after the race, $taken messages left, $left seen by peek and not taken, $stored in the table");
is($left, 0, "after the race, gets take the $taken messages left and leave none that peek sees");
is($taken, $stored, '... which are all the messages the queue holds');

$node->stop;
done_testing();
