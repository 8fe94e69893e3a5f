# What the upgrade tests (test/t/013_upgrade.pl, test/pg_upgrade/*.pl) put
# into a database before an upgrade, and how they read it back to compare.
package QueueFixture;

use strict;
use warnings;
use Exporter 'import';

our @EXPORT = qw(fill_queues take_leases queues_state);

# The queue orders (poison queue orders-poison) holds: a message moved to the
# poison queue after two failed leases, three visible messages with headers,
# two more, a delayed one and one that never expires; role producer may send
# to it.  The role must exist.
sub fill_queues
{
	my ($node, $db) = @_;
	$node->safe_psql($db, q{
		SELECT queue_create('orders', max_dequeue_count => 2);
		SELECT count(*) FROM queue_put('orders', 'failing');
		DO $$
		DECLARE
			m record;
		BEGIN
			FOR i IN 1..2 LOOP
				SELECT message_id, pop_receipt INTO m FROM queue_get('orders', 1, '1 hour');
				PERFORM queue_update('orders', m.message_id, m.pop_receipt, '0');
			END LOOP;
		END
		$$;
		SELECT count(*) FROM generate_series(1, 3) i,
			queue_put('orders', 'visible ' || i, headers => jsonb_build_object('n', i)) p;
		SELECT count(*) FROM generate_series(1, 2) i, queue_put('orders', 'leased ' || i) p;
		SELECT count(*) FROM queue_put('orders', 'delayed', visibility_timeout => '1 hour');
		SELECT count(*) FROM queue_put('orders', 'lives forever', ttl => '-1 second');
		SELECT queue_grant('orders', 'producer', 'send');
	});
	return;
}

# Leases the five oldest visible messages for an hour (the visible and the
# leased ones); returns [message_id, pop_receipt] of the two leased ones.
sub take_leases
{
	my ($node, $db) = @_;
	my $leases = $node->safe_psql($db, q{
		SELECT string_agg(message_id || ' ' || pop_receipt, ',' ORDER BY message_id)
		FROM queue_get('orders', 5, '1 hour') WHERE body LIKE 'leased %'});
	return map { [split / /] } split /,/, $leases;
}

# Every queue and grant row, the message rows and the counters of the
# queues other than those named in @skip, as text to compare.  The columns
# versions 1.3 and 1.6 added (with defaults that leave a row as it was) are
# left out, so that states from before and after an update compare.
sub queues_state
{
	my ($node, $db, @skip) = @_;
	my $skip = join(',', map { "'$_'" } @skip) || "''";
	return $node->safe_psql($db, qq{
		SELECT 'queue', (to_jsonb(q) - 'deduplication_window' - 'delay' - 'attributes' - 'tags'
			- 'retry_delay' - 'retry_backoff' - 'retry_delay_max' - 'paused' - 'retention')::text
			FROM queue_storage.queues q
		UNION ALL SELECT 'message ' || m.message_id, (to_jsonb(m) - 'priority' - 'group_id' - 'first_dequeued_at')::text
			FROM queue_storage.messages m JOIN queue_storage.queues q USING (queue_id)
			WHERE q.name NOT IN ($skip)
		UNION ALL SELECT 'grant', row_to_json(g)::text FROM queue_storage.grants g
		UNION ALL SELECT 'stats ' || s.queue, concat_ws(' ', s.visible, s.in_flight, s.delayed,
			s.total, s.puts, s.gets, s.deletes, s.poisoned, s.expired)
			FROM queue_stats() s WHERE s.queue NOT IN ($skip)
		ORDER BY 1, 2});
}

1;
