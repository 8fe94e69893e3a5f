#!/usr/bin/env bash
# What a publish costs, in paired rounds on one throwaway server, one
# client, synchronous_commit off so that the CPU decides:
#   puts     ten queue_put, one into each of ten queues, in one transaction
#            (workloads/topics_puts.sql);
#   ten      one queue_publish to a topic whose ten subscriptions all match,
#            each with a filter of three keys (exact, numeric range, prefix);
#   many     one queue_publish to a topic with SUBSCRIPTIONS subscriptions
#            (default 1,000) of which the same ten match; the others'
#            filters differ in one value (workloads/topics_publish.sql).
# Every side puts the same ten messages into the same ten queues, whose
# messages are deleted before each run.  Per round, the time of a
# transaction (1 / tps) of ten and of many over that of puts; reported as
# the median and interquartile range of ROUNDS rounds (default 9), the
# side going first moving round by round.  Prints a table, then a line per
# target (bench/targets.tsv's topics.*).  Not part of CI; about 5 minutes.
# Usage: [ROUNDS=9] [SUBSCRIPTIONS=1000] [SHOW_RUNS=1] bash bench/topics.sh [seconds per run, default 8]
set -euo pipefail

bench_name=topics bench_port=55501
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-8}
rounds=${ROUNDS:-9}
subscriptions=${SUBSCRIPTIONS:-1000}

start_server
as_user psql -X -q -v subscriptions="$subscriptions" <<'SQL' > /dev/null
CREATE EXTENSION queue;
SELECT queue_topic_create('ten');
SELECT queue_topic_create('many');
SELECT count(queue_create('sub-' || i, max_dequeue_count => NULL)) FROM generate_series(1, 10) i;
SELECT count(queue_create('other-' || i, max_dequeue_count => NULL))
FROM generate_series(11, :subscriptions) i;
-- the ten that match: on both topics
SELECT count(queue_subscribe(t, 'sub-' || i,
	'{"kind": ["order"], "total": [{"numeric": [">", 100, "<=", 1000]}], "region": [{"prefix": "eu-"}]}'))
FROM generate_series(1, 10) i, unnest(ARRAY['ten', 'many']) t;
-- the others: the same filter but for the kind
SELECT count(queue_subscribe('many', 'other-' || i, format(
	'{"kind": ["order-%s"], "total": [{"numeric": [">", 100, "<=", 1000]}], "region": [{"prefix": "eu-"}]}', i)::jsonb))
FROM generate_series(11, :subscriptions) i;
SQL

# run_side SIDE: the transactions per second of one run
run_side() {
	local script=topics_publish.sql
	[ "$1" = puts ] && script=topics_puts.sql
	as_user psql -XAtq -c "DELETE FROM queue_storage.messages" -c "VACUUM queue_storage.messages" -c CHECKPOINT
	(cd "$work" && as_user env PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared \
		-c 1 -j 1 -T "$seconds" -D topic="$1" -f "workloads/$script" 2>&1 |
		awk '/^tps = / {print $3}')
}

runs=$(paired_runs puts ten many)

# the time of a transaction is 1 / tps: a side's time over puts' is puts' tps over its
read -r tq1 tm tq3 < <(round_ratios "$runs" puts ten 3 | spread)
read -r mq1 mm mq3 < <(round_ratios "$runs" puts many 3 | spread)
[ -z "${SHOW_RUNS:-}" ] || echo "$runs" >&2
echo "## What a publish costs"
echo
echo "\`bash bench/topics.sh $seconds\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'): one client, synchronous_commit off;"
echo "$rounds rounds of $seconds s per side. Every side puts ten messages per transaction into the same ten queues."
echo
echo "| side | transactions/s | messages/s |"
echo "|---|---|---|"
for side in puts ten many; do
	tps=$(side_values "$runs" "$side" 3 | median)
	echo "| $side | $tps | $(awk -v t="$tps" 'BEGIN {printf "%.0f", 10 * t}') |"
done
echo
echo "puts: ten queue_put in one transaction; ten: a publish to ten matching subscriptions; many: a publish to"
echo "$(thousands "$subscriptions") subscriptions of which ten match. A publish's time over ten puts', per round:"
echo "ten ${tm}× (IQR $tq1–$tq3), many ${mm}× (IQR $mq1–$mq3)."
echo
target_spread_line topics.ten "$tq1" "$tm" "$tq3"
target_spread_line topics.many "$mq1" "$mm" "$mq3" subscriptions="$(thousands "$subscriptions")"
