#!/usr/bin/env bash
# Cost at scale, on one throwaway server with run.sh's durable settings:
#  - many queues: the cycle at 4 clients on the only queue of one database,
#    and in another database that holds 10,000 queues, on one of the first
#    1,000 picked at random each cycle; the two take turns, ROUNDS rounds
#    (default 3) of SECONDS each;
#  - depth: the time of a get as the server sees it (each followed by the
#    delete of its message, synchronous_commit off) from a queue of 10,000
#    messages, from one with DEEP (default 10,000,000) visible messages,
#    and from one with AHEAD (default 1,000,000) in flight before its
#    10,000 visible ones; three rounds of 1,000 gets, taking turns.
# Prints a Markdown section, and for bench/run.sh one line per target
# (bench/targets.tsv's scale.* rows): "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI.
# Usage: [ROUNDS=3] [DEEP=10000000] [AHEAD=1000000] bash bench/scale.sh [seconds, default 15]
set -euo pipefail

bench_name=scale bench_port=55489
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-15}
round_count=${ROUNDS:-3}
deep=${DEEP:-10000000}
ahead=${AHEAD:-1000000}

start_durable_server
for db in one many deep; do
	as_user createdb "$db"
done
fill_started=$(date +%s)
as_user psql -X -q -v ON_ERROR_STOP=1 -d one -f "$work/workloads/scale_setup.sql" > /dev/null
as_user psql -X -q -v ON_ERROR_STOP=1 -d many -v many=1 -f "$work/workloads/scale_setup.sql" > /dev/null
as_user psql -X -q -v ON_ERROR_STOP=1 -d deep -v deep="$deep" -v ahead="$ahead" -f "$work/workloads/scale_setup.sql" > /dev/null
fill_seconds=$(( $(date +%s) - fill_started ))

# cycles DB: messages per second of the cycle at 4 clients in DB
cycles() {
	(cd "$work" && as_user pgbench -n -M prepared -c 4 -j 2 -T "$seconds" \
		-f "workloads/scale_cycle_$1.sql" "$1" 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
}

# get_us QUEUE: the median and the 90th percentile in µs of 1,000 gets from
# QUEUE (database deep), timed inside the server (workloads/scale_get_time.sql):
# pgbench's mean latency per statement, used before, moved more from run
# to run than the depth of the queue did, with the round trip and a new
# session's first calls in it (bench/README.md, scale.sh)
get_us() {
	(cd "$work" && as_user psql -X -q -d deep -c "SET bench.queue = '$1'" \
		-f workloads/scale_get_time.sql 2>&1) | sed -n 's/.*get_us //p'
}

# round_median N: the median of column N of the lines in $rounds
round_median() { awk -v n="$1" '{print $n}' <<< "$rounds" | median; }


cycles one > /dev/null
cycles many > /dev/null
rounds=""
for round in $(seq "$round_count"); do
	if [ $(( round % 2 )) = 1 ]; then
		one=$(cycles one); many=$(cycles many)
	else
		many=$(cycles many); one=$(cycles one)
	fi
	rounds+="$one $many"$'\n'
done
one=$(round_median 1)
many=$(round_median 2)
many_ratio=$(awk -v a="$many" -v b="$one" 'BEGIN {printf "%.2f", a / b}')

rounds=""
for round in 1 2 3; do
	rounds+="$(get_us small) $(get_us deep) $(get_us ahead)"$'\n'
done
# per queue: the median of the rounds' medians, and of their 90th percentiles
small=$(round_median 1) small_p90=$(round_median 2)
deep_us=$(round_median 3) deep_p90=$(round_median 4)
ahead_us=$(round_median 5) ahead_p90=$(round_median 6)
deep_ratio=$(awk -v a="$deep_us" -v b="$small" 'BEGIN {printf "%.2f", a / b}')
ahead_ratio=$(awk -v a="$ahead_us" -v b="$small" 'BEGIN {printf "%.2f", a / b}')

echo "## Scale"
echo
echo "\`bash bench/scale.sh $seconds\` (ROUNDS=$round_count, DEEP=$deep, AHEAD=$ahead; filling took $fill_seconds s)."
echo
echo "The cycle at 4 clients (1 KiB; bench/workloads/scale_cycle_*.sql), median of $round_count runs of $seconds s, the two taking turns:"
echo
echo "| queues in the database | traffic on | cycles/s |"
echo "|---|---|---|"
echo "| 1 | that one | $(printf '%.0f' "$one") |"
echo "| 10,000 | 1,000 of them, one picked at random per cycle | $(printf '%.0f' "$many") |"
echo
echo "A get, each followed by the delete of its message, 1 session, synchronous_commit off, timed inside the server"
echo "(bench/workloads/scale_get_time.sql): 1,000 gets per round after 50 unmeasured, three rounds, the queues taking turns;"
echo "median of the rounds' figures; 16-byte bodies:"
echo
echo "| queue | get p50, µs | get p90, µs |"
echo "|---|---|---|"
echo "| 10,000 visible | $small | $small_p90 |"
echo "| $(thousands "$deep") visible | $deep_us | $deep_p90 |"
echo "| $(thousands "$ahead") in flight before 10,000 visible | $ahead_us | $ahead_p90 |"
echo
target_line scale.many_queues "${many_ratio}×" "$many_ratio"
target_line scale.deep "${deep_ratio}×" "$deep_ratio" deep="$(thousands "$deep")"
target_line scale.ahead "${ahead_ratio}×" "$ahead_ratio" ahead="$(thousands "$ahead")"
