#!/usr/bin/env bash
# The extension beside pgmq and beside the raw-SQL floor, in one run on one
# throwaway server (durable settings of bench/lib.sh), driven by the same
# client (pgbench -M prepared).  Every put of every side stores one of
# 1,000 random 1 KiB bodies (workloads/setup.sql); the floor's table has
# the messages table's storage settings, and its get returns the body.
#
#   cycle   put 1, get 1, delete 1, each its own transaction
#           (pgmq: send, read 1, delete)
#   loop    the consumer loop: put 1, then queue_delete_and_get deleting
#           the message the last loop got and getting the next (two
#           transactions), against the floor's cycle
#   alo     the consumer loop with queue.durability = at_least_once (the
#           put is flushed, the delete_and_get commits without waiting for
#           its flush), against the floor's fully durable cycle
#   batch   put_batch 100, get 100, delete_batch 100
#           (pgmq: send_batch, read 100, delete of an id array)
#
# "durable" runs with synchronous_commit on (the WAL flush decides, and at
# several clients group commit), "async" with it off (the CPU decides).
# Each row runs ROUNDS rounds (default 7); in a round every side runs once,
# taking turns in an order that moves round by round, each after its
# tables were emptied and vacuumed and a checkpoint, and each ending with
# a VACUUM of its table that counts in its messages/s and WAL (the
# extension's worker vacuums during a run, a plain table is left to a
# later autovacuum).  The ratio of the
# extension to each other side is taken per round, and reported as the
# median and the interquartile range of the rounds; a target is met when
# the median clears it and the lower quartile (the upper one, for a target
# "at most") is within 5 % of it.  The WAL flushes are timed in the run
# (track_wal_io_timing): the durable cycle of one client is weighed against
# the most three flushes of that time allow, and the report gives the most
# any cycle of three statements can reach (three flushes, and the same
# statements touching no table at one client, commits not waiting).
# Prints a table, then, for bench/run.sh, a line per target ("target|<target>
# |<figure>|<✓ or ✗>") and per row of the cycle and the batch
# ("data|workload|mode|clients|extension|pgmq|floor", messages/s, which
# run.sh plots).  Not part of CI; about 35 minutes with the defaults.
#
# pgmq comes from its release source (the pgmq-extension folder of
# github.com/pgmq/pgmq, PostgreSQL License), built and installed into this
# PostgreSQL: PGMQ_SOURCE names its .tar.gz.  Without PGMQ_SOURCE the pgmq
# side and its targets are left out, and the report says so (bench/smoke.sh
# runs it that way).  The targets are bench/targets.tsv's peers.* rows.
#
# Usage: [PGMQ_SOURCE=pgmq-1.5.1.tar.gz] [ROUNDS=7] [ROWS="cycle:async:1 ..."]
#        bash bench/peers.sh [seconds per run, default 8]
set -euo pipefail

bench_name=peers bench_port=55488 uses_pgmq=optional
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-8}
rounds=${ROUNDS:-7}
# workload:mode:clients, the rows of the report
rows=${ROWS:-"cycle:async:1 cycle:async:4 cycle:async:16 cycle:durable:1 cycle:durable:4 cycle:durable:16
	loop:async:1 loop:durable:1 alo:durable:1 alo:durable:4 batch:durable:4"}

if [ -n "${PGMQ_SOURCE:-}" ]; then
	install_pgmq
	start_server "track_wal_io_timing = on"
	as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null
	warm_wal
	pgmq_about="pgmq $(create_pgmq_queue)"
else
	start_server "track_wal_io_timing = on"
	as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null
	warm_wal
	pgmq_about="pgmq left out: PGMQ_SOURCE (pgmq's release .tar.gz) is not set"
fi

# sides ROW: the sides a row compares, the extension's first
sides() {
	local workload=${1%%:*} pgmq=pgmq
	[ -n "${PGMQ_SOURCE:-}" ] || pgmq=""
	case "$workload" in
		cycle | batch) echo "queue floor $pgmq" ;;
		loop | alo) echo "$workload floor" ;;
	esac
}

# The table each side leaves its dead rows in.
declare -A side_table=([queue]=queue_storage.messages [loop]=queue_storage.messages
	[alo]=queue_storage.messages [floor]=floor_q [pgmq]=pgmq.q_bench)

