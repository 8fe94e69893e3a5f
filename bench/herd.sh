#!/usr/bin/env bash
# Long polling with a crowd: GETTERS getters (default 1000) wait on one
# queue and HERD_ROUNDS times (default 200) one put commits
# (bench/workloads/herd.sql).  Prints, as a Markdown section, the wake-up
# p50 and p99 from the put's commit to the return of the getter that got
# the message, and how many of the other getters woke (voluntary context
# switches of their backends); then, for bench/run.sh, one line per target
# (bench/targets.tsv's herd.* rows): "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI; about a minute.
# Usage: [GETTERS=1000] [HERD_ROUNDS=200] bash bench/herd.sh
set -euo pipefail

bench_name=herd bench_port=55490
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
getters=${GETTERS:-1000}
rounds=${HERD_ROUNDS:-200}

# one connection per getter, all of them opened by one session (dblink):
# that session needs a file descriptor per connection, and PostgreSQL
# lets a backend hold at most a third of max_files_per_process that way
start_server "max_connections = $(( getters + 100 ))
max_files_per_process = $(( getters * 4 + 1000 ))" $(( getters * 5 + 2000 ))
as_user psql -X -q -c "CREATE EXTENSION queue" > /dev/null

IFS='|' read -r count p50 p99 woken rounds_woken stats_woken < <(as_user psql -X -q -At \
	-c "SET bench.getters = $getters" -c "SET bench.rounds = $rounds" \
	-c "SET bench.getter_dsn = 'host=$work port=$bench_port dbname=postgres'" \
	-f "$work/workloads/herd.sql" | tail -n 1)
echo "## $getters long-polling getters"
echo
echo "\`bash bench/herd.sh\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'): $getters getters wait in \`queue_get(..., wait => '20 s')\` on one queue;"
echo "$rounds times one put commits (bench/workloads/herd.sql says what is counted and what is left out)."
echo
echo "| | |"
echo "|---|---|"
echo "| puts whose message a waiting getter returned | $count of $rounds |"
echo "| wake-up, the put's commit to the getter's return | p50 $p50 ms, p99 $p99 ms |"
echo "| other getters woken | $woken, in $rounds_woken of the $rounds rounds |"
echo "| getters woken by PostgreSQL's idle statistics timer (not counted above) | $stats_woken |"
echo
# the share of the puts a waiting getter returned, unrounded, so that one
# put missed never rounds up to all of them
taken=$(awk -v c="$count" -v r="$rounds" 'BEGIN {print c / r}')
target_line herd.taken "$count of $rounds" "$taken" getters="$getters"
target_line herd.wake_p99 "$p99 ms" "$p99" getters="$getters"
target_line herd.others_woken "$woken woken in $rounds rounds" "$woken" getters="$getters"
