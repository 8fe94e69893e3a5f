#!/usr/bin/env bash
# Where the CPU time of the batch workload (put_batch 100, get 100,
# delete_batch 100) goes, extension and floor, on the benchmark's throwaway
# server: perf samples every process on both cores for 10 s in the middle of
# a 25 s pgbench run at 4 clients, and this prints, per side, the share of
# all samples under a few PostgreSQL functions (a function's own samples and
# those of what it calls).  Not part of CI; about two minutes.  Needs perf
# (Debian's linux-perf).  Usage: bash bench/experiments/batch_profile/batch_profile.sh
set -euo pipefail

bench_name=batch-profile bench_port=55484
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
need perf linux-perf

start_durable_server

# what is reported, in the order printed
functions="heap_insert heap_update heap_delete heap_lock_tuple btinsert _bt_first
XLogInsert XLogFlush CommitTransactionCommand ExecInsertIndexTuples"

for side in queue floor; do
	reset_sides
	(cd "$work" && pgbench_as "$side" -n -M prepared -c 4 -j 2 -T 25 \
		-f "workloads/batch_$side.sql" 2>&1 | awk -v s="$side" '/^tps/ {printf "%s: %.0f msg/s\n", s, $3 * 100}') &
	sleep 8
	perf record -a -g -o "$work/perf.$side" -- sleep 10 > /dev/null 2>&1
	wait
	perf report -i "$work/perf.$side" --children --sort sym --stdio -g none 2> /dev/null |
		awk -v list="$functions" -v side="$side" '
			BEGIN {n = split(list, f, /[ \n]+/); for (i = 1; i <= n; i++) want[f[i]] = i}
			$NF in want && !($NF in share) {share[$NF] = $1}
			/pv_native_safe_halt|default_idle$/ && !idle {idle = $1}
			END {
				for (i = 1; i <= n; i++) printf "  %s %s\n", f[i], (f[i] in share ? share[f[i]] : "0%")
				printf "  idle (both cores) %s\n", idle
			}'
done
