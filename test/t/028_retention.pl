# The background worker's removal of retained messages.  A queue keeps
# what its consumers deleted for its retention; once that has passed, the
# worker removes it in batches of queue.maintenance_batch_size, one
# transaction each, never before the retention is up, and never a live
# message or one another queue still keeps.  A retention set to 0 has
# what was kept removed at the next sweep.  A trigger on the table of
# retained messages records each removing statement: its transaction, how
# many rows it removed, and how long after their delete.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $batch = 100;
my $node = PostgreSQL::Test::Cluster->new('retention');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'queue'
queue.maintenance_interval = 200ms
queue.maintenance_batch_size = $batch
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION queue;
	CREATE TABLE removals (xid xid8, removed bigint, youngest interval);
	-- the extension's statements run with search_path pg_catalog
	CREATE FUNCTION note_removal() RETURNS trigger LANGUAGE plpgsql
	SET search_path = public, pg_catalog AS $$
	BEGIN
		INSERT INTO removals
			SELECT pg_current_xact_id(), count(*), clock_timestamp() - max(deleted_at)
			FROM gone HAVING count(*) > 0;
		RETURN NULL;
	END $$;
	CREATE TRIGGER note_removal AFTER DELETE ON queue_storage.retained
		REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_removal();
	SELECT queue_create('short', retention => '3 seconds');
	SELECT queue_create('long', retention => '1 day');
});

# 550 deleted from short, 10 from long; 5 live messages stay in short
$node->safe_psql('postgres', q{
	SELECT count(*) FROM queue_put_batch('short', array_fill('done'::text, ARRAY[550]));
	SELECT count(queue_delete('short', message_id, pop_receipt)) FROM queue_get('short', 550);
	SELECT count(*) FROM queue_put_batch('short', array_fill('live'::text, ARRAY[5]));
	SELECT count(*) FROM queue_put_batch('long', array_fill('kept'::text, ARRAY[10]));
	SELECT count(queue_delete('long', message_id, pop_receipt)) FROM queue_get('long', 10);
});
is($node->safe_psql('postgres', q{
	SELECT count(*) FILTER (WHERE state = 'deleted') || ' ' || count(*) FILTER (WHERE state = 'visible')
	FROM queue_inspect('short', 1000)}),
	'550 5', 'short keeps the 550 messages deleted from it, beside its 5 live ones');

ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM queue_inspect('short', 1000) WHERE state = 'deleted'}),
	'the worker removes what short kept once its retention is up');
my ($statements, $transactions, $largest, $total, $youngest) = split /\|/, $node->safe_psql('postgres', q{
	SELECT count(*), count(DISTINCT xid), max(removed), sum(removed),
		extract(epoch FROM min(youngest)) >= 3
	FROM removals});
is($total, 550, 'the removals took 550 messages');
ok($largest <= $batch, "no removal took more than a batch ($largest of at most $batch)");
ok($statements >= 6, "the removal ran in batches ($statements)");
is($transactions, $statements, 'each batch in a transaction of its own');
is($youngest, 't', 'no message was removed before its retention was up');
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_inspect('short', 1000) WHERE state = 'visible'}),
	'5', "short's live messages stay");
is($node->safe_psql('postgres', q{SELECT count(*) FROM queue_inspect('long') WHERE state = 'deleted'}),
	'10', 'long keeps its deleted messages: its retention is a day');
like(slurp_file($node->logfile),
	qr/queue worker: database "postgres": \d+ expired messages deleted, \d+ poison messages moved, \d+ leases of ended sessions released, [1-9]\d* retained messages removed/,
	'the worker logged the removals');

# a retention of 0 keeps no more: what long kept goes at the next sweep
$node->safe_psql('postgres', q{SELECT queue_alter('long', retention => '0')});
ok($node->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM queue_inspect('long') WHERE state = 'deleted'}),
	'after retention => 0 the worker removes what long kept');
is($node->safe_psql('postgres', q{SELECT sum(removed) FROM removals}), '560',
	'the worker removed the 10 of long too, and nothing else');

$node->stop;
done_testing();
