#!/usr/bin/env bash
# The benchmark: the queue extension against the raw-SQL floor (the same
# work as plain prepared SQL on a minimal table of the same shape), in the
# same run, on the same throwaway server, driven by the same client
# (pgbench -M prepared), with durable settings (fsync and synchronous_commit
# on).  Prints a Markdown section, and for bench/run.sh one line per target
# (bench/targets.tsv's floor.* rows): "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI.
#
# Workloads: cycle (put 1, get 1, delete 1, each its own transaction) and
# batch (put_batch 100, get 100, delete_batch 100) at 1, 4 and 16 clients,
# the cycle also against the floor's statements inside PL/pgSQL functions;
# backlog (get+delete latency with 1k, 100k, 1M visible messages waiting,
# BACKLOG_SIZES; LATENCY_RUNS, default 300, per round);
# in flight (the same with INVISIBLE_AHEAD, default 100,000, in-flight and
# as many delayed messages ahead);
# soak (cycle at 4 clients, SOAK_SECONDS, default 600, the extension's and
# then the floor's: throughput, table and index size and dead tuples per
# minute, or per SOAK_SAMPLE_SECONDS, plotted to bench/soak-pgVERSION.png
# unless PLOTS=no; then the CPU's own drift over 2 minutes without
# PostgreSQL, bench/cpu_drift.py, unless DRIFT=no);
# long-poll wake-up latency over WAKES (default 1000) wakes; memory of a
# backend after 1M calls (MEMORY_STATEMENTS).
# Usage: [ROUNDS=5] bash bench/floor.sh [seconds per cycle/batch measurement,
# default 15].  For a quick trial (not a measurement): SOAK_SECONDS=120
# BACKLOG_SIZES="1000 10000" MEMORY_STATEMENTS=10 bash bench/floor.sh 2
set -euo pipefail

bench_name=floor bench_port=55480
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-15}
soak_seconds=${SOAK_SECONDS:-600}
sample_seconds=${SOAK_SAMPLE_SECONDS:-60}
latency_runs=${LATENCY_RUNS:-300}
invisible_ahead=${INVISIBLE_AHEAD:-100000}
wake_rounds=${WAKES:-1000}
plots=${PLOTS:-yes}
# Rounds of each cycle and batch measurement.  Five, not three: at 1 client
# a run on this VM varied by more than twice from one run to the next with
# nothing changed (bench/experiments/worker_vacuum_ab/), so the median of
# three fell on either side of the cycle's target by chance.
round_count=${ROUNDS:-5}
[ "$plots" = no ] || need gnuplot gnuplot-nox

start_durable_server
run_steal=$(steal_now)

# p50_p99 DECIMALS: p50 and p99 in ms of the script runs in pgbench's
# per-transaction logs $work/log.*
p50_p99() {
	cat "$work"/log.* | awk '{print $3}' | sort -n |
		awk -v d="$1" '{a[NR]=$1} END {printf "%.*f %.*f\n", d, a[int(NR*0.5)]/1000, d, a[int(NR*0.99)]/1000}'
}

