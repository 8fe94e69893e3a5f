#!/usr/bin/env bash
# What one message costs in the batch workload (put_batch 100, get 100,
# delete_batch 100), extension and floor, on the benchmark's throwaway
# server: messages/s, the share of both cores busy (all processes, from
# /proc/stat), CPU time and WAL bytes per message.  The CPU time per message
# says how many messages/s the machine's cores can carry at all.  Not part
# of CI; about two minutes.  Usage: bash bench/batch_cost.sh [clients,
# default 4] [seconds per run, default 15] (two runs per side, sides taking
# turns).
set -euo pipefail

bench_name=batch-cost bench_port=55482
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
clients=${1:-4}
seconds=${2:-15}

start_durable_server

# busy and total jiffies of all CPUs
cpu_jiffies() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

echo "batch at $clients clients, ${seconds} s runs, $(nproc) cores, PostgreSQL $pgver:"
for round in 1 2; do
	for side in queue floor; do
		reset_sides
		wal_before=$(as_user psql -XAtc "SELECT wal_bytes FROM pg_stat_wal")
		read -r busy_before total_before < <(cpu_jiffies)
		tps=$(cd "$work" && pgbench_as "$side" -n -M prepared -c "$clients" \
			-j "$(( clients < 2 ? clients : 2 ))" -T "$seconds" -f "workloads/batch_$side.sql" 2>&1 |
			awk '/^tps/ {print $3}')
		read -r busy_after total_after < <(cpu_jiffies)
		wal_after=$(as_user psql -XAtc "SELECT wal_bytes FROM pg_stat_wal")
		awk -v side="$side" -v round="$round" -v tps="$tps" -v seconds="$seconds" -v hz="$(getconf CLK_TCK)" \
			-v busy=$((busy_after - busy_before)) -v total=$((total_after - total_before)) \
			-v wal=$((wal_after - wal_before)) 'BEGIN {
			messages = tps * 100 * seconds
			printf "- %s, run %d: %.0f msg/s, cores busy %.0f %%, %.1f CPU-us and %.0f WAL bytes per message\n",
				side, round, tps * 100, 100 * busy / total, busy / hz * 1e6 / messages, wal / messages
		}'
	done
done
