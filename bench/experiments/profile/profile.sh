#!/usr/bin/env bash
# Where a cycle's instructions go: a throwaway server runs under callgrind
# (every backend profiled), pgbench runs CYCLES put/get/delete cycles of the
# extension, of the raw-SQL floor, of the floor inside PL/pgSQL functions and
# of the same statements touching no table, one client each, and the profile
# of each side's backend is summarised per cycle: its total, and for the
# extension and the floor the heap, btree and commit calls both make.  Needs valgrind (installed if
# missing).  Not part of CI; a few minutes.  Usage: bash bench/experiments/profile/profile.sh
# [cycles, default 2000].  WORKLOAD=batch profiles the batch of 100 instead
# (put_batch, get 100, delete_batch; the floor's and the null statements'
# batch files; rounds default 200) and reports per message.  Prints the summary; the callgrind
# files are kept in the directory it names.
set -euo pipefail

bench_name=profile bench_port=55481
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
workload=${WORKLOAD:-cycle}
case "$workload" in
	cycle) per=1 cycles=${1:-2000} sides="queue floor floorfn null" what="cycle (put, get, delete; each its own transaction)" ;;
	batch) per=100 cycles=${1:-200} sides="queue floor null" what="message of the batch of 100 (put 100, get 100, delete 100; each its own transaction)" ;;
	*) echo "WORKLOAD is cycle or batch" >&2; exit 2 ;;
esac
need valgrind valgrind

as_user initdb -D "$work/data" -A trust > /dev/null
printf "shared_preload_libraries = 'queue'\nqueue.enable_worker = off\nautovacuum = off\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = 55481\n" \
	"$work" >> "$work/data/postgresql.conf"
as_user valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$work/callgrind.%p" \
	postgres -D "$work/data" > "$work/server.log" 2>&1 &
trap 'as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null 2>&1 || true' EXIT
for _ in $(seq 120); do as_user pg_isready -q && break; sleep 1; done
as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null

# total instructions of a callgrind file, and of the named functions in it
total() { callgrind_annotate "$1" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }
inclusive() {
	callgrind_annotate --inclusive=yes "$1" 2> /dev/null |
		awk -v f=":$2 " '!done && index($0, f) {gsub(",", "", $1); print $1; done = 1}'
}

echo "Instructions per $what in the backend,"
echo "$cycles rounds, pgbench -M prepared, 1 client, PostgreSQL $pgver under callgrind."
echo "null: the same three statements touching no table (workloads/${workload}_null.sql)."
echo "Below queue and floor, the work any implementation of the cycle does, inclusive"
echo "(the heap's and the btree's calls write their WAL records inside them):"
echo
for side in $sides; do
	reset_sides
	# callgrind writes a process's file when it exits: the backend of
	# reset_sides's psql is gone once its file is there
	sleep 3
	before=$(ls "$work"/callgrind.* | sort)
	(cd "$work" && pgbench_as "$side" -n -M prepared -c 1 -t "$cycles" \
		-f "workloads/${workload}_$side.sql" > /dev/null)
	sleep 3
	# the pgbench backend: the new process with the most instructions
	backend=""
	best=0
	for f in $(comm -13 <(echo "$before") <(ls "$work"/callgrind.* | sort)); do
		n=$(total "$f")
		if [ "${n:-0}" -gt "$best" ]; then best=$n; backend=$f; fi
	done
	echo "- $side: $((best / cycles / per)) ($(basename "$backend"))"
	if [ "$side" = queue ] || [ "$side" = floor ]; then
		for f in heap_insert heap_multi_insert heap_lock_tuple heap_update heap_delete btinsert \
			btgettuple index_fetch_heap CommitTransactionCommand; do
			n=$(inclusive "$backend" "$f")
			echo "  - $f: $(( ${n:-0} / cycles / per )) ($(awk -v a="${n:-0}" -v b="$best" 'BEGIN {printf "%.1f", 100*a/b}') %)"
		done
	fi
done
echo
echo "callgrind files: $work"
