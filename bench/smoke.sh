#!/usr/bin/env bash
# A smoke run of the benchmark suite: scripts bench/run.sh runs
# (peers.sh, scale.sh, herd.sh, floor.sh, retention.sh, topics.sh), on this machine's PostgreSQL
# (PGVER picks the version), with settings so small that the whole run
# takes about a minute once the extension is built.  It measures nothing:
# it shows that each script runs to its end and prints its target lines,
# each with a number for its figure, whether the target is met or not.
# Writes nothing into the repository (no BENCHMARKS.md, no plots).  Without
# PGMQ_SOURCE, peers.sh leaves pgmq out and says so.
#
# Prints TAP: a line per script, then the plan; fails when a script did.
# Runs as root (through sudo otherwise); the servers are throwaway ones in
# /tmp, on unix sockets only, run as queuetest or $SUDO_USER (bench/lib.sh).
#
# Usage: bash bench/smoke.sh
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER,PGMQ_SOURCE bash "$0" "$@"
fi
bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(mktemp -d /tmp/queue-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT

# figures_ok FILE: FILE has target lines, and each one's figure (its third
# field) begins with a number
figures_ok() {
	grep -q '^target|' "$1" &&
		! awk -F'|' '/^target\|/ && $3 !~ /^[0-9]/ {bad = 1} END {exit !bad}' "$1"
}

number=0 failed=0
# smoke SCRIPT [SETTING...]: runs bench/SCRIPT with the settings, and 1 s
# per throughput run (the argument run.sh gives every script), prints its
# TAP line
smoke() {
	local script=$1 status=0 started took targets verdict=ok
	shift
	number=$(( number + 1 ))
	started=$(date +%s)
	env "$@" bash "$bench/$script" 1 > "$out/$script.out" 2> "$out/$script.err" || status=$?
	took=$(( $(date +%s) - started ))
	targets=$(grep -c '^target|' "$out/$script.out" || true)
	if [ "$status" -ne 0 ] || ! figures_ok "$out/$script.out"; then
		verdict="not ok" failed=$(( failed + 1 ))
	fi
	echo "$verdict $number - $script ran to its end, $targets target lines, each with a number ($took s)"
	if [ "$verdict" != ok ]; then
		echo "# exit status $status; the last lines it printed:"
		tail -n 15 "$out/$script.out" "$out/$script.err" | sed 's/^/# /'
	fi
	# where peers.sh left pgmq out, why
	grep -o 'pgmq left out: [^,]*' "$out/$script.out" | sed "s/^/# $script: /" || true
}

# Settings so small that each workload runs for a second or two, on every
# side peers.sh has without pgmq; floor.sh leaves its throughput tables
# out, as in run.sh (peers.sh measures the floor).  Warming a server's WAL,
# for figures of a server in its running state, would take most of the
# time.
export WARM_WAL_SEGMENTS=2
smoke peers.sh ROUNDS=1 ROWS="cycle:durable:1 loop:durable:1 alo:durable:1 batch:durable:4"
smoke scale.sh ROUNDS=1 DEEP=2000 AHEAD=1000
smoke herd.sh GETTERS=10 HERD_ROUNDS=5
smoke floor.sh THROUGHPUT=no DRIFT=no PLOTS=no SOAK_SECONDS=4 SOAK_SAMPLE_SECONDS=2 \
	BACKLOG_SIZES="1000 2000" LATENCY_RUNS=20 INVISIBLE_AHEAD=1000 WAKES=20 MEMORY_STATEMENTS=1
smoke retention.sh ROUNDS=1 RETAINED=2000
smoke topics.sh ROUNDS=1 SUBSCRIPTIONS=100
echo "1..$number"
[ "$failed" -eq 0 ]