# run_side WORKLOAD SIDE MODE CLIENTS: messages/s, WAL bytes per message,
# the WAL flushes of the run with their time in ms, the messages it moved,
# the machine's CPU µs per message and its cores' busy %, of one run after a
# reset and a checkpoint.  The run ends with the side's clean-up, a VACUUM
# of its table, whose time counts in the messages/s and whose WAL in the
# bytes per message: the extension's worker vacuums its table during the
# run, where a plain table (the floor's, pgmq's) leaves its dead rows to an
# autovacuum that may come after it.
run_side() {
	local workload=$1 side=$2 mode=$3 clients=$4 per=1 options="" script tps args=()
	[ "$workload" = batch ] && per=100
	script="${workload}_${side}"
	case "$side" in
		floor)
			options=$floor_planner
			# the consumer loop and the at-least-once cycle against the floor's cycle
			[ "$workload" = batch ] || script=cycle_floor
			;;
		loop) script=loop_queue args=(-D mid=0 -D rcpt=00000000-0000-0000-0000-000000000000) ;;
		alo)
			script=loop_queue options="-c queue.durability=at_least_once"
			args=(-D mid=0 -D rcpt=00000000-0000-0000-0000-000000000000)
			;;
	esac
	[ "$mode" = async ] && options+=" -c synchronous_commit=off"
	reset_sides
	as_user psql -XAtq -c CHECKPOINT
	cost_start
	local flushes_before
	flushes_before=$(wal_flushes)
	local cleanup_start cleanup_ms
	tps=$(cd "$work" && as_user env PGOPTIONS="$options" pgbench -n -M prepared -c "$clients" \
		-j "$(( clients < 2 ? clients : 2 ))" -T "$seconds" "${args[@]}" -f "workloads/$script.sql" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	cleanup_start=$(date +%s%N)
	as_user psql -XAtq -c "VACUUM ${side_table[$side]}"
	cleanup_ms=$(( ($(date +%s%N) - cleanup_start) / 1000000 ))
	local messages cost
	messages=$(awk -v t="$tps" -v p="$per" -v s="$seconds" 'BEGIN {print t * p * s}')
	cost=$(cost_per_message "$messages")
	awk -v m="$messages" -v s="$seconds" -v c="$cleanup_ms" 'BEGIN {printf "%.0f ", m / (s + c / 1000)}'
	awk -v b="$flushes_before" -v a="$(wal_flushes)" -v m="$messages" -v cost="$cost" \
		'BEGIN {split(b, x); split(a, y); split(cost, z)
			printf "%s %d %.3f %.0f %s %s\n", z[2], y[1] - x[1], y[2] - x[2], m, z[1], z[3]}'
}

