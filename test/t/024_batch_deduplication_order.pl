# Two sessions putting batches with the same deduplication ids, each batch
# in an order of its own, never deadlock: a batch locks its ids in one
# order (the order of their keys) before it reserves them in its own.
# Every id is stored once, and a repeat within one batch returns the first
# message's receipt, pop receipt included.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $rounds = 150;
my $node = PostgreSQL::Test::Cluster->new('batch_dedup');
$node->init;
# a deadlock is found after deadlock_timeout: found at once, counted at once
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.enable_worker = off
deadlock_timeout = 10ms
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	SELECT queue_create('dedup-order', deduplication_window => '1 hour');
	CREATE TABLE outcomes (session text, deadlocks integer);
	-- rounds of one batch each, a transaction each: twenty ids in a random order
	CREATE PROCEDURE rounds(who text, n integer) LANGUAGE plpgsql AS $$
	DECLARE
		deadlocks integer := 0;
	BEGIN
		FOR i IN 1 .. n LOOP
			BEGIN
				PERFORM count(*) FROM queue_put_batch('dedup-order',
					array_fill('body'::text, ARRAY[20]),
					deduplication_ids => (SELECT array_agg('id-' || k ORDER BY random())
										  FROM generate_series(1, 20) k));
			EXCEPTION WHEN deadlock_detected THEN
				deadlocks := deadlocks + 1;
			END;
			COMMIT;
		END LOOP;
		INSERT INTO outcomes VALUES (who, deadlocks);
	END
	$$;
});

my @sessions;
for my $who ('one', 'two')
{
	my ($out, $err) = ('', '');
	push @sessions, [ $who, \$err, IPC::Run::start(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'),
		  '-c', "CALL rounds('$who', $rounds)" ],
		'>', \$out, '2>', \$err) ];
}
for my $session (@sessions)
{
	my ($who, $err, $run) = @$session;
	ok($run->finish, "session $who ran its $rounds rounds") or diag($$err);
}
is($node->safe_psql('postgres', q{SELECT coalesce(sum(deadlocks), -1) FROM outcomes}), '0',
	"no deadlock in 2 x $rounds rounds of batches with the same ids in random orders");
note('measured: deadlocks ' . $node->safe_psql('postgres',
	q{SELECT string_agg(session || ' ' || deadlocks, ', ') FROM outcomes}));
is($node->safe_psql('postgres', q{
	SELECT count(*) || ' ' || count(DISTINCT message_id) FROM queue_peek('dedup-order', 100)}),
	'20 20', 'the twenty ids stored one message each');

# A repeat inside one batch: the first message's receipt, pop receipt too.
is($node->safe_psql('postgres', q{
	SELECT count(DISTINCT message_id) || ' ' || count(DISTINCT pop_receipt) || ' '
		|| count(pop_receipt)
	FROM queue_put_batch('dedup-order', ARRAY['a', 'b', 'c'],
						 deduplication_ids => ARRAY['again', 'again', 'other'])}),
	'2 2 3', 'a repeat within a batch returns the first message\'s id and pop receipt');
is($node->safe_psql('postgres', q{
	SELECT string_agg(body, ', ' ORDER BY body) FROM queue_peek('dedup-order', 100)
	WHERE body IN ('a', 'b', 'c')}),
	'a, c', '... and is not stored');

done_testing();
