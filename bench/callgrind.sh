#!/usr/bin/env bash
# The CPU instructions the server spends per message cycle (put 1, get 1,
# delete 1, each its own transaction: workloads/cycle_queue.sql), the
# extension against the raw-SQL floor doing the same work
# (workloads/cycle_floor.sql on floor_q, with lib.sh's floor_planner),
# counted by valgrind's callgrind (Debian's valgrind, installed if missing).
#
# How, the same for both sides:
# - one throwaway server, lib.sh's settings (shared_preload_libraries =
#   'queue') with synchronous_commit off: instructions are counted, not
#   flush waits.  Autovacuum and the extension's worker are off: they run
#   when the clock says, and under callgrind the work is some fifty times
#   slower against the clock, so which cycles they met would change from
#   run to run.  The setup (workloads/setup.sql: the queue, floor_q, the
#   1,000 random 1 KiB bodies every put of both sides picks from) and the
#   WAL's warming run at full speed; then the server starts again under
#   callgrind.  Its backends are forked, so callgrind follows each one into
#   a file of its own (callgrind.PID), and counts only inside PostgresMain
#   (--toggle-collect), a backend's whole session: a child otherwise
#   carries the counts of the postmaster before its fork, which grow as the
#   postmaster runs.
# - a run: both sides' tables emptied and vacuumed (lib.sh's reset_sides),
#   then pgbench -M prepared, 1 client, cycles of one side, under an
#   application_name of its own.  The server logs each connection with its
#   pid (log_connections, log_line_prefix); once those processes have ended
#   (callgrind writes a file as its process ends), the one with the most
#   instructions is the backend that ran the cycles (pgbench opens a short
#   connection of its own too).
# - per side, a run of N cycles (CYCLES, default 2000) and one of 2N:
#   (instructions(2N) - instructions(N)) / N is a cycle's, the connection's
#   start and end, the first calls' cache misses (relcache, catcache, the
#   plans) and pgbench's set-up cancelled out, both runs paying them alike.
#   An unmeasured run of each side first fills what outlives a backend
#   (shared buffers, emptied by the restart; the relcache init file), so
#   that the first measured runs find the server as the later ones do.
# - ROUNDS rounds (default 3), the side that goes first alternating; the
#   ratio extension / floor per round, reported as median and interquartile
#   range; the target (bench/targets.tsv's callgrind.cycle) is met when the
#   median is at most its threshold and the upper quartile within 5 % of it.
# - the profile: each function's instructions per cycle with what it calls
#   (callgrind_annotate --inclusive=yes), from the last round: the N run's
#   taken from the 2N run's, over N.  A table of the union of each side's
#   top 20, without the functions that hold the whole cycle on both sides
#   (PostgresMain and those above it).  Debian's postgres is stripped of
#   its static functions' names: callgrind shows those by address
#   (0x...), the same address on both sides.
#
# Instruction counts hardly move with the machine's load, so a run beside
# other work still compares; they leave out the kernel's work (system
# calls) and waiting.  A backend writes its pending statistics at most once
# a second, by the clock, so under callgrind a cycle pays for that less
# often than at full speed, on both sides.
# Prints a report and the target line ("target|<target>|<figure>|<✓ or ✗>")
# for bench/run.sh.  Not part of CI; about 7 minutes with the defaults on 2
# cores (36,400 cycles under callgrind).
#
# Usage: [CYCLES=2000] [ROUNDS=3] bash bench/callgrind.sh
#   (an argument, such as the seconds bench/run.sh passes every script, is
#   ignored)
set -euo pipefail

bench_name=callgrind bench_port=55498
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cycles=${CYCLES:-2000}
rounds=${ROUNDS:-3}
warmup_cycles=200
top=20
need valgrind valgrind

start_server "synchronous_commit = off
autovacuum = off
queue.enable_worker = off
log_connections = on
log_line_prefix = '%p '"
as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null
# the runs write some 100 MB of WAL with the defaults: they find its
# segments made, as on a server that has been running
warm_segments=32
warm_wal
as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null
mkdir "$work/cg"
chown "$user" "$work/cg"
# under callgrind now; valgrind's own words go to a log per process, the
# server's to server.log
as_user valgrind --tool=callgrind --collect-atstart=no --toggle-collect=PostgresMain --separate-recs=1 \
	--log-file="$work/cg/valgrind.%p.log" --callgrind-out-file="$work/cg/callgrind.%p" postgres -D "$work/data" >> "$work/server.log" 2>&1 &
server_job=$!
# pg_ctl's stop returns once the server is down, before callgrind has
# written the postmaster's file: the work directory goes once it has
trap 'as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; wait "$server_job" || true; rm -rf "$work"' EXIT
for _ in $(seq 300); do
	as_user pg_isready -q && break
	sleep 1
done
as_user pg_isready -q

# instructions FILE: the instructions a callgrind file counts
instructions() { awk '/^summary:/ {print $2}' "$1"; }

# run SIDE N NAME: N cycles of SIDE after a reset, under the application
# name callgrind-NAME (NAME differs from run to run); the callgrind file of
# the backend that ran them moved to $work/cg/NAME.out, its instructions in
# $ran.  (Called as it is, not in $(...), so that a failure ends the script.)
run() {
	local side=$1 n=$2 app="callgrind-$3" pid best=0 file="" count
	reset_sides
	(cd "$work" && PGAPPNAME=$app pgbench_as "$side" -n -M prepared -c 1 -t "$n" \
		-f "workloads/cycle_$side.sql" > "$work/pgbench.log")
	while read -r pid; do
		# callgrind writes a process's file as the process ends
		while kill -0 "$pid" 2> /dev/null; do sleep 0.2; done
		count=$(instructions "$work/cg/callgrind.$pid")
		if [ "$count" -gt "$best" ]; then best=$count file=$work/cg/callgrind.$pid; fi
	done < <(sed -n "s/^\([0-9]*\) .*connection authorized: .*application_name=$app\( .*\)\?\$/\1/p" "$work/server.log")
	if [ -z "$file" ]; then
		echo "no callgrind file of $app's backend in $work/cg" >&2
		exit 1
	fi
	mv "$file" "$work/cg/$3.out"
	ran=$best
}

