#!/usr/bin/env bash
# A release beside an update, in paired rounds on one throwaway server:
# each iteration gets one message of a queue of 1,000 and gives it back
# visible at once, with queue_release (the queue's retry delay, 0) or with
# queue_update(..., '0') (workloads/policy_*.sql), one client, with
# synchronous_commit off so that the CPU decides.  In a round both sides
# run once, the one going first moving round by round; the ratio release /
# update is taken per round and reported as the median and interquartile
# range of ROUNDS rounds (default 15: the machine's speed moves between
# rounds more than the two calls differ).  Prints a table, then, for
# bench/run.sh, a line per target (bench/targets.tsv's policy.* rows).
# Not part of CI; about 5 minutes.
# Usage: [ROUNDS=15] [SHOW_RUNS=1] bash bench/policy.sh [seconds per run, default 8]
set -euo pipefail

bench_name=policy bench_port=55499
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-8}
rounds=${ROUNDS:-15}

start_server
as_user psql -X -q -c "CREATE EXTENSION queue" \
	-c "SELECT queue_create('policy', max_dequeue_count => NULL)" \
	-c "SELECT count(*) FROM queue_put_batch('policy', array_fill('job'::text, ARRAY[1000]))" > /dev/null

# run_side SIDE: iterations/s of one run
run_side() {
	as_user psql -XAtq -c "VACUUM queue_storage.messages" -c CHECKPOINT
	(cd "$work" && as_user env PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared -c 1 -j 1 \
		-T "$seconds" -f "workloads/policy_$1.sql" 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
}

runs=$(paired_runs release update)

read -r q1 m q3 < <(round_ratios "$runs" release update 3 | spread)
[ -z "${SHOW_RUNS:-}" ] || echo "$runs" >&2
echo "## A release beside an update"
echo
echo "\`bash bench/policy.sh $seconds\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'): one client gets a message and gives it back visible at once,"
echo "with queue_release or queue_update(..., '0'), synchronous_commit off; $rounds rounds of $seconds s per side."
echo
echo "| side | iterations/s (median of the rounds) |"
echo "|---|---|"
for side in release update; do
	echo "| $side | $(side_values "$runs" "$side" 3 | median) |"
done
echo
echo "release / update, per round: ${m}× (IQR $q1–$q3)"
echo
target_spread_line policy.release "$q1" "$m" "$q3"
