# A waiting queue_get does not hold back vacuum: while `SELECT * FROM
# queue_get(..., wait => ...)` sleeps, its backend has no xmin, and rows
# deleted after the get started are removed by a VACUUM that runs during
# the wait.  Where the snapshot may still be read after the call returns (an
# aggregate over the result, REPEATABLE READ, an open cursor), the get keeps
# it: those shapes are checked too, so the test fails if the release is
# either missing or too eager.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

my $node = getters_node('wait_snapshot', "autovacuum = off\n");
$node->safe_psql('postgres', q{
	CREATE EXTENSION pgstattuple;
	SELECT queue_create('snap');
	CREATE TABLE churn (n int);
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';

# Starts a getter on its own connection with $get (after the statements in
# @setup; $columns describes $get's result for dblink), deletes 1000 rows while it waits, vacuums them, looks at the
# getter's xmin, then puts a message and collects what the getter returned.
# Returns (getter has no xmin, dead rows left after the vacuum, rows got).
sub waiting_get
{
	my ($get, $columns, @setup) = @_;
	my $setup = join '', map { "SELECT dblink_exec('getter', \$q\$$_\$q\$) \\gset\n" } @setup;
	# five looks at the getter's xmin, 50 ms apart (each statement reads
	# pg_stat_activity afresh); a look may fall on one of its looks at the
	# queue, when it holds a snapshot for a moment
	my $samples = join '', map { qq{SELECT 'xmin ' || (backend_xmin IS NULL) FROM pg_stat_activity
		 WHERE query LIKE '%queue_get(''snap''%' AND pid <> pg_backend_pid();
		SELECT pg_sleep(0.05) \\gset\n} } 1 .. 5;
	my $out = $node->safe_psql('postgres', qq{
		VACUUM churn;
		INSERT INTO churn SELECT generate_series(1, 1000);
		SELECT dblink_connect('getter', '$connstr') \\gset
		$setup
		SELECT dblink_send_query('getter', \$q\$$get\$q\$) \\gset
		SELECT pg_sleep(0.3) \\gset
		DELETE FROM churn;
		VACUUM churn;
		$samples
		SELECT dead_tuple_count FROM pgstattuple('churn');
		SELECT queue_put('snap', 'hello') \\gset
		SELECT count(*) FROM dblink_get_result('getter') AS t($columns);
		SELECT dblink_disconnect('getter') \\gset
	});
	my @lines = split /\n/, $out;
	my $free = grep { $_ eq 'xmin true' } @lines;
	my @rest = grep { !/^xmin / } @lines;
	# no xmin: 't' when at least 4 looks of 5 saw none, 'f' when none did
	return ($free >= 4 ? 't' : $free == 0 ? 'f' : "$free of 5", @rest);
}

my $all = 'message_id bigint, body text, headers jsonb, dequeue_count int, '
	. 'inserted_at timestamptz, expires_at timestamptz, visible_at timestamptz, pop_receipt uuid, group_id text, priority integer, '
	. 'first_dequeued_at timestamptz';
my ($no_xmin, $dead, $got) = waiting_get(q{SELECT * FROM queue_get('snap', 1, NULL, '5 s')}, $all);
is($no_xmin, 't', 'SELECT * FROM queue_get(wait): no xmin while waiting');
is($dead, '0', 'a VACUUM during the wait removes rows deleted after the get began');
is($got, '1', 'the waiting get still returns the message put during the wait');
$node->safe_psql('postgres', q{SELECT queue_clear('snap')});

($no_xmin, $dead, $got) = waiting_get(
	q{SELECT message_id, body FROM queue_get('snap', 1, NULL, '5 s')}, 'id bigint, body text');
is($no_xmin, 't', 'a list of its columns: no xmin while waiting');
$node->safe_psql('postgres', q{SELECT queue_clear('snap')});

# Shapes where the statement's snapshot could still be read: kept.
($no_xmin, $dead, $got) = waiting_get(
	q{SELECT count(*) FROM queue_get('snap', 1, NULL, '5 s')}, 'n bigint');
is($no_xmin, 'f', 'an aggregate over the get keeps the snapshot');
is($dead, '1000', 'and vacuum keeps the rows it may see');
is($got, '1', 'the aggregate over the get returns its row');
$node->safe_psql('postgres', q{SELECT queue_clear('snap')});

($no_xmin, $dead, $got) = waiting_get(
	q{SELECT * FROM queue_get('snap', 1, NULL, '5 s')}, $all,
	q{SET default_transaction_isolation = 'repeatable read'});
is($no_xmin, 'f', 'REPEATABLE READ keeps the snapshot');
is($dead, '1000', 'and vacuum keeps the rows it may see');
$node->safe_psql('postgres', q{SELECT queue_clear('snap')});

($no_xmin, $dead, $got) = waiting_get(
	q{SELECT * FROM queue_get('snap', 1, NULL, '5 s')}, $all,
	q{BEGIN}, q{DECLARE early CURSOR FOR SELECT * FROM churn});
is($no_xmin, 'f', 'an open cursor keeps the snapshot');
is($dead, '1000', 'and vacuum keeps the rows the cursor may read');
$node->safe_psql('postgres', q{SELECT queue_clear('snap'); VACUUM churn});

# A DO block's loop over the get: the block's own snapshot, older, stays in
# use around the loop's statement
($no_xmin, $dead, $got) = waiting_get(
	q{DO $d$ DECLARE r record; BEGIN
		FOR r IN SELECT * FROM queue_get('snap', 1, NULL, '5 s') LOOP END LOOP;
	END $d$}, 'status text');
is($no_xmin, 'f', 'a get looped over in a DO block keeps the snapshot');
is($dead, '1000', 'and vacuum keeps the rows the block may see');
$node->safe_psql('postgres', q{SELECT queue_clear('snap'); VACUUM churn});

# After the wait the backend's xmin is back to normal: a later statement in
# the same transaction sees what it must.
my $after = $node->safe_psql('postgres', q{
	BEGIN;
	SELECT count(*) FROM queue_get('snap', 1, NULL, '200 ms') \gset
	SELECT backend_xmin IS NOT NULL FROM pg_stat_activity WHERE pid = pg_backend_pid();
	COMMIT;
});
is($after, 't', 'the next statement of the transaction has an xmin again');

done_testing();
