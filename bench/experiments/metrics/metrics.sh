#!/usr/bin/env bash
# What a Prometheus scrape costs at many queues (docs/monitoring.md), on one
# throwaway server with durable settings: 10,000 queues, first with 10
# messages each (100,000), then with 100 each (1,000,000).  At each size,
# ROUNDS times, medians of:
#
#   metrics   SELECT * FROM queue_metrics(): one row per queue and metric,
#             the message counts read from the census
#   exporter  the query of monitoring/queries.yaml (queue_metrics pivoted to
#             one row per queue), as postgres_exporter runs it
#   stats     SELECT * FROM queue_stats(): counts every message
#   census    SELECT queue_maintain(): a sweep with its census, what the
#             worker runs every queue.metrics_interval while metrics are read
#
# Not part of CI; about 3 minutes.
#
# Usage: [ROUNDS=5] bash bench/experiments/metrics/metrics.sh
set -euo pipefail

bench_name=metrics bench_port=55487
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
rounds=${ROUNDS:-5}

start_durable_server
# the exporter's query, as monitoring/queries.yaml gives it
sed -n '/^  query: |$/,/^  metrics:$/p' "$repo/monitoring/queries.yaml" | sed '1d;$d' > "$work/exporter.sql"
chown "$user" "$work/exporter.sql"

# time_ms SQL: the milliseconds one run of SQL takes, as psql's \timing says
time_ms() {
	as_user psql -X -q -v ON_ERROR_STOP=1 -o /dev/null -c '\timing on' -c "$1" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n 1
}

# median of the numbers on stdin
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

measure() {
	local label=$1 sql=$2 i runs=()
	for i in $(seq "$rounds"); do
		runs+=("$(time_ms "$sql")")
	done
	printf '%-9s %10s ms   (runs: %s)\n' "$label" "$(printf '%s\n' "${runs[@]}" | median)" "${runs[*]}"
}

as_user psql -X -q -v ON_ERROR_STOP=1 > /dev/null <<'SQL'
SELECT count(*) FROM generate_series(1, 10000) i,
	LATERAL queue_create('queue-' || i, max_dequeue_count => NULL, message_ttl => NULL);
SQL
echo "10,000 queues; $rounds rounds, $(nproc) cores, PostgreSQL $pgver"
for per_queue in 10 90; do
	# a call locks its queue until the transaction ends: 500 queues at a time
	for part in $(seq 0 19); do
		as_user psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM queue_storage.queues q,
			LATERAL queue_put_batch(q.name, array_fill('x'::text, ARRAY[$per_queue]))
			WHERE q.queue_id % 20 = $part" > /dev/null
	done
	as_user psql -X -q -c 'VACUUM ANALYZE' > /dev/null
	as_user psql -X -q -c 'SELECT count(*) FROM queue_maintain()' > /dev/null
	echo "--- $(as_user psql -X -A -t -c 'SELECT count(*) FROM queue_storage.messages') messages"
	measure metrics 'SELECT * FROM queue_metrics()'
	measure exporter "$(cat "$work/exporter.sql")"
	measure stats 'SELECT * FROM queue_stats()'
	measure census 'SELECT * FROM queue_maintain()'
done