# measure WORKLOAD SIDE CLIENTS PER: messages per second; p50 and p99 of a
# script run (one cycle) in ms, from pgbench's per-transaction log; CPU time
# (all processes: server, client, WAL writer) and WAL bytes per message;
# the share of both cores busy in %
measure() {
	local workload=$1 side=$2 clients=$3 per=$4 jobs tps
	jobs=$(( clients < 2 ? clients : 2 ))
	reset_sides
	rm -f "$work"/log.*
	cost_start
	tps=$(cd "$work" && pgbench_as "$side" -n -M prepared -c "$clients" -j "$jobs" -T "$seconds" \
		-f "workloads/${workload}_${side}.sql" -l --log-prefix="$work/log" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p')
	echo "$(awk -v t="$tps" -v p="$per" 'BEGIN {printf "%.0f", t * p}')" "$(p50_p99 2)" \
		"$(cost_per_message "$(awk -v t="$tps" -v p="$per" -v s="$seconds" 'BEGIN {print t * p * s}')")"
}

# fill VISIBLE DELAYED INFLIGHT: both sides hold that many messages
fill() {
	as_user psql -X -q -v visible="$1" -v delayed="$2" -v inflight="$3" \
		-f "$work/workloads/fill.sql" > /dev/null
}

# latency SIDE RUNS: p50 and p99 in ms of one get+delete, 1 client
latency() {
	rm -f "$work"/log.*
	(cd "$work" && pgbench_as "$1" -n -M prepared -c 1 -t "$2" -f "workloads/getdel_$1.sql" \
		-l --log-prefix="$work/log" > /dev/null 2>&1)
	p50_p99 3
}

# getdel_row LABEL VISIBLE DELAYED INFLIGHT: fills both sides, measures a
# get+delete on each in three rounds of latency_runs, the sides taking turns (a
# single round can fall on an autovacuum or a checkpoint), prints a table
# row of the median p50 and p99; leaves the p50s in q50 and f50
getdel_row() {
	local q99 f99 round rounds=""
	fill "$2" "$3" "$4"
	for round in 1 2 3; do
		rounds+="$(latency queue "$latency_runs") $(latency floor "$latency_runs")"$'\n'
	done
	q50=$(awk '{print $1}' <<< "$rounds" | median)
	q99=$(awk '{print $2}' <<< "$rounds" | median)
	f50=$(awk '{print $3}' <<< "$rounds" | median)
	f99=$(awk '{print $4}' <<< "$rounds" | median)
	echo "| $1 | $q50 / $q99 | $f50 / $f99 |"
}

# ratio A B: A / B with two decimals
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'
}

# soak SIDE TABLE: SIDE's cycle at 4 clients for soak_seconds; per minute
# (per sample_seconds) the throughput (pgbench --aggregate-interval=1,
# summed) and, sampled at each minute's end, TABLE's size, its indexes' size
# and its dead tuples, in $work/soak_SIDE.dat
soak() {
	local side=$1 table=$2 samples=$(( soak_seconds / sample_seconds )) sampler
	# pgbench runs a little longer than asked, a sixth of a sample and at
	# least a second: it logs the last full second, and the last sample is
	# taken under load
	local extra=$(( sample_seconds / 6 > 1 ? sample_seconds / 6 : 1 ))
	reset_sides
	(
		for sample in $(seq "$samples"); do
			sleep "$sample_seconds"
			as_user psql -X -At -F ' ' -c "SELECT $sample,
				round(pg_relation_size('$table') / 1048576.0, 2),
				round(pg_indexes_size('$table') / 1048576.0, 2),
				n_dead_tup FROM pg_stat_user_tables WHERE relid = '$table'::regclass"
		done > "$work/soak.sizes"
	) &
	sampler=$!
	rm -f "$work"/soak.log*
	(cd "$work" && pgbench_as "$side" -n -M prepared -c 4 -j 2 -T "$(( soak_seconds + extra ))" \
		-l --aggregate-interval=1 --log-prefix="$work/soak.log" \
		-f "workloads/cycle_$side.sql" > /dev/null 2>&1)
	wait "$sampler"
	# a log per thread, a line per second (start, transactions, ...): summed per sample
	awk -v last="$samples" -v per="$sample_seconds" '{n[int((FNR - 1) / per) + 1] += $2}
		END {for (m in n) if (m + 0 <= last + 0) printf "%d %.0f\n", m, n[m] / per}' "$work"/soak.log* |
		sort -n > "$work/soak.tps"
	paste -d ' ' "$work/soak.tps" <(cut -d ' ' -f 2- "$work/soak.sizes") > "$work/soak_$side.dat"
}

# soak_figures FILE: from a soak_SIDE.dat, last minute's throughput / the
# first's, the table's size after the first minute, and its smallest and
# largest after that
soak_figures() {
	awk 'NR == 1 {first = $2; t1 = $3; tmin = $3} {last = $2}
		NR > 1 {tmax = ($3 > tmax ? $3 : tmax); tmin = ($3 < tmin ? $3 : tmin)}
		END {printf "%.2f %s %s %s\n", last / first, t1, tmin, tmax}' "$1"
}

