#!/usr/bin/env bash
# The full benchmark: every speed target of the extension, on PostgreSQL 15
# and on the newest major the tests cover, in one run.  For each version:
#
#   bench/peers.sh   the extension beside pgmq and the raw-SQL floor, in
#                    paired rounds: the cycle at 1, 4 and 16 clients,
#                    synchronous_commit on and off; the consumer loop; the
#                    at-least-once cycle; the batch of 100; WAL per message;
#                    the durable cycle against its flush-bound limit
#   bench/pgq.sh     beside PgQ as shipped (Debian's package, pgqd's and
#                    PgQ's defaults), in paired rounds: 4 producers and 4
#                    consumers, batches of 100: messages consumed/s at full
#                    speed, put-to-consumer latency p50 at a paced 2,000
#                    msg/s
#   bench/scale.sh   10,000 queues; a get behind 10,000,000 visible and
#                    after 1,000,000 in flight
#   bench/herd.sh    1,000 long-polling getters and one put
#   bench/floor.sh   backlog, in flight, soak, long poll, memory (its
#                    throughput tables left out: peers.sh measures the floor)
#   bench/workers.sh our Node and Python Workers beside pg-boss and
#                    graphile-worker, and beside pgbench running their SQL
#   bench/callgrind.sh  the server's instructions per cycle (callgrind), the
#                    extension against the floor, and where they go
#   bench/policy.sh  a release (queue_release) beside an update
#   bench/topics.sh  a publish to 10 subscriptions, and to 1,000 of which
#                    10 match, beside ten puts in one transaction
#   bench/retention.sh  a delete that keeps its message beside one that
#                    does not; a get with 1,000,000 messages kept
#
# A version the machine's own packages do not offer runs in the chroot the
# tests use (test/chroot.sh), on a copy of the tree.  Before them, the
# machine's time for one 8 kB WAL write and its flush (pg_test_fsync,
# fdatasync, the server's default on Linux), from which the flush-bound
# limit of one client's cycle follows: three commits, three flushes.
#
# Writes each version's section of BENCHMARKS.md (the command and machine,
# every target with its figure and ✓ or ✗, then each script's report),
# bench/clients-pgN.png (throughput against clients) and bench/soak-pgN.png,
# and prints the report.  The sections of the versions a run leaves out
# (BENCH_VERSIONS) stay as they were, so the versions may be measured in
# separate runs.  Each script's report is kept in .cache/bench-run/pgN/.
# The targets are the rows of bench/targets.tsv.  Not part of CI; about 90
# minutes per version with the defaults.  bash bench/smoke.sh runs the
# first four in about a minute, to show that they run, not what they
# measure.
#
# Usage: PGMQ_SOURCE=pgmq-1.5.1.tar.gz [BENCH_VERSIONS="15 19"] bash bench/run.sh [seconds per run, default 10]
# A quick trial of the plumbing (not a measurement), of some scripts only:
#   PGMQ_SOURCE=... QUICK=1 [BENCH_SCRIPTS="herd floor"] bash bench/run.sh 2
set -euo pipefail

bench_name=run bench_port=55491 uses_pgmq=required
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-10}
# the versions the tests cover are listed in test/run.sh
newest=$(sed -n 's/^supported="\(.*\)"$/\1/p' "$repo/test/run.sh" | tr ' ' '\n' | sort -n | tail -n 1)
versions=${BENCH_VERSIONS:-"15 $newest"}
scripts=${BENCH_SCRIPTS:-peers pgq scale herd floor workers callgrind policy retention topics}

# Each script's settings: the defaults of a full run, or tiny ones for
# QUICK=1, which only shows that every piece runs.
if [ -n "${QUICK:-}" ]; then
	settings=(ROUNDS=1 SOAK_SECONDS=120 BACKLOG_SIZES="1000 10000" MEMORY_STATEMENTS=10
		DEEP=100000 AHEAD=10000 GETTERS=100 HERD_ROUNDS=20 JOBS=5000 CYCLES=200 RETAINED=10000
		SUBSCRIPTIONS=100)
