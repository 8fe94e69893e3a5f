#!/usr/bin/env bash
# The cycle at one client, extension and floor taking turns, with the
# worker's vacuum of the messages table on (queue.vacuum_threshold at its
# default, 10,000) and off (0, autovacuum only), on the benchmark's
# throwaway server: does the worker's vacuum, on the same two cores, cost
# the extension its rate at one client?  Not part of CI; about two and a
# half minutes.  Usage: bash bench/experiments/worker_vacuum_ab/worker_vacuum_ab.sh [rounds, default 3]
# [seconds per run, default 15].
set -euo pipefail

bench_name=vacuum-ab bench_port=55483
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
rounds=${1:-3}
seconds=${2:-15}

start_durable_server

set_threshold() {
	as_user psql -X -q -c "ALTER SYSTEM SET queue.vacuum_threshold = $1" \
		-c "SELECT pg_reload_conf()" > /dev/null
}
cycles() {
	(cd "$work" && pgbench_as "$1" -n -M prepared -c 1 -T "$seconds" \
		-f "workloads/cycle_$1.sql" 2> /dev/null | awk '/^tps/ {printf "%.0f", $3}')
}

echo "cycle at 1 client, ${seconds} s runs, $(nproc) cores, PostgreSQL $pgver (scripts/s):"
for round in $(seq "$rounds"); do
	set_threshold 10000
	with=$(cycles queue)
	floor=$(cycles floor)
	set_threshold 0
	without=$(cycles queue)
	echo "- round $round: extension $with (worker vacuums), floor $floor, extension $without (vacuum_threshold 0): $(awk -v a="$with" -v f="$floor" -v b="$without" 'BEGIN {printf "%.2f and %.2f x floor", a / f, b / f}')"
done