# functions FILE: "instructions name" per function of a callgrind file,
# inclusive, every function (threshold 100 %); the name is callgrind's
# "file:function [object]"
functions() {
	callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$1" |
		sed -n 's/^ *\([0-9,][0-9,]*\) ([0-9. ]*%) *\(.*\)$/\1 \2/p' | grep -v ' PROGRAM TOTALS$' | tr -d ,
}

# per_cycle SIDE: per function of SIDE, "instructions-per-cycle name", from
# the last round's runs: the N run's from the 2N run's, over N
per_cycle() {
	awk -v n="$cycles" 'FNR == 1 {f++} {c = $1; $1 = ""; k = substr($0, 2); v[k] += f == 1 ? c : -c}
		END {for (k in v) if (v[k] > 0) printf "%.0f %s\n", v[k] / n, k}' \
		<(functions "$work/cg/r$rounds-$1-$(( 2 * cycles )).out") <(functions "$work/cg/r$rounds-$1-$cycles.out")
}

# short NAME: callgrind's "file:function [object]" as "function", or
# "function (object)" when the object is not postgres itself
short() {
	local name=${1#*:} object=""
	if [[ $name == *' ['*']' ]]; then
		object=${name##* [} name=${name% \[*}
		object=${object%]} object=${object##*/}
	fi
	if [ -n "$object" ] && [ "$object" != postgres ]; then name+=" ($object)"; fi
	echo "$name"
}

echo "## Server instructions per cycle (callgrind)"
echo
echo "\`CYCLES=$cycles ROUNDS=$rounds bash bench/callgrind.sh\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version')," \
	"$(valgrind --version), $rounds rounds of $(thousands "$cycles") and $(thousands $(( 2 * cycles ))) cycles per side, $(date -u +%Y-%m-%d)"
echo
echo "Instructions of the backend per cycle (put, get, delete; each its own transaction; 1 client, pgbench -M prepared," \
	"synchronous_commit off), from the difference of the two runs of each side."
echo
echo "| round | extension | floor | extension / floor |"
echo "|---|---|---|---|"
for side in queue floor; do run "$side" "$warmup_cycles" "warmup-$side"; done
results=""
declare -A per
for round in $(seq "$rounds"); do
	order="queue floor"
	[ $(( round % 2 )) -eq 0 ] && order="floor queue"
	for side in $order; do
		run "$side" "$cycles" "r$round-$side-$cycles"
		short_run=$ran
		run "$side" $(( 2 * cycles )) "r$round-$side-$(( 2 * cycles ))"
		per[$side]=$(( (ran - short_run) / cycles ))
	done
	ratio=$(awk -v q="${per[queue]}" -v f="${per[floor]}" 'BEGIN {printf "%.3f", q / f}')
	results+="$round ${per[queue]} ${per[floor]} $ratio"$'\n'
	echo "| $round | $(thousands "${per[queue]}") | $(thousands "${per[floor]}") | $ratio |"
done
read -r q1 qm q3 <<< "$(awk '{print $4}' <<< "$results" | spread)"
echo "| median | $(thousands "$(awk '{print $2}' <<< "$results" | median)") | $(thousands "$(awk '{print $3}' <<< "$results" | median)") | $qm (IQR $q1–$q3) |"
echo

per_cycle queue > "$work/profile.queue"
per_cycle floor > "$work/profile.floor"
# the functions that hold the whole cycle on both sides (99.5 % of it or
# more), one a line
whole=$(awk -v q="${per[queue]}" -v f="${per[floor]}" 'FNR == 1 {s++} {c = $1; $1 = ""; k = substr($0, 2)}
	s == 1 && c >= 0.995 * q {a[k]} s == 2 && c >= 0.995 * f && (k in a) {print k}' \
	"$work/profile.queue" "$work/profile.floor")
echo "### Where the instructions go"
echo
echo "Instructions per cycle of each function with what it calls (inclusive), round $rounds: the top $top of each side."
echo "0x...: a static function of postgres, named by its address where the build stripped its name (the same on both sides)."
echo "Left out: the $(grep -c . <<< "$whole") functions that hold the whole cycle on both sides (PostgresMain and those above it)."
echo
echo "| function | extension | floor | extension − floor |"
echo "|---|---|---|---|"
# each side's top functions, the whole cycle's left out, by the larger of
# the two figures
awk -v top="$top" -v whole="$whole" 'BEGIN {n = split(whole, w, "\n"); for (i = 1; i <= n; i++) skip[w[i]]}
	FNR == 1 {s++} {c = $1; $1 = ""; k = substr($0, 2)} k in skip {next}
	s == 1 {q[k] = c; if (++nq <= top) pick[k]} s == 2 {f[k] = c; if (++nf <= top) pick[k]}
	END {for (k in pick) printf "%d\t%d\t%d\t%s\n", (q[k] > f[k] ? q[k] : f[k]), q[k], f[k], k}' \
	<(sort -nr "$work/profile.queue") <(sort -nr "$work/profile.floor") |
	sort -t$'\t' -k1,1nr |
	while IFS=$'\t' read -r _ q f name; do
		echo "| $(short "$name") | $(thousands "$q") | $(thousands "$f") | $(thousands $(( q - f ))) |"
	done
echo
target_spread_line callgrind.cycle "$q1" "$qm" "$q3"
