#!/usr/bin/env bash
# What a durable cycle (put, get, delete; three commits) waits for: the WAL
# flushes.  For the extension and the raw-SQL floor, at 1, 4 and 16 clients,
# on the benchmark's durable server: cycles/s, WAL flushes per second and
# per cycle, commits per flush (how many commits one fdatasync made
# durable: group commit), and the share of the run the server spent inside
# fdatasync, and inside the WAL's writes and fdatasync (track_wal_io_timing;
# every process's, the WAL writer's too, so the shares may overlap).  A side
# whose statements already finish while the flush before theirs runs gains
# nothing from spending less CPU.  With PGMQ_SOURCE (pgmq's release
# .tar.gz, as for peers.sh), pgmq's cycle too.  PostgreSQL 15 to 17
# (pg_stat_wal lost its flush counts in 18).  Not part of CI; about 2
# minutes.
# SETTINGS adds lines to the server's configuration (commit_delay, ...).
# Usage: [PGMQ_SOURCE=pgmq-1.5.1.tar.gz] [SETTINGS="commit_delay = 100"]
#        bash bench/experiments/flushes/flushes.sh [seconds, default 10]
set -euo pipefail

bench_name=flushes bench_port=55493 uses_pgmq=optional
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
seconds=${1:-10}
if [ "$pgver" -ge 18 ]; then
	echo "bench/experiments/flushes/flushes.sh: PostgreSQL $pgver keeps no flush counts in pg_stat_wal; use 15 to 17 (PGVER)" >&2
	exit 1
fi
sides="queue floor"

[ -n "${PGMQ_SOURCE:-}" ] && install_pgmq
start_server "track_wal_io_timing = on
${SETTINGS:-}"
as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null
if [ -n "${PGMQ_SOURCE:-}" ]; then
	create_pgmq_queue > /dev/null
	sides="queue pgmq floor"
fi
warm_wal

# commits of the database, the server's WAL flushes, and the time (ms) of
# the flushes and of the writes before them
counters() {
	as_user psql -X -A -t -F ' ' -c "SELECT pg_stat_force_next_flush()" \
		-c "SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()),
			wal_sync, wal_sync_time, wal_write_time FROM pg_stat_wal" | tail -n 1
}

echo "Durable cycle (synchronous_commit on), pgbench -M prepared, $seconds s per run,"
echo "PostgreSQL $pgver; fsync = on, fdatasync${SETTINGS:+; $SETTINGS}.  Flushes and their time: pg_stat_wal."
echo
echo "| side | clients | cycles/s | flushes/s | flushes per cycle | commits per flush | time in fdatasync | in write and fdatasync |"
echo "|---|---|---|---|---|---|---|---|"
for clients in 1 4 16; do
	for side in $sides; do
		reset_sides
		sleep 1
		read -r c0 s0 t0 w0 < <(counters)
		tps=$(cd "$work" && pgbench_as "$side" -n -M prepared -c "$clients" -j "$((clients < 2 ? 1 : 2))" \
			-T "$seconds" -f "workloads/cycle_$side.sql" 2>&1 | awk '/^tps/ {print $3}')
		sleep 1
		read -r c1 s1 t1 w1 < <(counters)
		awk -v side="$side" -v n="$clients" -v tps="$tps" -v secs="$seconds" \
			-v commits="$((c1 - c0))" -v syncs="$((s1 - s0))" -v ms="$t0 $t1 $w0 $w1" 'BEGIN {
				split(ms, t, " ")
				printf "| %s | %d | %.0f | %.0f | %.2f | %.2f | %.0f %% | %.0f %% |\n", side, n, tps,
					syncs / secs, syncs / (tps * secs), commits / syncs,
					100 * (t[2] - t[1]) / (secs * 1000), 100 * (t[2] - t[1] + t[4] - t[3]) / (secs * 1000)
			}'
	done
done
