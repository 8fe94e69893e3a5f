#!/usr/bin/env bash
# What retention costs, in paired rounds on one throwaway server: the cycle
# (put, get, delete, each its own transaction; workloads/retention_cycle.sql),
# one client, synchronous_commit off so that the CPU decides, on three
# sides:
#   plain  a queue without retention, in a database that keeps nothing;
#   kept   a queue with a retention, in that database, whose retained
#          messages are emptied before each run (so it keeps only what
#          the run deletes);
#   full   a queue with a retention in a database that keeps RETAINED
#          messages of it (default 1,000,000), made by puts, gets and
#          deletes before the rounds.
# pgbench -r gives each statement's mean latency.  Per round: kept's
# delete over plain's (what keeping a message adds to its delete), and
# full's get over plain's (whether the claim stays flat with a million
# messages kept); reported as the median and interquartile range of
# ROUNDS rounds (default 9), the side going first moving round by round.
# Prints a table, then a line per target (bench/targets.tsv's retention.*).
# Not part of CI; about 6 minutes.
# Usage: [ROUNDS=9] [RETAINED=1000000] [SHOW_RUNS=1] bash bench/retention.sh [seconds per run, default 8]
set -euo pipefail

bench_name=retention bench_port=55500
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-8}
rounds=${ROUNDS:-9}
retained=${RETAINED:-1000000}

start_server
as_user psql -X -q -c "CREATE DATABASE full_db" > /dev/null
as_user psql -X -q -c "CREATE EXTENSION queue" \
	-c "SELECT queue_create('plain', max_dequeue_count => NULL)" \
	-c "SELECT queue_create('kept', max_dequeue_count => NULL, retention => '1 day')" > /dev/null
as_user psql -X -q -d full_db -c "CREATE EXTENSION queue" \
	-c "SELECT queue_create('kept', max_dequeue_count => NULL, retention => '365 days')" > /dev/null
# the kept messages, as consumers leave them: put, got and deleted, 1,000 a transaction
as_user psql -X -q -d full_db -v retained="$retained" <<'SQL' > /dev/null
SET bench.retained = :'retained';
DO $$
DECLARE
	left_to_keep bigint := current_setting('bench.retained')::bigint;
	n int;
BEGIN
	WHILE left_to_keep > 0 LOOP
		n := least(left_to_keep, 1000);
		PERFORM queue_put_batch('kept', array_fill('job'::text, ARRAY[n]));
		PERFORM queue_delete_batch('kept', array_agg(message_id), array_agg(pop_receipt))
		FROM queue_get('kept', n);
		COMMIT;
		left_to_keep := left_to_keep - n;
	END LOOP;
END $$;
VACUUM ANALYZE queue_storage.retained;
SQL
kept_at_start=$(as_user psql -XAtq -d full_db -c "SELECT count(*) FROM queue_storage.retained")

# run_side SIDE: "cycles/s get_ms delete_ms" of one run
run_side() {
	local db=postgres queue=$1
	case "$1" in
		full) db=full_db queue=kept ;;
		kept) as_user psql -XAtq -c "TRUNCATE queue_storage.retained" ;;
	esac
	as_user psql -XAtq -d "$db" -c "VACUUM queue_storage.messages" -c CHECKPOINT
	(cd "$work" && as_user env PGOPTIONS="-c synchronous_commit=off" pgbench -n -r -M prepared \
		-c 1 -j 1 -T "$seconds" -D queue="$queue" -f workloads/retention_cycle.sql "$db" 2>&1 |
		awk '/^tps = / {tps = $3}
			/queue_get\(/ {get = $1}
			/queue_delete\(/ {del = $1}
			END {print tps, get, del}')
}

runs=$(paired_runs plain kept full)

read -r dq1 dm dq3 < <(round_ratios "$runs" kept plain 5 | spread)
read -r gq1 gm gq3 < <(round_ratios "$runs" full plain 4 | spread)
[ -z "${SHOW_RUNS:-}" ] || echo "$runs" >&2
echo "## What retention costs"
echo
echo "\`bash bench/retention.sh $seconds\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'): one client runs the cycle (put, get, delete, each its own"
echo "transaction), synchronous_commit off; $rounds rounds of $seconds s per side. full keeps $(thousands "$kept_at_start") messages when the rounds start."
echo
echo "| side | cycles/s | get, ms | delete, ms |"
echo "|---|---|---|---|"
for side in plain kept full; do
	echo "| $side | $(side_values "$runs" "$side" 3 | median) | $(side_values "$runs" "$side" 4 | median) | $(side_values "$runs" "$side" 5 | median) |"
done
echo
echo "kept's delete / plain's, per round: ${dm}× (IQR $dq1–$dq3)"
echo "full's get / plain's, per round: ${gm}× (IQR $gq1–$gq3)"
echo
target_spread_line retention.delete "$dq1" "$dm" "$dq3"
target_spread_line retention.claim "$gq1" "$gm" "$gq3" retained="$(thousands "$kept_at_start")"
