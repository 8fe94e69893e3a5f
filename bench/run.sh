#!/usr/bin/env bash
# The benchmark: the queue extension against the raw-SQL floor (the same
# work as plain prepared SQL on a minimal table of the same shape), in the
# same run, on the same throwaway server, driven by the same client
# (pgbench -M prepared), with durable settings (fsync and synchronous_commit
# on).  Writes BENCHMARKS.md and prints it.  Not part of CI.
#
# Workloads so far: cycle (put 1, get 1, delete 1, each its own transaction)
# and batch (put_batch 100, get 100, delete_batch 100), at 1, 4 and 16
# clients; long-poll wake-up latency over 1000 wakes.  Usage: bash bench/run.sh [seconds per measurement, default 15]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER bash "$0" "$@"
fi
seconds=${1:-15}
pgver=$(bash "$repo/test/prepare.sh" | tail -n 1)
bindir=/usr/lib/postgresql/$pgver/bin
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi
work=$(mktemp -d /tmp/queue-bench.XXXXXX)
cp -r "$repo/bench/workloads" "$work/"
chown -R "$user" "$work"
as_user() {
	runuser -u "$user" -- env PATH="$bindir:/usr/bin:/bin" PGHOST="$work" PGPORT=55480 PGDATABASE=postgres "$@"
}

settings="shared_preload_libraries = 'queue'
shared_buffers = 512MB
max_connections = 50
fsync = on
synchronous_commit = on
wal_level = replica
checkpoint_timeout = 15min
max_wal_size = 4GB"
as_user initdb -D "$work/data" -A trust > /dev/null
printf "%s\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = 55480\n" "$settings" "$work" >> "$work/data/postgresql.conf"
as_user pg_ctl -D "$work/data" -l "$work/server.log" -w start > /dev/null
trap 'as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null

# measure WORKLOAD SIDE CLIENTS: messages per second, and p50/p99 of a
# script run (one cycle) in ms, from pgbench's per-transaction log
measure() {
	local workload=$1 side=$2 clients=$3 per=$4 jobs tps
	jobs=$(( clients < 2 ? clients : 2 ))
	as_user psql -X -q -c "SELECT queue_clear('bench')" -c "TRUNCATE floor_q" -c "VACUUM ANALYZE" > /dev/null
	rm -f "$work"/log.*
	tps=$(cd "$work" && as_user pgbench -n -M prepared -c "$clients" -j "$jobs" -T "$seconds" \
		-f "workloads/${workload}_${side}.sql" -l --log-prefix="$work/log" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	read -r p50 p99 < <(cat "$work"/log.* | awk '{print $3}' | sort -n |
		awk '{a[NR]=$1} END {printf "%.2f %.2f\n", a[int(NR*0.5)]/1000, a[int(NR*0.99)]/1000}')
	printf "%s %s\n" "$(awk -v t="$tps" -v p="$per" 'BEGIN {printf "%.0f", t*p}')" "$p50 $p99"
}

report="$repo/BENCHMARKS.md"
{
	echo "# Benchmarks"
	echo
	echo "Measured by \`bash bench/run.sh $seconds\` on $(date -u +%Y-%m-%d): $(nproc) cores,"
	echo "$(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r), PostgreSQL $(as_user psql -XAtc 'SHOW server_version')."
	echo "Each figure is one ${seconds} s pgbench run (\`-M prepared\`) on one throwaway server with:"
	echo
	echo '```'
	echo "$settings"
	echo '```'
	echo
	echo "The floor is the same work as plain prepared SQL on a minimal table of the same shape"
	echo "(bench/workloads/*_floor.sql); the ratio is extension / floor."
	echo
	echo "| workload | clients | extension msg/s | floor msg/s | ratio | extension p50 / p99 ms | floor p50 / p99 ms |"
	echo "|---|---|---|---|---|---|---|"
	for workload in cycle batch; do
		per=1
		[ "$workload" = batch ] && per=100
		for clients in 1 4 16; do
			read -r q_rate q_p50 q_p99 < <(measure "$workload" queue "$clients" "$per")
			read -r f_rate f_p50 f_p99 < <(measure "$workload" floor "$clients" "$per")
			ratio=$(awk -v a="$q_rate" -v b="$f_rate" 'BEGIN {printf "%.2f", a/b}')
			echo "| $workload | $clients | $q_rate | $f_rate | $ratio | $q_p50 / $q_p99 | $f_p50 / $f_p99 |"
		done
	done
	echo
	echo "Latency is per script run: three transactions (put, get, delete) for cycle; three"
	echo "statements of 100 messages each for batch."
	echo
	IFS='|' read -r wakes p50 p99 < <(as_user psql -X -q -At \
		-c "SET bench.rounds = 1000" -c "SET bench.getter_dsn = 'host=$work port=55480 dbname=postgres'" \
		-f "$work/workloads/wakeup.sql" | tail -n 1)
	echo "Long polling (bench/workloads/wakeup.sql): a getter waits in \`queue_get(..., wait => '5 s')\`,"
	echo "another session puts a message; from the end of the put's commit to the get's return,"
	echo "over $wakes wakes: **p50 $p50 ms, p99 $p99 ms**."
} > "$report"
cat "$report"