# soak_plot: both sides' throughput and the extension's sizes, to
# bench/soak-pgVERSION.png
soak_plot() {
	as_user gnuplot -e "set terminal png size 900,500 noenhanced; set output '$work/soak.png';
		set xlabel 'minute'; set ylabel 'messages/s'; set y2label 'MiB'; set y2tics;
		set yrange [0:*]; set y2range [0:*]; set key outside bottom center horizontal maxrows 3;
		plot '$work/soak_queue.dat' using 1:2 with linespoints title 'extension messages/s (cycle, 4 clients)',
		'$work/soak_floor.dat' using 1:2 with linespoints title 'floor messages/s (the same, run after it)',
		'$work/soak_queue.dat' using 1:3 axes x1y2 with linespoints title 'queue_storage.messages MiB',
		'' using 1:4 axes x1y2 with linespoints title 'its indexes MiB',
		'$work/soak_floor.dat' using 1:3 axes x1y2 with linespoints title 'floor_q MiB'"
	cp "$work/soak.png" "$repo/bench/soak-pg$pgver.png"
}

{
	echo "## Against the raw-SQL floor"
	echo
	echo "\`bash bench/floor.sh $seconds\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version')."
	[ "${THROUGHPUT:-yes}" = no ] ||
		echo "Each cycle and batch figure is the median of $round_count runs of ${seconds} s (pgbench \`-M prepared\`)."
	echo "Extension and floor take turns, on one throwaway server with:"
	echo
	echo '```'
	echo "$durable_settings"
	echo '```'
	echo
	echo "Before any measurement the server's WAL is warmed (bench/lib.sh, warm_wal): $warm_segments segments"
	echo "switched through and a checkpoint, so that WAL segments are reused as on a server that has been"
	echo "running, not created and zero-filled by the backends as on a new one."
	echo
	echo "The floor is the same work as plain prepared SQL on a minimal table of the same shape"
	echo "(bench/workloads/*_floor.sql); the ratio is extension / floor. The floor's sessions run with"
	echo "\`$floor_planner\`, the planner settings the extension's own statements use: without them the"
	echo "floor's prepared statements, planned while its table was empty, scan it sequentially."
	echo
	targets=""
	# THROUGHPUT=no (bench/run.sh, whose peers.sh measures the floor too)
	# leaves the throughput tables out
	if [ "${THROUGHPUT:-yes}" != no ]; then
		echo "| workload | clients | extension msg/s | floor msg/s | ratio | extension p50 / p99 ms | floor p50 / p99 ms | CPU µs per message, extension / floor | WAL bytes per message, extension / floor | cores busy %, extension / floor | stolen by the host % |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
		# Unmeasured warm-up of both sides: the first runs on a new server were
		# slower on both sides (cold caches), and would fall on whichever side
		# went first.
		measure cycle queue 1 1 > /dev/null
		measure cycle floor 1 1 > /dev/null
		functions_rows=""
		for workload in cycle batch; do
			per=1
			[ "$workload" = batch ] && per=100
			for clients in 1 4 16; do
				rounds=""
				row_steal=$(steal_now)
				for round in $(seq "$round_count"); do
					# the sides take turns, and which goes first alternates between rounds;
					# the cycle also runs the floor inside PL/pgSQL functions, in the same turn
					sides="queue floor"
					[ "$workload" = cycle ] && sides+=" floorfn"
					[ $(( round % 2 )) = 0 ] && sides=$(tr ' ' '\n' <<< "$sides" | tac | paste -sd ' ')
					declare -A result=()
					for side in $sides; do
						result[$side]=$(measure "$workload" "$side" "$clients" "$per")
					done
					rounds+="${result[queue]} ${result[floor]} ${result[floorfn]:-}"$'\n'
				done
				# columns: extension 1-6, floor 7-12, floor in functions 13-18 (see measure)
				for column in $(seq 18); do
					printf -v "m$column" "%s" "$(awk -v c="$column" '{print $c}' <<< "$rounds" | median)"
				done
				# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
				echo "| $workload | $clients | $m1 | $m7 | $(ratio "$m1" "$m7") | $m2 / $m3 | $m8 / $m9 | $m4 / $m10 | $m5 / $m11 | $m6 / $m12 | $(steal_since $row_steal) |"
				[ "$workload" = cycle ] &&
					functions_rows+="| $clients | $m1 | $m7 | $m13 | $(ratio "$m13" "$m7") | $(ratio "$m1" "$m13") | $m14 / $m15 |"$'\n'
				if [ "$workload" = cycle ]; then
					targets+=$(target_line floor.cycle "$(ratio "$m1" "$m7")×" "$(ratio "$m1" "$m7")" clients="$clients")$'\n'
				fi
				if [ "$workload" = batch ] && [ "$clients" = 4 ]; then
					targets+=$(target_line floor.batch "$m1 msg/s" "$m1")$'\n'
					# the CPU time per message the batch target leaves at the share
					# of the cores this run kept busy
					target_find floor.batch
					batch_need=$(awk -v b="$m6" -v n="$(nproc)" -v rate="$target_limit" \
						'BEGIN {printf "%.1f", n * b / 100 * 1e6 / rate}')
				fi
			done
		done
		echo
		echo "CPU time per message is the time all processes (server, pgbench, WAL writer) were on"
		echo "the $(nproc) cores during the run (/proc/stat), divided by the messages moved. At the share"
		echo "of the cores the batch at 4 clients kept busy, $(target_find floor.batch && echo "${target_bound#* }") messages/s would leave"
		echo "**$batch_need µs** of CPU time per message for everything; the floor, plain SQL"
		echo "inserting, updating and deleting the same rows, took the time in its column above."
		echo
		echo "Latency is per script run: three transactions (put, get, delete) for cycle; three"
		echo "statements of 100 messages each for batch."
		echo
		echo "### The floor inside functions"
		echo
		echo "The extension is called as SQL functions; so, in the same turns as the cycle above,"
		echo "the floor's three statements were also run each inside a PL/pgSQL function"
		echo "(bench/workloads/setup.sql, cycle_floorfn.sql): what calling the same work through"
		echo "server-side functions costs before any of the queue's own work."
		echo
		echo "| clients | extension msg/s | floor msg/s | floor in functions msg/s | functions / floor | extension / floor in functions | floor in functions p50 / p99 ms |"
		echo "|---|---|---|---|---|---|---|"
		printf "%s" "$functions_rows"
	fi
	echo
	echo "### Backlog"
	echo
	echo "Latency of one get + delete (two transactions, 1 client; median of three rounds of $latency_runs"
	echo "runs, the sides taking turns) with messages of"
	echo "1 KiB waiting (bench/workloads/fill.sql, getdel_*.sql):"
	echo
	echo "| visible messages waiting | extension p50 / p99 ms | floor p50 / p99 ms |"
	echo "|---|---|---|"
	for n in ${BACKLOG_SIZES:-1000 100000 1000000}; do
		getdel_row "$n" "$n" 0 0
		[ "$n" = 1000 ] && { q50_1k=$q50; f50_1k=$f50; }
	done
	echo
	backlog_ratio=$(ratio "$q50" "$q50_1k")
	target_find floor.backlog
	echo "p50 at the largest / p50 at 1k: extension **${backlog_ratio}×**," \
		"floor $(ratio "$f50" "$f50_1k")× (target $target_bound×)."
	echo
	echo "### In flight"
	echo
	echo "Latency of one get + delete (1 client; median of three rounds of $latency_runs runs), 1000 visible"
	echo "messages waiting, with"
	echo "none or with $(thousands "$invisible_ahead") in-flight and $(thousands "$invisible_ahead") delayed messages put before them:"
	echo
	echo "| invisible messages ahead | extension p50 / p99 ms | floor p50 / p99 ms |"
	echo "|---|---|---|"
	getdel_row 0 1000 0 0
	q50_none=$q50 f50_none=$f50
	invisible="$(( 2 * invisible_ahead / 1000 ))k"
	getdel_row $(( 2 * invisible_ahead )) 1000 "$invisible_ahead" "$invisible_ahead"
	echo
	inflight_ratio=$(ratio "$q50" "$q50_none")
	target_find floor.in_flight
	echo "p50 with $invisible invisible / p50 with none: extension **${inflight_ratio}×**," \
		"floor $(ratio "$f50" "$f50_none")× (target $target_bound×)."
	echo
	echo "### Soak"
	echo
	soak queue queue_storage.messages
	soak floor floor_q
	[ "$plots" = no ] || soak_plot
	echo "The extension's cycle at 4 clients for $soak_seconds s, then the floor's for as long (the"
	echo "machine's own drift shows in both); messages/s per minute from pgbench's"
	echo "--aggregate-interval=1 log, summed per minute; at the end of each"
	echo "minute, the size of the side's table, of its indexes, and its dead tuples:"
	[ "$sample_seconds" = 60 ] ||
		echo "(a trial, not a measurement: each \"minute\" here is a sample of $sample_seconds s)"
	echo
	echo "| minute | extension msg/s | table MiB | indexes MiB | dead tuples | floor msg/s | floor table MiB | floor indexes MiB | floor dead tuples |"
	echo "|---|---|---|---|---|---|---|---|---|"
	paste -d ' ' "$work/soak_queue.dat" <(cut -d ' ' -f 2- "$work/soak_floor.dat") |
		awk '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
	echo
	for side in queue floor; do
		read -r soak_ratio t1 tmin tmax < <(soak_figures "$work/soak_$side.dat")
		echo "$([ "$side" = queue ] && echo Extension || echo Floor): last minute / first minute **$soak_ratio** (target $(target_find floor.soak && echo "$target_bound")); table after the first minute $t1 MiB, later between $tmin and $tmax MiB."
		echo
		[ "$side" = queue ] && soak_ratio_queue=$soak_ratio
	done
	if [ "$plots" != no ]; then
		echo "![throughput and size over the soak](bench/soak-pg$pgver.png)"
		echo
	fi
	# DRIFT=no (bench/run.sh, which measures it once for all versions)
	if [ "${DRIFT:-yes}" != no ]; then
		sleep 60
		mapfile -t drift < <(python3 "$repo/bench/cpu_drift.py" 120)
		echo "The machine without PostgreSQL (bench/cpu_drift.py, after 60 s idle): a busy loop per core"
		echo "for 120 s, work per 10 s: ${drift[0]// /, }; last / first **${drift[1]}**."
		echo
	fi
	IFS='|' read -r wakes p50 p99 < <(as_user psql -X -q -At \
		-c "SET bench.rounds = $wake_rounds" -c "SET bench.getter_dsn = 'host=$work port=$bench_port dbname=postgres'" \
		-f "$work/workloads/wakeup.sql" | tail -n 1)
	echo "Long polling (bench/workloads/wakeup.sql): a getter waits in \`queue_get(..., wait => '5 s')\`,"
	echo "another session puts a message; from the end of the put's commit to the get's return,"
	echo "over $wakes wakes: **p50 $p50 ms, p99 $p99 ms**."
	echo
	echo "### Memory"
	echo
	IFS='|' read -r calls1 contexts1 total1 used1 calls2 contexts2 total2 used2 < <(as_user psql -X -q -At \
		-v statements="${MEMORY_STATEMENTS:-333}" -f "$work/workloads/memory.sql" | paste -sd '|')
	echo "One backend (bench/workloads/memory.sql, synchronous_commit off for speed) runs put, get and"
	echo "delete; pg_backend_memory_contexts, summed:"
	echo
	echo "| calls | memory contexts | total bytes | used bytes |"
	echo "|---|---|---|---|"
	echo "| $calls1 | $contexts1 | $total1 | $used1 |"
	echo "| $calls2 | $contexts2 | $total2 | $used2 |"
	echo
	printf "%s" "$targets"
	target_line floor.backlog "${backlog_ratio}×" "$backlog_ratio"
	target_line floor.in_flight "${inflight_ratio}×" "$inflight_ratio" invisible="$invisible"
	target_line floor.soak "$soak_ratio_queue" "$soak_ratio_queue"
	target_line floor.long_poll_p99 "$p99 ms" "$p99"
	memory_growth=$(awk -v a="$total2" -v b="$total1" 'BEGIN {printf "%.2f", a / b}')
	target_line floor.memory "${memory_growth}×" "$memory_growth" calls="$calls2" first_calls="$calls1"
	# shellcheck disable=SC2086
	echo "The hypervisor gave $(steal_since $run_steal) % of this VM's CPU time to other guests over this section's runs"
	echo "(/proc/stat's steal; the last column of the first table gives it for each row's runs)."
}