# null_rate: cycles/s of the three statements touching no table
# (workloads/cycle_null.sql), 1 client, commits not waiting: what any cycle
# of three statements costs besides its flushes, at the least
null_rate() {
	(cd "$work" && as_user env PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared -c 1 \
		-T "$seconds" -f workloads/cycle_null.sql 2>&1 | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
}

lines="" flush_note=""
# target KEY Q1 MEDIAN Q3 NAME=VALUE...: the target line of KEY, if it has a target
target() {
	target_find "$1" || return 0
	lines+="$(target_spread_line "$@")"$'\n'
}

# Of the row being reported ($results: "round side msg/s WAL flushes ms
# messages CPU busy" per run; $ours, the extension's side):
# med SIDE FIELD: the median of a side's FIELD (3: msg/s, 4: WAL B/msg)
med() { side_values "$results" "$1" "$2" | median; }
# per_round SIDE FIELD: the spread of ours / SIDE's FIELD, round by round
per_round() { round_ratios "$results" "$ours" "$1" "$2" | spread; }

echo "## Beside pgmq and the floor"
echo
echo "\`bash bench/peers.sh $seconds\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), $pgmq_about, $rounds rounds of $seconds s per side, $(date -u +%Y-%m-%d)"
echo
echo "Ratios are the extension's (queue) messages/s over the other side's, per round: median (interquartile range)."
echo
echo "CPU: the machine's (every process, both cores) per message, and how busy its cores were, medians of the runs."
echo
echo "| workload | commit | clients | queue msg/s | pgmq msg/s | floor msg/s | queue / pgmq | queue / floor | WAL B/msg queue / pgmq / floor | WAL queue / floor | CPU µs/msg queue / pgmq / floor | cores busy |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
run_steal=$(steal_now)
# a warm-up run of each side, unmeasured: the first runs meet cold caches
for side in $(sides cycle); do run_side cycle "$side" durable 1 > /dev/null; done
for row in $rows; do
	IFS=: read -r workload mode clients <<< "$row"
	read -ra row_sides <<< "$(sides "$workload")"
	results=""
	for round in $(seq "$rounds"); do
		for side in $(turns "$round" "${row_sides[@]}"); do
			results+="$round $side $(run_side "$workload" "$side" "$mode" "$clients")"$'\n'
		done
	done
	ours=${row_sides[0]}
	rate_pgmq=- wal_pgmq=- cpu_pgmq=- busy_pgmq=- vs_pgmq=-
	for side in "${row_sides[@]}"; do
		declare "rate_$side=$(med "$side" 3)" "wal_$side=$(med "$side" 4)" "cpu_$side=$(med "$side" 8)" "busy_$side=$(med "$side" 9)"
	done
	rate_name=rate_$ours wal_name=wal_$ours cpu_name=cpu_$ours busy_name=busy_$ours
	rate_ours=${!rate_name} wal_ours=${!wal_name} cpu_ours=${!cpu_name} busy_ours=${!busy_name}
	read -r f1 fm f3 <<< "$(per_round floor 3)"
	vs_floor="$fm ($f1–$f3)"
	target "peers.$workload.$mode.$clients.floor" "$f1" "$fm" "$f3" clients="$clients"
	if [[ " ${row_sides[*]} " == *" pgmq "* ]]; then
		read -r p1 pm p3 <<< "$(per_round pgmq 3)"
		vs_pgmq="$pm ($p1–$p3)"
		target "peers.$workload.$mode.$clients.pgmq" "$p1" "$pm" "$p3" clients="$clients"
	fi
	read -r w1 wm w3 <<< "$(per_round floor 4)"
	wal_ratio="$wm ($w1–$w3)"
	target "peers.$workload.$mode.$clients.wal" "$w1" "$wm" "$w3" clients="$clients"
	if [ "$workload:$mode:$clients" = cycle:durable:1 ]; then
		# per round: the cycles/s three flushes of the run's mean flush time allow
		read -r l1 lm l3 <<< "$(awk -v o="$ours" '$2 == o && $5 > 0 {print $3 / (1000 / (3 * $6 / $5))}' <<< "$results" | spread)"
		flush_ms=$(awk -v o="$ours" '$2 == o && $5 > 0 {print $6 / $5}' <<< "$results" | median)
		target "peers.cycle.durable.1.flush" "$l1" "$lm" "$l3" flush="$(awk -v m="$flush_ms" 'BEGIN {printf "%.0f", m * 1000}')"
		# what each side's cycle waited for: its flushes, and their time
		flush_note="Durable cycle at 1 client, WAL flushes per cycle and their mean time (medians of the rounds):"
		for side in "${row_sides[@]}"; do
			flush_note+=" $side $(awk -v s="$side" '$2 == s && $7 > 0 {print $5 / $7}' <<< "$results" | median |
				xargs printf "%.2f") of $(awk -v s="$side" '$2 == s && $5 > 0 {print 1000 * $6 / $5}' <<< "$results" | median |
				xargs printf "%.0f") µs;"
		done
		# a client's cycle waits for its three flushes in turn, and for its
		# statements between them: the bound of any cycle of three statements
		null=$(for _ in 1 2 3; do null_rate; done | median)
		flush_note="${flush_note%;}. The same three statements touching no table (workloads/cycle_null.sql)"
		flush_note+=" run at $(printf "%.0f" "$null") cycles/s at 1 client with synchronous_commit off: with three flushes"
		flush_note+=" of the extension's mean time, no cycle of three statements can exceed"
		flush_note+=" $(awk -v f="$flush_ms" -v n="$null" 'BEGIN {printf "%.2f", 3 * f / (3 * f + 1000 / n)}') × the limit;"
	fi
	[ "$workload" = cycle ] || [ "$workload" = batch ] &&
		lines+="data|$workload|$mode|$clients|$rate_ours|$rate_pgmq|$rate_floor"$'\n'
	echo "| $workload | $([ "$mode" = durable ] && echo on || echo off) | $clients | $rate_ours | $rate_pgmq | $rate_floor" \
		"| $vs_pgmq | $vs_floor | $wal_ours / $wal_pgmq / $wal_floor | $wal_ratio" \
		"| $cpu_ours / $cpu_pgmq / $cpu_floor | $busy_ours / $busy_pgmq / $busy_floor % |"
done
echo
[ -n "$flush_note" ] && echo "${flush_note%;}." && echo
echo "stolen by the host during the run: $(steal_since $run_steal) %"
echo
printf "%s" "$lines"