else
	settings=(SOAK_SECONDS=300)
fi
settings+=(THROUGHPUT=no DRIFT=no)

# run_script VERSION SCRIPT [ARG...]: one script of bench/ on VERSION, on
# this machine or in its chroot; prints the script's output.  The chroot
# gets a fresh copy of the tree and of pgmq's source, and the soak's plot
# is copied back.
run_script() {
	local version=$1 script=$2 root
	shift 2
	if [ -x "/usr/lib/postgresql/$version/bin/postgres" ]; then
		env PGVER="$version" "${settings[@]}" PGMQ_SOURCE="$PGMQ_SOURCE" bash "$repo/bench/$script" "$@"
		return
	fi
	root=$(bash "$repo/test/chroot.sh" "$version" | tail -n 1)
	rm -rf "$root/build/queue"
	bash "$repo/test/copy_tree.sh" "$root/build/queue"
	cp "$PGMQ_SOURCE" "$root/build/pgmq.tar.gz"
	bash "$repo/test/in_chroot.sh" "$root" env PGVER="$version" "${settings[@]}" \
		PGMQ_SOURCE=/build/pgmq.tar.gz bash "/build/queue/bench/$script" "$@"
	cp "$root"/build/queue/bench/soak-pg*.png "$repo/bench/" 2> /dev/null || true
}

# fsync_usecs: pg_test_fsync's time in µs for one 8 kB write and its
# fdatasync, in the folder the servers' data lives in (/tmp)
fsync_usecs() {
	(cd /tmp && "$bindir/pg_test_fsync" -s 3 -f "$work/fsync.test" 2>/dev/null) |
		awk '/one 8kB write/ {on = 1} on && $1 == "fdatasync" {print $(NF - 1); exit}'
}

# plot_clients VERSION DATA: messages/s against clients from peers.sh's
# data lines, a panel for each workload and commit mode the rows measured
# at several client counts, to bench/clients-pgVERSION.png
plot_clients() {
	local version=$1 data=$2 workload mode panels="" count=0
	need gnuplot gnuplot-nox
	for workload in cycle batch; do
		for mode in durable async; do
			awk -F'|' -v w="$workload" -v m="$mode" '$2 == w && $3 == m {print $4, $5, $6, $7}' "$data" \
				> "$work/clients-$workload-$mode.dat"
			[ "$(wc -l < "$work/clients-$workload-$mode.dat")" -ge 2 ] || continue
			count=$(( count + 1 ))
			panels+="set title '$workload, synchronous_commit $([ "$mode" = durable ] && echo on || echo off)';
				plot '$work/clients-$workload-$mode.dat' using 1:2 with linespoints title 'extension',
				'' using 1:3 with linespoints title 'pgmq', '' using 1:4 with linespoints title 'floor'; "
		done
	done
	[ "$count" -gt 0 ] || return 0
	gnuplot -e "set terminal png size $(( 500 * count )),400 noenhanced; set output '$repo/bench/clients-pg$version.png';
		set multiplot layout 1,$count title 'PostgreSQL $version: messages/s against clients (bench/peers.sh)';
		set logscale x 2; set xrange [0.8:20]; set xtics (1, 4, 16); set xlabel 'clients'; set ylabel 'messages/s'; set yrange [0:*];
		set key top left; $panels
		unset multiplot"
}

# section_of FILE VERSION: the "## PostgreSQL VERSION" section of an earlier
# BENCHMARKS.md, heading included, up to the next version's heading
section_of() {
	[ -f "$1" ] || return 0
	awk -v h="## PostgreSQL $2" '
		/^## PostgreSQL / {on = ($0 == h)}
		on' "$1"
}

