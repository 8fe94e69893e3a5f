#!/usr/bin/env bash
# Two builds of the extension on the same throwaway server, taking turns:
# the library of one is installed, the server restarted, each workload run;
# then the other's; ROUNDS times.  For a change that must not cost speed:
# the before and after of one run, on one machine.  The builds must share
# their SQL (the same extension version).  Not part of CI; about
# ROUNDS x 2 x (workloads x seconds + 10 s).
#
# Workloads (bench/workloads/*_queue.sql), at CLIENTS clients: cycle (put,
# get, delete), batch (put_batch 100, get 100, delete_batch 100), heartbeat
# (put, get, update, delete), heartbeat_batch (the batch with an
# update_batch between get and delete).  Prints messages/s of each run and
# the median of each build.
#
# WORKLOADS picks some of them ("cycle batch").  SYNCHRONOUS_COMMIT=off runs
# them with commits that do not wait for the flush (where the CPU decides).
#
# OLD_VERSION: the extension version of the old build, when its SQL differs
# from the new one's (an update between them).  The old build then works on
# a database of its own made at that version (old_side), the new one on the
# newest; the sweep is off for both (each build's worker would meet the
# other's database).
#
# Usage: [ROUNDS=3] [CLIENTS=4] bash bench/compare_builds.sh OLD_REF [NEW_REF,
# default: the working tree] [seconds per run, default 15]
set -euo pipefail

bench_name=compare bench_port=55485
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
old_ref=${1:?usage: bench/compare_builds.sh OLD_REF [NEW_REF] [seconds]}
new_ref=${2:-}
seconds=${3:-15}
rounds=${ROUNDS:-3}
clients=${CLIENTS:-4}
workloads=${WORKLOADS:-cycle batch heartbeat heartbeat_batch}
declare -A per_script=([cycle]=1 [batch]=100 [heartbeat]=1 [heartbeat_batch]=100)
pkglibdir=$(/usr/lib/postgresql/"$pgver"/bin/pg_config --pkglibdir)
installed=$work/installed.so
cp "$pkglibdir/queue.so" "$installed"

# install_library FILE: FILE as the installed queue.so, by a rename, so
# that a process that still has the old one mapped keeps it intact
install_library() {
	cp "$1" "$pkglibdir/queue.so.new"
	mv "$pkglibdir/queue.so.new" "$pkglibdir/queue.so"
}

# build NAME REF: the library of REF (empty: the working tree) in $work/NAME.so
build() {
	local name=$1 ref=$2 tree=$work/$1-tree
	if [ -n "$ref" ]; then
		git -C "$repo" archive --format=tar "$ref" | (mkdir -p "$tree" && tar -C "$tree" -xf -)
	else
		bash "$repo/test/copy_tree.sh" "$tree"
	fi
	make -s -C "$tree" PG_CONFIG="$bindir/pg_config" > "$work/$name-build.log" 2>&1
	cp "$tree/queue.so" "$work/$name.so"
	echo "$name: ${ref:-working tree} ($(git -C "$repo" rev-parse --short "${ref:-HEAD}")$([ -z "$ref" ] && echo ' + changes'))"
}
build old "$old_ref"
build new "$new_ref"

start_durable_server
if [ -n "${SYNCHRONOUS_COMMIT:-}" ]; then
	as_user psql -X -q -c "ALTER SYSTEM SET synchronous_commit = '$SYNCHRONOUS_COMMIT'"
fi
old_version=${OLD_VERSION:-}
old_db=postgres
if [ -n "$old_version" ]; then
	old_db=old_side
	as_user psql -X -q -c "ALTER SYSTEM SET queue.enable_worker = off" \
		-c "CREATE DATABASE old_side"
	as_user psql -X -q -d old_side -c "CREATE EXTENSION queue VERSION '$old_version'" \
		-c "SELECT queue_create('bench', message_ttl => NULL, max_dequeue_count => NULL)" > /dev/null
fi
trap 'install_library "$installed"; as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT

echo "$clients clients, ${seconds} s runs, $rounds rounds, $(nproc) cores, PostgreSQL $pgver${old_version:+, old build on extension $old_version}${SYNCHRONOUS_COMMIT:+, synchronous_commit $SYNCHRONOUS_COMMIT}"
for round in $(seq "$rounds"); do
	for side in old new; do
		as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null
		install_library "$work/$side.so"
		as_user pg_ctl -D "$work/data" -l "$work/server.log" -w start > /dev/null
		db=postgres
		[ "$side" = old ] && db=$old_db
		for workload in $workloads; do
			# each build touches only its own database
			bench_db=$db as_user psql -X -q -c "SELECT queue_clear('bench')" \
				-c "VACUUM (ANALYZE, TRUNCATE)" > /dev/null
			tps=$(cd "$work" && bench_db=$db pgbench_as queue -n -M prepared -c "$clients" \
				-j "$(( clients < 2 ? clients : 2 ))" -T "$seconds" \
				-f "workloads/${workload}_queue.sql" 2>&1 | awk '/^tps/ {print $3}')
			rate=$(awk -v t="$tps" -v p="${per_script[$workload]}" 'BEGIN {printf "%.0f", t * p}')
			echo "$workload $side $rate" >> "$work/results"
			echo "round $round, $side, $workload: $rate msg/s"
		done
	done
done

echo "median msg/s (old -> new, new/old):"
for workload in $workloads; do
	old=$(awk -v w="$workload" '$1 == w && $2 == "old" {print $3}' "$work/results" | median)
	new=$(awk -v w="$workload" '$1 == w && $2 == "new" {print $3}' "$work/results" | median)
	awk -v w="$workload" -v o="$old" -v n="$new" 'BEGIN {printf "- %s: %s -> %s (%.2f)\n", w, o, n, n / o}'
done
