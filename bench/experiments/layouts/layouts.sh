#!/usr/bin/env bash
# Where a message's lease could live, measured on plain tables
# (layouts_setup.sql beside it says what they are): lease_key, the
# extension's layout, where the get moves visible_at, the claim index's key;
# lease_beside, where the claim index is keyed by a column the get never
# changes and the lease sits beside it, so that the get's new version is a
# HOT update with no index entries; lease_narrow, lease_key's lease in a
# narrow row and the body in an insert-only table of its own, so that the
# get's new version leaves the body alone.  For each: the batch of 100 (1 KiB
# bodies) at 4 clients for SECONDS on the benchmark's durable server, its
# WAL per message by record type (pg_waldump) and the share of HOT updates;
# then what one get costs with IN_FLIGHT messages in flight ahead of the
# ready ones, against none.  Not part of CI; about 3 minutes.
# Usage: [IN_FLIGHT=200000] bash bench/experiments/layouts/layouts.sh [seconds, default 10]
set -euo pipefail

bench_name=layouts bench_port=55494
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
seconds=${1:-10}
in_flight=${IN_FLIGHT:-200000}

start_durable_server
as_user psql -X -q -f "$work/workloads/layouts_setup.sql" > /dev/null

# sql ARGS...: psql with the floor's planner settings
sql() { as_user env PGOPTIONS="$floor_planner" psql -X -q -A -t "$@"; }

layouts="lease_key lease_beside lease_narrow"

# use_layout LAYOUT: sets where the layout keeps things.  tables: its tables;
# key: the claim index's column; lease: the column the get writes the lease
# in; ready: a message the get may take; body: how the get, having claimed
# message got (RETURNING id ...), has its body in b; delete: message got's
# rows deleted
use_layout() {
	tables=$1 key=visible_at lease=visible_at ready="visible_at <= clock_timestamp()"
	body="RETURNING id, body INTO got, b" delete="DELETE FROM $1 WHERE id = got"
	case "$1" in
		lease_beside) key=ready_at lease=lease_until
			ready="ready_at <= clock_timestamp() AND lease_until <= clock_timestamp()" ;;
		lease_narrow) tables="lease_narrow, lease_narrow_body"
			body="RETURNING id INTO got; SELECT body INTO b FROM lease_narrow_body WHERE id = got"
			delete="$delete; DELETE FROM lease_narrow_body WHERE id = got" ;;
	esac
}

# put LAYOUT N: N messages of 1 KiB, ready now (after use_layout LAYOUT)
put() {
	case "$1" in
		lease_narrow) sql -c "WITH lease AS (INSERT INTO lease_narrow (queue_id, visible_at)
				SELECT 1, clock_timestamp() FROM generate_series(1, $2) RETURNING id)
			INSERT INTO lease_narrow_body (id, body) SELECT id, repeat('x', 1024) FROM lease" ;;
		*) sql -c "INSERT INTO $1 (queue_id, $key, body)
			SELECT 1, clock_timestamp(), repeat('x', 1024) FROM generate_series(1, $2)" ;;
	esac > /dev/null
}

echo "WAL per message, batches of 100 at 4 clients, $seconds s, PostgreSQL $pgver"
echo "(batch_LAYOUT.sql beside layouts.sh; pg_waldump --stats=record):"
echo
for layout in $layouts; do
	use_layout "$layout"
	sql -c "TRUNCATE $tables" -c "VACUUM (ANALYZE) $tables" -c "SELECT pg_stat_reset()" > /dev/null
	start_lsn=$(sql -c "SELECT pg_current_wal_insert_lsn()")
	batches=$(cd "$work" && pgbench_as floor -n -M prepared -c 4 -j 2 -T "$seconds" \
		-f "workloads/batch_$layout.sql" 2>&1 | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	end_lsn=$(sql -c "SELECT pg_current_wal_insert_lsn()")
	messages=$(( batches * 100 ))
	sleep 1
	hot=$(sql -c "SELECT pg_stat_force_next_flush()" \
		-c "SELECT round(100.0 * n_tup_hot_upd / greatest(n_tup_upd, 1)) FROM pg_stat_user_tables WHERE relname = '$layout'" | tail -n 1)
	echo "### $layout: $messages messages, $(( messages / seconds )) messages/s, $hot % of the gets' updates HOT"
	echo
	echo "| record | records per message | bytes per message |"
	echo "|---|---|---|"
	wal_records "$start_lsn" "$end_lsn" "$messages"
	echo "| all WAL between the two positions | | $(sql -c "SELECT (pg_wal_lsn_diff('$end_lsn', '$start_lsn') / $messages)::bigint") |"
	echo
done

# get_time LAYOUT: µs per get of one message (the claim statement of the
# batch workload with LIMIT 1, and the body), the mean of 500 after 50;
# each message got is deleted and committed before the next get, so that
# the messages in flight ahead are the ones the caller put there, and only
# the get is timed (after use_layout LAYOUT)
get_time() {
	local claim="UPDATE $1 SET $lease = clock_timestamp() + interval '30 s', receipt = gen_random_uuid(), dequeue_count = dequeue_count + 1 WHERE id = ANY(ARRAY(SELECT id FROM $1 WHERE queue_id = 1 AND $ready ORDER BY $key, id LIMIT 1 FOR UPDATE SKIP LOCKED)) $body"
	sql -c "SET synchronous_commit = off" -c "DO \$\$
		DECLARE
			got bigint;
			b text;
			t timestamptz;
			spent interval := '0';
		BEGIN
			FOR i IN 1..550 LOOP
				t := clock_timestamp();
				$claim;
				IF i > 50 THEN
					spent := spent + (clock_timestamp() - t);
				END IF;
				$delete;
				COMMIT;
			END LOOP;
			RAISE NOTICE '%', round(extract(epoch FROM spent) * 1e6 / 500, 1);
		END\$\$" 2>&1 | sed -n 's/^NOTICE: *//p'
}

echo "A get of one message, µs (the mean of 500, after 50; each message got deleted and committed before the next get):"
echo
echo "| layout | none in flight ahead | $in_flight in flight ahead |"
echo "|---|---|---|"
for layout in $layouts; do
	use_layout "$layout"
	sql -c "TRUNCATE $tables" > /dev/null
	put "$layout" 1000
	sql -c "VACUUM (ANALYZE) $tables" > /dev/null
	none=$(get_time "$layout")
	# in flight: put and claimed by a get, their lease not over
	sql -c "TRUNCATE $tables" > /dev/null
	put "$layout" "$in_flight"
	sql -c "UPDATE $layout SET $lease = clock_timestamp() + interval '1 h', receipt = gen_random_uuid(), dequeue_count = 1" > /dev/null
	put "$layout" 1000
	sql -c "VACUUM (ANALYZE) $tables" > /dev/null
	echo "| $layout | $none | $(get_time "$layout") |"
done
