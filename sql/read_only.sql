-- Read-only transactions: every call that changes a queue is refused with
-- 25006 before it does anything (a get before it would wait), and the
-- calls that only read still work.  The messages table is written through
-- the table access method, which does not check read-only transactions
-- itself: without the check a get leased and a delete deleted here.

SELECT queue_create('ro-q', max_dequeue_count => 3);
SELECT count(*) FROM queue_put_batch('ro-q', ARRAY['a', 'b', 'c']);
-- a lease, whose receipt is valid for the deletes and updates below
CREATE TEMP TABLE ro_lease AS
	SELECT message_id, pop_receipt FROM queue_get('ro-q', 1, '1 hour');

CREATE TEMP TABLE ro_calls (call text);
INSERT INTO ro_calls VALUES
	($$SELECT queue_put('ro-q', 'x')$$),
	($$SELECT queue_put_batch('ro-q', ARRAY['x'])$$),
	($$SELECT queue_get('ro-q')$$),
	($$SELECT queue_get('ro-q', wait => '10 seconds')$$),
	($$SELECT queue_update('ro-q', message_id, pop_receipt, '0 seconds') FROM ro_lease$$),
	($$SELECT queue_update_batch('ro-q', ARRAY[message_id], ARRAY[pop_receipt], '0 seconds') FROM ro_lease$$),
	($$SELECT queue_delete('ro-q', message_id, pop_receipt) FROM ro_lease$$),
	($$SELECT queue_delete_batch('ro-q', ARRAY[message_id], ARRAY[pop_receipt]) FROM ro_lease$$),
	($$SELECT queue_delete_and_get('ro-q', ARRAY[message_id], ARRAY[pop_receipt]) FROM ro_lease$$),
	($$SELECT queue_delete_and_get('ro-q', NULL, NULL, wait => '10 seconds')$$),
	($$SELECT queue_create('ro-new')$$),
	($$SELECT queue_alter('ro-q', visibility_timeout => '1 minute')$$),
	($$SELECT queue_clear('ro-q')$$),
	($$SELECT queue_drop('ro-q')$$),
	($$SELECT queue_redrive('ro-q-poison')$$),
	($$SELECT queue_grant('ro-q', 'pg_monitor', 'read')$$),
	($$SELECT queue_revoke('ro-q', 'pg_monitor', 'read')$$),
	($$SELECT queue_maintain()$$);

-- in a transaction started READ ONLY; the get with a wait returns at once
BEGIN READ ONLY;
SELECT clock_timestamp() AS started \gset
SELECT call, check_error(call) FROM ro_calls;
SELECT clock_timestamp() - :'started' < interval '5 seconds' AS did_not_wait;
ROLLBACK;

-- with default_transaction_read_only, an operator's write freeze
SET default_transaction_read_only = on;
SELECT call, check_error(call) FROM ro_calls;
-- reading still works
SELECT count(*) FROM queue_peek('ro-q', 10);
SELECT queue, visible, in_flight, puts, gets FROM queue_stats('ro-q');
SELECT count(*) FROM queue_inspect('ro-q', 10);
SELECT queue FROM queue_list() WHERE queue LIKE 'ro-%' ORDER BY queue;
RESET default_transaction_read_only;

-- nothing changed: the lease is held, the rest untouched
SELECT body, dequeue_count, m.message_id = l.message_id AS leased
FROM queue_inspect('ro-q', 10) m LEFT JOIN ro_lease l USING (message_id)
ORDER BY body;
SELECT queue_delete('ro-q', message_id, pop_receipt) FROM ro_lease;
SELECT drop_all_queues();
