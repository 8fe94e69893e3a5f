#!/usr/bin/env bash
# What one message costs in the batch workload (put_batch 100, get 100,
# delete_batch 100), extension and floor, on the benchmark's throwaway
# server: messages/s, the share of both cores busy (all processes, from
# /proc/stat), CPU time and WAL bytes per message.  The CPU time per message
# says how many messages/s the machine's cores can carry at all.  Not part
# of CI; about two minutes.  Usage: bash bench/experiments/batch_cost/batch_cost.sh [clients,
# default 4] [seconds per run, default 15] (two runs per side, sides taking
# turns).
set -euo pipefail

bench_name=batch-cost bench_port=55482
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
clients=${1:-4}
seconds=${2:-15}

start_durable_server

echo "batch at $clients clients, ${seconds} s runs, $(nproc) cores, PostgreSQL $pgver:"
for round in 1 2; do
	for side in queue floor; do
		reset_sides
		cost_start
		tps=$(cd "$work" && pgbench_as "$side" -n -M prepared -c "$clients" \
			-j "$(( clients < 2 ? clients : 2 ))" -T "$seconds" -f "workloads/batch_$side.sql" 2>&1 |
			awk '/^tps/ {print $3}')
		read -r cpu_us wal_bytes busy < <(cost_per_message "$(awk -v t="$tps" -v s="$seconds" 'BEGIN {print t * 100 * s}')")
		awk -v side="$side" -v round="$round" -v tps="$tps" -v cpu="$cpu_us" -v wal="$wal_bytes" -v busy="$busy" 'BEGIN {
			printf "- %s, run %d: %.0f msg/s, cores busy %s %%, %s CPU-us and %s WAL bytes per message\n",
				side, round, tps * 100, busy, cpu, wal
		}'
	done
done
