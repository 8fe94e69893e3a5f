#!/usr/bin/env bash
# The extension beside pgmq and beside the raw-SQL floor, in one run on one
# throwaway server (durable settings of bench/lib.sh), driven by the same
# client (pgbench -M prepared), 1 KiB bodies:
#
#   cycle   put 1, get 1, delete 1, each its own transaction
#           (pgmq: send, read 1, delete)
#   batch   put_batch 100, get 100, delete_batch 100
#           (pgmq: send_batch, read 100, delete of an id array)
#
# each with synchronous_commit on (durable: the WAL flush decides, and at
# several clients group commit) and off (the CPU decides, set per session),
# at CLIENTS clients; the three sides take turns, ROUNDS times, medians.
# Beside them, once per row, the same statements doing nothing
# (bench/workloads/*_null.sql): the round trips, parsing and transactions
# alone, the most any queue could do over these statements.
# Prints a table with messages/s, WAL bytes per message, and the ratios
# against pgmq and the floor beside the targets the extension aims at;
# then, for bench/run.sh, a line per target ("target|<target>|<figure>|<✓
# or ✗>") and per row ("data|workload|mode|clients|extension|pgmq|floor",
# messages/s, which run.sh plots).
# Not part of CI; about 20 minutes with the defaults.
#
# pgmq comes from its release source (the pgmq-extension folder of
# github.com/pgmq/pgmq, PostgreSQL License), built and installed into this
# PostgreSQL: PGMQ_SOURCE names its .tar.gz.  Without PGMQ_SOURCE the pgmq
# side and its targets are left out, and the report says so (bench/smoke.sh
# runs it that way).  The targets are bench/targets.tsv's peers.* rows.
#
# Usage: [PGMQ_SOURCE=pgmq-1.5.1.tar.gz] [ROUNDS=3] [CLIENTS="1 4 16"]
#        [WORKLOADS="cycle batch"] [MODES="durable async"] bash bench/peers.sh [seconds per run, default 15]
set -euo pipefail

bench_name=peers bench_port=55488 uses_pgmq=optional
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-15}
rounds=${ROUNDS:-3}
client_counts=${CLIENTS:-1 4 16}
workloads=${WORKLOADS:-cycle batch}
modes=${MODES:-durable async}

if [ -n "${PGMQ_SOURCE:-}" ]; then
	install_pgmq
	start_durable_server
	sides="queue pgmq floor" pgmq_about="pgmq $(create_pgmq_queue)"
else
	start_durable_server
	sides="queue floor" pgmq_about="pgmq left out: PGMQ_SOURCE (pgmq's release .tar.gz) is not set"
fi

# run_side WORKLOAD SIDE MODE CLIENTS: messages/s and WAL bytes per message
# of one run, every side's queue emptied first
run_side() {
	local workload=$1 side=$2 mode=$3 clients=$4 per=1 options="" tps
	[ "$workload" = batch ] && per=100
	[ "$side" = floor ] && options=$floor_planner
	[ "$mode" = async ] && options+=" -c synchronous_commit=off"
	reset_sides
	cost_start
	tps=$(cd "$work" && as_user env PGOPTIONS="$options" pgbench -n -M prepared -c "$clients" \
		-j "$(( clients < 2 ? clients : 2 ))" -T "$seconds" -f "workloads/${workload}_${side}.sql" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	awk -v t="$tps" -v p="$per" 'BEGIN {printf "%.0f ", t * p}'
	cost_per_message "$(awk -v t="$tps" -v p="$per" -v s="$seconds" 'BEGIN {print t * p * s}')" |
		awk '{print $2}'
}

# turns ROUND: the sides in the order they take their turns in ROUND; who
# goes first moves round by round
turns() {
	local -a all
	local i
	read -ra all <<< "$sides"
	for i in "${!all[@]}"; do
		printf "%s " "${all[$(( (i + $1 - 1) % ${#all[@]} ))]}"
	done
}

# ratio A B: A / B with two decimals, "-" when B is ("-": a side left out)
ratio() {
	if [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; fi
}

# annotation KEY FIGURE: " (≥ 3.0) ✓", the target of KEY in
# bench/targets.tsv and whether FIGURE meets it; nothing when KEY has none
# or FIGURE is "-"
annotation() {
	if [ "$2" != - ] && target_find "$1"; then
		echo " ($target_bound) $(target_mark "$2")"
	fi
}

lines=""
# line KIND FIELDS...: a "target|..." or "data|..." line, printed after the table
line() {
	local IFS='|'
	lines+="$*"$'\n'
}

echo "## Beside pgmq"
echo
echo "\`bash bench/peers.sh $seconds\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), $pgmq_about, $rounds rounds, $(date -u +%Y-%m-%d)"
echo
echo "| workload | commit | clients | extension msg/s | pgmq msg/s | floor msg/s | round trips alone msg/s | ext / pgmq (target) | ext / floor (target) | round trips alone / floor | WAL B/msg ext / pgmq / floor (target) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run_steal=$(steal_now)
# a warm-up run of each side, unmeasured: the first runs meet cold caches
for side in $sides; do run_side cycle "$side" durable 1 > /dev/null; done
for workload in $workloads; do
	for mode in $modes; do
		for clients in $client_counts; do
			results=""
			for round in $(seq "$rounds"); do
				for side in $(turns "$round"); do
					results+="$side $(run_side "$workload" "$side" "$mode" "$clients")"$'\n'
				done
			done
			rate_pgmq=- wal_pgmq=-
			for side in $sides; do
				declare "rate_$side=$(awk -v s="$side" '$1 == s {print $2}' <<< "$results" | median)"
				declare "wal_$side=$(awk -v s="$side" '$1 == s {print $3}' <<< "$results" | median)"
			done
			rate_null=$(run_side "$workload" null "$mode" "$clients" | awk '{print $1}')
			vs_pgmq=$(ratio "$rate_queue" "$rate_pgmq")
			vs_floor=$(ratio "$rate_queue" "$rate_floor")
			null_floor=$(ratio "$rate_null" "$rate_floor")
			key="peers.$workload.$mode.$clients"
			echo "| $workload | $([ "$mode" = durable ] && echo on || echo off) | $clients | $rate_queue | $rate_pgmq | $rate_floor | $rate_null" \
				"| $vs_pgmq$(annotation "$key.pgmq" "$vs_pgmq")" \
				"| $vs_floor$(annotation "$key.floor" "$vs_floor") | $null_floor" \
				"| $wal_queue / $wal_pgmq / $wal_floor$(annotation "$key.wal" "$wal_queue") |"
			if [ "$vs_pgmq" != - ] && target_find "$key.pgmq"; then
				lines+=$(target_line "$key.pgmq" "${vs_pgmq}×" "$vs_pgmq" clients="$clients")$'\n'
			fi
			if target_find "$key.floor"; then
				lines+=$(target_line "$key.floor" "${vs_floor}× (round trips alone ${null_floor}×)" "$vs_floor" \
					clients="$clients")$'\n'
			fi
			if target_find "$key.wal"; then
				lines+=$(target_line "$key.wal" "$wal_queue B" "$wal_queue" clients="$clients")$'\n'
			fi
			line data "$workload" "$mode" "$clients" "$rate_queue" "$rate_pgmq" "$rate_floor"
		done
	done
done
echo
echo "stolen by the host during the run: $(steal_since $run_steal) %"
echo
printf "%s" "$lines"
