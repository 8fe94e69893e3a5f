#!/usr/bin/env bash
# What message groups, fairness and deduplication cost (docs/ordering.md),
# on one throwaway server with durable settings, the queues side by side,
# taking turns ROUNDS times; medians.  Not part of CI; about 10 minutes
# (the setup puts 1,011,000 messages).
#
#   plain     a get of 10 from a queue of 10,000 messages without groups
#   groups    a get of 10 from 1,000 groups of 10 messages, each group ready
#   big       a get of 10 from one group of 1,000,000 messages and 1,000
#             groups of one
#   put       a plain put
#   dedup     a put with a new deduplication_id, 1,000,000 ids in the window
#
# The gets take leases of 1 ms, so each queue keeps its shape.  Prints
# calls/s of each run, the medians and the ratios the targets are about
# (groups/plain and big/plain <= 1.5, dedup cost/put cost <= 1.3).
#
# Usage: [ROUNDS=5] [CLIENTS=1] bash bench/experiments/ordering/ordering.sh [seconds per run, default 15]
set -euo pipefail

bench_name=ordering bench_port=55486
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
seconds=${1:-15}
rounds=${ROUNDS:-5}
clients=${CLIENTS:-1}

start_durable_server
started=$(date +%s)
as_user psql -X -q -v ON_ERROR_STOP=1 > /dev/null <<'SQL'
SELECT queue_create(q, visibility_timeout => '1 hour', message_ttl => NULL,
					max_dequeue_count => NULL, deduplication_window => '7 days')
FROM unnest(ARRAY['plain-q', 'groups-q', 'big-q', 'put-q', 'dedup-q']) q;
-- (each batch's body names its batch, so that the function runs per row)
SELECT count(*) FROM generate_series(1, 10) b,
	LATERAL queue_put_batch('plain-q', array_fill('x' || b, ARRAY[1000]));
SELECT count(*) FROM generate_series(1, 10) b,
	LATERAL queue_put_batch('groups-q', array_fill('x' || b, ARRAY[1000]),
		group_ids => ARRAY(SELECT 'g' || i FROM generate_series(1, 1000) i));
SELECT count(*) FROM generate_series(1, 1000) b,
	LATERAL queue_put_batch('big-q', array_fill('x' || b, ARRAY[1000]),
		group_ids => array_fill('big'::text, ARRAY[1000]));
SELECT count(*) FROM queue_put_batch('big-q', array_fill('x'::text, ARRAY[1000]),
	group_ids => ARRAY(SELECT 'single' || i FROM generate_series(1, 1000) i));
-- 1,000,000 ids in the window, as that many earlier puts would leave them
INSERT INTO queue_storage.deduplication
	(queue_id, deduplication_id, message_id, visible_at, inserted_at, forget_at, priority)
SELECT q.queue_id, 'earlier-' || i, i, now(), now(), now() + '7 days', 0
FROM generate_series(1, 1000000) i, queue_storage.queues q WHERE q.name = 'dedup-q';
VACUUM ANALYZE;
SQL
# A put with a deduplication_id adds an entry at a random place of the ids'
# index: the first change of each of its pages after a checkpoint writes
# the whole page to the WAL.  Right after one, every put pays that; a
# server running for minutes has touched them since.  One run of each put
# before the rounds, so that the rounds measure the running state.
(cd "$work" && as_user pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -D dedup=1 \
	-f workloads/ordering_put.sql > /dev/null 2>&1)
(cd "$work" && as_user pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" -D dedup=0 \
	-f workloads/ordering_put.sql > /dev/null 2>&1)
echo "setup: $(( $(date +%s) - started )) s; $clients client(s), ${seconds} s runs, $rounds rounds, $(nproc) cores, PostgreSQL $pgver"
as_user psql -X -A -t -c "SELECT queue || ': ' || visible || ' visible, ' || delayed || ' waiting'
	FROM queue_stats() WHERE queue IN ('plain-q', 'groups-q', 'big-q')"
as_user psql -X -A -t -c "SELECT 'deduplication ids in the window: ' || count(*) FROM queue_storage.deduplication"

# run NAME ARGS...: one pgbench run, its calls/s into $work/results
run() {
	local name=$1
	shift
	local tps
	tps=$(cd "$work" && as_user pgbench -n -M prepared -c "$clients" -j "$clients" -T "$seconds" "$@" 2>&1 |
		awk '/^tps/ {printf "%.0f", $3}')
	echo "$name $tps" >> "$work/results"
	echo "round $round, $name: $tps calls/s"
}

for round in $(seq "$rounds"); do
	run plain -D q=plain-q -f workloads/ordering_get.sql
	run groups -D q=groups-q -f workloads/ordering_get.sql
	run big -D q=big-q -f workloads/ordering_get.sql
	run put -D dedup=0 -f workloads/ordering_put.sql
	run dedup -D dedup=1 -f workloads/ordering_put.sql
done

# rate_of WORKLOAD: the median calls/s of its runs
rate_of() { awk -v w="$1" '$1 == w {print $2}' "$work/results" | median; }
echo "medians (calls/s) and cost ratios (time per call / the plain one's):"
plain=$(rate_of plain)
put=$(rate_of put)
for name in plain groups big; do
	awk -v n="$name" -v r="$(rate_of "$name")" -v p="$plain" \
		'BEGIN {printf "- get of 10, %s: %s/s, %.2f x the plain get\n", n, r, p / r}'
done
awk -v r="$put" 'BEGIN {printf "- put: %s/s\n", r}'
awk -v r="$(rate_of dedup)" -v p="$put" \
	'BEGIN {printf "- put with a new deduplication_id, 1,000,000 ids in the window: %s/s, %.2f x the plain put\n", r, p / r}'
as_user psql -X -A -t -c "SELECT 'deduplication ids at the end: ' || count(*) FROM queue_storage.deduplication"
