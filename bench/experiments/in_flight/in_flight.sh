#!/usr/bin/env bash
# The in-flight guard of bench/floor.sh, alone and repeated: one get +
# delete with 1,000 visible messages and none, or 100,000 in flight and
# 100,000 delayed, ahead of them; the fills taking turns with each other
# and the two sides with each other inside each fill.  Beside each side's
# latency, the shared buffers its get + delete touches (pg_stat_statements'
# top-level statements, which count those they run), which the machine's
# speed does not move.  Not part of CI; about four minutes with the defaults.
# Usage: [LATENCY_RUNS=300] bash bench/experiments/in_flight/in_flight.sh [rounds, default 5]
set -euo pipefail

bench_name=in-flight bench_port=55484
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
rounds=${1:-5}
runs=${LATENCY_RUNS:-300}
ahead=${INVISIBLE_AHEAD:-100000}

start_server "shared_preload_libraries = 'queue, pg_stat_statements'
pg_stat_statements.track = top"
as_user psql -X -q -f "$work/workloads/setup.sql" -c 'CREATE EXTENSION pg_stat_statements' > /dev/null
WARM_WAL_SEGMENTS=40 warm_wal > /dev/null

fill() {
	as_user psql -X -q -v visible=1000 -v delayed="$1" -v inflight="$1" \
		-f "$work/workloads/fill.sql" > /dev/null
}

# side SIDE: "p50_ms buffers_per_run" of runs get + delete runs of SIDE
side() {
	local blocks
	as_user psql -X -q -c 'SELECT pg_stat_statements_reset()' > /dev/null
	rm -f "$work"/log.*
	(cd "$work" && pgbench_as "$1" -n -M prepared -c 1 -t "$runs" -f "workloads/getdel_$1.sql" \
		-l --log-prefix="$work/log" > /dev/null 2>&1)
	# a top-level statement's buffers include those of the statements it runs
	blocks=$(as_user psql -XAtc "SELECT sum(shared_blks_hit + shared_blks_read)
		FROM pg_stat_statements WHERE toplevel AND query !~* 'pg_stat_statements'")
	cat "$work"/log.* | awk '{print $3}' | sort -n |
		awk -v b="$blocks" -v n="$runs" '{a[NR]=$1} END {printf "%.3f %.1f\n", a[int(NR*0.5)]/1000, b/n}'
}

echo "get + delete, 1 client, $runs runs a side a fill, PostgreSQL $pgver, $(nproc) cores"
echo
echo "| round | ahead | extension p50 ms | extension buffers | floor p50 ms | floor buffers |"
echo "|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
	for n in 0 "$ahead"; do
		fill "$n"
		read -r q50 qb < <(side queue)
		read -r f50 fb < <(side floor)
		echo "| $round | $(( 2 * n )) | $q50 | $qb | $f50 | $fb |"
	done
done