trap 'rm -rf "$work"' EXIT
# each script's report, kept in .cache/ (not in the repository) should a
# later step fail
reports="$repo/.cache/bench-run"
fsync_us=$(fsync_usecs)
flush_limit=$(awk -v u="$fsync_us" 'BEGIN {printf "%.0f", 1e6 / (3 * u)}')
# the command that made this run, as the report gives it
command="PGMQ_SOURCE=pgmq-1.5.1.tar.gz"
[ -n "${BENCH_VERSIONS:-}" ] && command+=" BENCH_VERSIONS=\"$versions\""
[ -n "${BENCH_SCRIPTS:-}" ] && command+=" BENCH_SCRIPTS=\"$scripts\""
[ -n "${QUICK:-}" ] && command+=" QUICK=1"
command+=" bash bench/run.sh $seconds"
for version in $versions; do
	version_started=$(date +%s)
	version_steal=$(steal_now)
	out="$reports/pg$version"
	rm -rf "$out"
	mkdir -p "$out"
	for script in $scripts; do
		run_script "$version" "$script.sh" "$seconds" > "$out/$script.md"
	done
	if [ -f "$out/peers.md" ]; then
		grep -h '^data|' "$out/peers.md" > "$out/data" || true
		plot_clients "$version" "$out/data"
	fi
	# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
	steal=$(steal_since $version_steal)
	{
		echo "## PostgreSQL $version"
		echo
		echo "Measured by \`$command\` on $(date -u +%Y-%m-%d), on the code of $(git -C "$repo" rev-parse --short HEAD),"
		echo "in $(( ($(date +%s) - version_started) / 60 )) minutes: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, Linux $(uname -r)."
		echo "One 8 kB WAL write and its fdatasync took **$fsync_us µs** (pg_test_fsync), so one client's"
		echo "durable cycle (three commits, three flushes) can do at most **$flush_limit cycles/s**."
		echo "The hypervisor gave **$steal %** of this VM's CPU time to other guests while this version ran"
		echo "(/proc/stat's steal)."
		echo
		echo "### Targets"
		echo
		echo "| target | measured | |"
		echo "|---|---|---|"
		for script in $scripts; do
			grep -h '^target|' "$out/$script.md" || true
		done | awk -F'|' '{gsub(/^ +| +$/, "", $4); printf "| %s | %s | %s |\n", $2, $3, $4}'
		echo
		for script in $scripts; do
			grep -v '^target|\|^data|' "$out/$script.md" | sed 's/^##/###/'
			echo
		done
		if [ -f "$out/peers.md" ]; then
			echo "![messages/s against clients](bench/clients-pg$version.png)"
			echo
		fi
	} > "$out/section.md"
done
python3 "$repo/bench/cpu_drift.py" 120 > "$work/drift"
mapfile -t drift < "$work/drift"

# The versions this run measured replace their sections of BENCHMARKS.md;
# the other versions the benchmark covers keep theirs.
report="$repo/BENCHMARKS.md"
for version in $(echo 15 "$newest" $versions | tr ' ' '\n' | sort -nu); do
	if [[ " $versions " == *" $version "* ]]; then
		cat "$reports/pg$version/section.md"
	else
		section_of "$report" "$version"
	fi
done > "$work/sections"
{
	echo "# Benchmarks"
	echo
	echo "The latest run of the benchmark on each PostgreSQL version, each with the command that made it."
	echo "How to run it and the other benchmark scripts: [bench/README.md](bench/README.md)."
	echo "Older runs: [bench/reports/](bench/reports/history.md)."
	echo
	echo "The machine without PostgreSQL on $(date -u +%Y-%m-%d) (bench/cpu_drift.py): a busy loop per core"
	echo "for 120 s, last 10 s / first 10 s **${drift[1]}**."
	echo
	awk '/^## PostgreSQL / {v = $3} /^### Targets/ {t = 1; next} /^### / {t = 0}
		t && /^\| / && /✓ \|$/ {met[v]++} t && /^\| / && /[✓✗] \|$/ {all[v]++; if (!(v in seen)) {seen[v] = 1; order[++n] = v}}
		END {for (i = 1; i <= n; i++) printf "PostgreSQL %s: met %d of %d targets.  \n", order[i], met[order[i]], all[order[i]]}' "$work/sections"
	echo
	cat "$work/sections"
} > "$report"
cat "$report"
