# A waiting get holds no lock while it sleeps: each look runs in a
# subtransaction of its own.  When a look fails (here: its queue was
# dropped while it waited), the error must leave the caller's session as
# any error does: the statement fails with the error's SQLSTATE, the session
# goes on, and a PL/pgSQL exception block around the call catches it and
# runs as the caller, not as the owner of the storage.  And a wait that an
# error cut short inside a savepoint gives up its place among the waiting
# getters at once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib "$FindBin::Bin/../lib";
use QueueNode;

my $node = getters_node('wait_errors');
$node->safe_psql('postgres', q{
	CREATE ROLE consumer LOGIN;
	SELECT queue_create('gone-plain');
	SELECT queue_create('gone-caught');
	SELECT queue_grant('gone-plain', 'consumer', 'process');
	SELECT queue_grant('gone-caught', 'consumer', 'process');
});
my $connstr = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres user=consumer';

# the drop does not wait for the waiting get, which then fails with 42704;
# the getter's session answers the next statements normally
my $plain = $node->safe_psql('postgres', qq{
	SELECT dblink_connect('getter', '$connstr');
	SELECT dblink_send_query('getter', \$q\$SELECT * FROM queue_get('gone-plain', 1, NULL, '10 s')\$q\$);
	SELECT pg_sleep(0.3);
	SELECT 'drop took less than 5 s: ' || (clock_timestamp() - t < '5 s')
	FROM (SELECT clock_timestamp() AS t) s, LATERAL (SELECT queue_drop('gone-plain')) d;
	SELECT 'rows: ' || count(*) FROM dblink_get_result('getter', false) AS t(x text);
	SELECT 'error: ' || dblink_error_message('getter');
	SELECT count(*) FROM dblink_get_result('getter', false) AS t(x text);	-- the end of it
	SELECT 'then: ' || u || ' ' || n FROM dblink('getter', 'SELECT current_user, 1 + 1')
		AS t(u name, n int);
	SELECT 'in a transaction: ' || n FROM dblink('getter', 'BEGIN; SELECT 2; ') AS t(n int);
	SELECT dblink_exec('getter', 'ROLLBACK');
	SELECT 'after rollback: ' || n FROM dblink('getter', 'SELECT 3') AS t(n int);
});
like($plain, qr/drop took less than 5 s: true/, 'a drop does not wait for a get waiting on the queue');
like($plain, qr/error: .*queue "gone-plain" does not exist/, 'the waiting get fails with the error of its next look');
like($plain, qr/then: consumer 2/, 'the session goes on, as the caller');
like($plain, qr/in a transaction: 2/, 'a transaction can begin after it');
like($plain, qr/after rollback: 3/, 'and roll back');

# the same inside a PL/pgSQL exception block: caught there, as the caller
my $caught = $node->safe_psql('postgres', qq{
	SELECT dblink_connect('getter', '$connstr');
	SELECT dblink_send_query('getter', \$q\$
		DO \$\$BEGIN
			PERFORM * FROM queue_get('gone-caught', 1, NULL, '10 s');
		EXCEPTION WHEN undefined_object THEN
			PERFORM set_config('test.caught_as', current_user || ' ' || session_user, false);
		END\$\$\$q\$);
	SELECT pg_sleep(0.3);
	SELECT queue_drop('gone-caught');
	SELECT 'rows: ' || count(*) FROM dblink_get_result('getter', false) AS t(x text);
	SELECT count(*) FROM dblink_get_result('getter', false) AS t(x text);
	SELECT 'caught as: ' || c || ', now ' || u FROM dblink('getter',
		'SELECT current_setting(''test.caught_as''), current_user') AS t(c text, u name);
	SELECT dblink_disconnect('getter');
});
like($caught, qr/caught as: consumer consumer, now consumer/,
	'an exception block catches the error and runs as the caller');

# A wait cut short by an error that a savepoint catches ends there, not when
# the transaction does: "other" waits on the queue first; "cut" begins
# waiting after it (so it would be the one that looks for delayed messages),
# is cancelled by its statement_timeout inside a savepoint, and stays idle
# in its transaction.  A message delayed by 300 ms is then found by "other"
# soon after it becomes visible, not at the end of other's 8 s wait.
$node->safe_psql('postgres', q{SELECT queue_create('cut-short')});
my $superuser = 'host=' . $node->host . ' port=' . $node->port . ' dbname=postgres';
my $found_after = $node->safe_psql('postgres', qq{
CREATE TABLE found (ms float8);
DO \$\$
DECLARE
	put_at timestamptz;
BEGIN
	PERFORM dblink_connect('other', '$superuser');
	PERFORM dblink_connect('cut', '$superuser');
	PERFORM dblink_send_query('other',
		'SELECT message_id FROM queue_get(''cut-short'', 1, NULL, ''8 s'')');
	PERFORM pg_sleep(0.3);
	PERFORM dblink_exec('cut', 'BEGIN');
	PERFORM dblink_exec('cut', 'SAVEPOINT s');
	PERFORM dblink_exec('cut', 'SET LOCAL statement_timeout = ''300ms''');
	-- canceled by its statement timeout (fail_on_error off: a notice)
	PERFORM * FROM dblink('cut',
		'SELECT message_id FROM queue_get(''cut-short'', 1, NULL, ''5 s'')', false)
		AS t(id bigint);
	PERFORM dblink_exec('cut', 'ROLLBACK TO SAVEPOINT s');
	put_at := clock_timestamp();
	PERFORM queue_put('cut-short', 'later', visibility_timeout => '300 ms');
	COMMIT;
	WHILE dblink_is_busy('other') = 1 AND clock_timestamp() < put_at + interval '10 s' LOOP
		PERFORM pg_sleep(0.01);
	END LOOP;
	INSERT INTO found VALUES (extract(epoch FROM clock_timestamp() - put_at) * 1000);
	PERFORM dblink_exec('cut', 'ROLLBACK');
	PERFORM dblink_disconnect('cut');
	PERFORM dblink_disconnect('other');
END
\$\$;
SELECT round(ms) FROM found;
});
cmp_ok($found_after, '<', 2000,
	'a wait a savepoint cut short hands on its looking: a delayed message is found soon after its delay');
note("measured: the delayed message was returned $found_after ms after its put");

$node->stop;
done_testing();
