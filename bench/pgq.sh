#!/usr/bin/env bash
# The extension beside PgQ (Debian's postgresql-NN-pgq3 for this
# PostgreSQL, and pgqd, its ticker daemon, installed with apt when
# missing), on one throwaway server (durable settings of bench/lib.sh,
# synchronous_commit on), 4 producers and 4 consumers at once moving
# batches of 100, in two phases of SECONDS per side each:
#
#   throughput  the producers put as fast as they can; the consumers stop
#               with them
#   paced       the producers offer PACE messages a second in all, a batch
#               of 100 each every 100 × 4 / PACE seconds on staggered
#               schedules; the consumers go on after the producers stopped
#               until they received every message put, or 6 s more
#               passed (PgQ's longest wait as shipped, below: 3 s of
#               ticker_max_lag, 1 s of ticker period, 1 s of the
#               consumer's sleep, and a second)
#
# The paced phase keeps the batches of 100 so that the phases differ in the
# pace alone: at 2,000 msg/s a producer puts every 200 ms, the 4 of them
# one every 50 ms; each message's latency runs from its own put, so the
# step adds no wait to it, and PgQ's ticker gathers some 500 events a
# batch whatever the producers' batches.  The cost: a run of 10 s puts 200
# batches, and messages of one batch fare alike, so its p99 rests on about
# 200 puts.
#
# One driver for both sides, bench/pgq_run.py (psycopg 3, a process and a
# connection per producer or consumer), which says exactly what each side
# runs:
#
#   queue  producers: queue_put_batch of 100 a transaction, on one queue;
#          consumers: the consumer loop on that queue, one
#          queue_delete_and_get(queue, the ids and receipts of the batch
#          it got last, 100, wait => '1 s') a transaction: deletes the
#          previous batch and claims the next
#   PgQ    producers: pgq.insert_event 100 times a transaction;
#          consumers: pgq.next_batch, pgq.get_batch_events,
#          pgq.finish_batch, one transaction a batch
#
# Every body is 1 KiB, one of bench_bodies (workloads/setup.sql) with the
# put's clock_timestamp() in front; the consumer receiving it takes
# clock_timestamp() less that stamp: the put-to-consumer latency.
#
# How PgQ's 4 consumers share the work: PgQ gives every consumer
# registered on a queue every event of it.  Its own way to share one
# queue's events among consumers, pgq_coop (cooperative subconsumers), is
# a separate project that Debian does not package; so PgQ gets 4 queues,
# producer i putting into bench_i and consumer i, registered on bench_i
# alone, taking them: the partitioning PgQ's design leaves, each event
# consumed once.  The extension's 4 consumers share its one queue.
#
# PgQ as shipped: a consumer sees events only once a tick closes their
# batch, and nothing of the ticker is tuned.  pgqd gets its defaults (its
# man page; ticker_period 1 s), told only where the throwaway server is
# (base_connstr) and where to log; the queues get PgQ's (ticker_max_count
# 500, ticker_max_lag 3 s).  PgQ's documentation says a consumer that gets
# no batch should sleep, not how long; its own consumer framework, Debian's
# python3-pgq on python3-skytools, sleeps loop_delay, 1 s by default, and
# so does this benchmark's PgQ consumer.  pgqd runs only during PgQ's runs.
#
# Each round runs each phase of each side once, the side that goes first
# alternating, each run after both sides' queues were emptied (the
# extension's cleared, PgQ's dropped and made again) and vacuumed, and a
# checkpoint.  Per run: messages put per second, messages consumed per
# second (those whose consumption committed: deleted by a
# queue_delete_and_get that returned, or in a PgQ batch whose
# finish_batch committed; over SECONDS, the paced drain's included), the
# latency p50 and p99 over every message received; for the throughput
# phase also messages per batch received, WAL bytes, the server's CPU time
# (the postmaster and its children, pgqd's backends among them) and the
# driver's per message consumed.  At full speed messages wait in the queue
# while consumers fall behind, and the throughput phase's latency holds
# that wait, growing with the length of the run: the latency target is
# the paced phase's.  A side kept up with the paced rate when it consumed
# 99 % of what was offered; a round where PgQ did not gives no latency
# ratio (its p50 would hold backlog wait, in the extension's favour).  The
# ratios extension / PgQ (throughput: messages consumed per second; paced:
# latency p50) are taken per round and reported as median and
# interquartile range; a target is met when the median clears it and the
# unfavourable quartile is within 5 % of it (peers.sh's rule).  Prints a
# Markdown report, then a line per target (bench/targets.tsv's pgq.*
# rows): "target|<target>|<figure>|<✓ or ✗>".  Not part of CI; about 7½
# minutes with the defaults (each round about 4 × SECONDS + 13 s: resets,
# checkpoints, the drains).
#
# Usage: [ROUNDS=7] [PACE=2000] bash bench/pgq.sh [seconds per run, default 10]
# A trial of the plumbing, not a measurement:
#   ROUNDS=1 WARM_WAL_SEGMENTS=2 bash bench/pgq.sh 2
set -euo pipefail

bench_name=pgq bench_port=55498
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-10}
rounds=${ROUNDS:-7}
pace=${PACE:-2000}
pairs=4
consumer_sleep=1 drain=6

# PgQ from Debian, and psycopg for the driver.  pgqd's package enables and
# starts a service of its own, for the machine's default cluster, where
# policy-rc.d lets it: this benchmark runs its own pgqd, so a service the
# install started is stopped and disabled.
apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" > /dev/null; }
# A PostgreSQL with no PgQ package in the apt sources (a prerelease) leaves
# PgQ out: the report says so, and its targets are ✗ with the reason.
if [ ! -f "/usr/share/postgresql/$pgver/extension/pgq.control" ] && ! apt_install "postgresql-$pgver-pgq3" 2> /dev/null; then
	why="PgQ left out: postgresql-$pgver-pgq3 could not be installed from this system's apt sources"
	printf "## Beside PgQ\n\n%s.\n\n" "$why"
	target_find pgq.consumed && echo "target|$(target_filled pairs="$pairs")|$why|✗"
	target_find pgq.latency_p50 && echo "target|$(target_filled pairs="$pairs" pace="$(thousands "$pace")")|$why|✗"
	exit 0
fi
python3 -c 'import psycopg' 2> /dev/null || apt_install python3-psycopg
if ! command -v pgqd > /dev/null; then
	apt_install pgqd
	if [ -d /run/systemd/system ]; then
		systemctl disable --now pgqd.service
	else
		invoke-rc.d pgqd stop && update-rc.d pgqd disable
	fi > /dev/null 2>&1 || true
fi

# pgqd's settings are its defaults but for where the server is and where to
# log (its own file, not the machine's syslog)
cp "$repo/bench/pgq_run.py" "$work/"
cat > "$work/pgqd.ini" <<-EOF
	[pgqd]
	logfile = $work/pgqd.log
	syslog = 0
	base_connstr = host=$work port=$bench_port application_name=pgqd
EOF
chown "$user" "$work/pgq_run.py" "$work/pgqd.ini"

# start_pgqd: pgqd started, and waited for until it ticks
start_pgqd() {
	local _
	background_as_user pgqd "pgqd -q '$work/pgqd.ini'"
	for _ in $(seq 100); do
		[ "$(as_user psql -XAtc "SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgqd' AND query LIKE '%pgq.ticker()%'")" -gt 0 ] && return
		sleep 0.1
	done
	echo "pgqd did not start ticking; its log:" >&2
	cat "$work/pgqd.log" >&2
	return 1
}
stop_pgqd() {
	stop_background pgqd
	rm -f "$work/pgqd.pid"
}

# reset: the extension's queue cleared, PgQ's queues dropped and made again
# with PgQ's defaults and their consumer, all vacuumed
reset() {
	as_user psql -X -q -v ON_ERROR_STOP=1 \
		-c "SELECT pgq.drop_queue(queue_name, true) FROM pgq.get_queue_info()" \
		-c "SELECT pgq.create_queue(q), pgq.register_consumer(q, 'bench')
			FROM (SELECT 'bench_' || i AS q FROM generate_series(1, $pairs) i) queues" > /dev/null
	reset_sides
}

# run_side SIDE [PACE]: one run after a reset and a checkpoint, at full
# speed or paced: messages put and consumed per second, the latency p50 and
# p99 in ms, messages per batch received, WAL bytes, the server's and the
# driver's CPU µs per message consumed
run_side() {
	local side=$1 out put consumed p50 p99 server driver batches wal
	reset
	as_user psql -XAtq -c CHECKPOINT
	[ "$side" = pgq ] && start_pgqd
	cost_start
	out=$(cd "$work" && as_user env IDLE_SLEEP="$consumer_sleep" \
		POSTMASTER_PID="$(head -n 1 "$work/data/postmaster.pid")" \
		python3 pgq_run.py "$side" "$seconds" "$pairs" ${2:+"$2" "$drain"})
	read -r put consumed p50 p99 server driver batches <<< "$out"
	wal=$(cost_per_message "$(( consumed > 0 ? consumed : 1 ))" | awk '{print $2}')
	[ "$side" = pgq ] && stop_pgqd
	awk -v s="$seconds" -v p="$put" -v c="$consumed" -v l="$p50" -v l99="$p99" -v b="$batches" -v w="$wal" \
		-v server="$server" -v driver="$driver" 'BEGIN {
		printf "%.0f %.0f %s %s %.0f %s %.1f %.1f\n", p / s, c / s, l, l99, (b > 0 ? c / b : 0), w,
			(c > 0 ? server * 1e6 / c : 0), (c > 0 ? driver * 1e6 / c : 0)}'
}

start_durable_server
# pgqd ends before the server, which lib.sh's trap stops
trap 'stop_pgqd; as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
as_user psql -X -q -c 'CREATE EXTENSION pgq'
pgq_version=$(as_user psql -XAtc "SELECT extversion FROM pg_extension WHERE extname = 'pgq'")
reset
# the settings in force, as PgQ and pgqd give them
queue_settings=$(as_user psql -XAtc "SELECT format('ticker_max_count %s, ticker_max_lag %s, ticker_idle_period %s',
	queue_ticker_max_count, queue_ticker_max_lag, queue_ticker_idle_period) FROM pgq.get_queue_info() LIMIT 1")
ticker_period=$(pgqd --ini | sed -n 's/^#\? *ticker_period *= *//p')
echo "## Beside PgQ"
echo
echo "\`bash bench/pgq.sh $seconds\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), PgQ $pgq_version" \
	"(postgresql-$pgver-pgq3 $(dpkg-query -W -f '${Version}' "postgresql-$pgver-pgq3"), $(pgqd -V)), $rounds rounds of" \
	"$seconds s per side and phase, paced at $pace msg/s, $(date -u +%Y-%m-%d)"
echo
echo "$pairs producers and $pairs consumers at once, batches of 100, synchronous_commit on. The extension: one queue," \
	"queue_put_batch and the consumer loop (queue_delete_and_get). PgQ: $pairs queues, a producer and a consumer each" \
	"(insert_event ×100; next_batch, get_batch_events, finish_batch), as shipped: pgqd's defaults (ticker_period" \
	"${ticker_period:-?} s, as \`pgqd --ini\` gives it), the queues' defaults ($queue_settings), a consumer with no batch" \
	"sleeping $consumer_sleep s (the loop_delay of PgQ's Python consumer framework)."
echo
run_steal=$(steal_now)
# a warm-up run of each side, unmeasured: the first runs meet cold caches
for side in queue pgq; do run_side "$side" > /dev/null; done
# "round side put/s consumed/s p50 p99 per-batch WAL server-CPU driver-CPU"
# per run, of each phase
results="" paced=""
for round in $(seq "$rounds"); do
	for side in $(turns "$round" queue pgq); do
		results+="$round $side $(run_side "$side")"$'\n'
	done
	for side in $(turns "$round" queue pgq); do
		paced+="$round $side $(run_side "$side" "$pace")"$'\n'
	done
done

# med RUNS SIDE FIELD: the median over the rounds of a side's FIELD of RUNS
med() { side_values "$1" "$2" "$3" | median; }
# per_round RUNS FIELD [DIGITS]: the spread of the extension's FIELD over
# PgQ's, round by round, of the rounds whose runs gave both numbers; "- - -"
# when none did
per_round() {
	local ratios
	ratios=$(round_ratios "$1" queue pgq "$2")
	if [ -n "$ratios" ]; then spread "${3:-2}" <<< "$ratios"; else echo "- - -"; fi
}
name() { if [ "$1" = queue ]; then echo extension; else echo PgQ; fi; }

# median_cells RUNS SIDE FIELD...: " | <median>" for each FIELD of SIDE's
# runs in RUNS, the cells of its row in a table of medians
median_cells() {
	local runs=$1 side=$2 field
	shift 2
	for field in "$@"; do printf " | %s" "$(med "$runs" "$side" "$field")"; done
}

# round_table RUNS FIELD...: a row per round of RUNS: the round, the side
# that went first, then the FIELDs (columns of a run's line) of the
# extension's run and of PgQ's
round_table() {
	local runs=$1 round
	shift
	for round in $(seq "$rounds"); do
		awk -v r="$round" -v first="$(name "$(turns "$round" queue pgq | cut -d' ' -f1)")" -v fields="$*" \
			'BEGIN {n = split(fields, f, " ")}
			$1 == r {row = ""; for (i = 1; i <= n; i++) row = row (i > 1 ? " | " : "") $f[i]; v[$2] = row}
			END {printf "| %s | %s | %s | %s |\n", r, first, v["queue"], v["pgq"]}' <<< "$runs"
	done
}

echo "### Throughput: producers at full speed"
echo
echo "Medians of the rounds. WAL and CPU time per message consumed: the server's (the postmaster and its children)," \
	"and the driver's producers' and consumers' (bench/pgq_run.py, on the same cores). The latency holds the wait" \
	"behind the backlog that builds up at full speed, and grows with the length of the run."
echo
echo "| side | put msg/s | consumed msg/s | put-to-consumer p50 ms | messages per batch received | WAL B/msg | server CPU µs/msg | driver CPU µs/msg |"
echo "|---|---|---|---|---|---|---|---|"
for side in queue pgq; do
	echo "| $(name "$side")$(median_cells "$results" "$side" 3 4 5 7 8 9 10) |"
done
echo
read -r c1 cm c3 <<< "$(per_round "$results" 4)"
read -r p1 pm p3 <<< "$(per_round "$results" 3)"
read -r t1 tm t3 <<< "$(per_round "$results" 5 4)"
echo "Extension / PgQ, per round, median (interquartile range): messages consumed/s $cm ($c1–$c3)," \
	"messages put/s $pm ($p1–$p3), latency p50 $tm ($t1–$t3)."
echo
echo "| round | first | extension put/s | consumed/s | p50 ms | PgQ put/s | consumed/s | p50 ms |"
echo "|---|---|---|---|---|---|---|---|"
round_table "$results" 3 4 5
echo

# kept up: a side consumed 99 % of what was offered, its own drain included
# ("yes" or "no", as a last field of each paced run)
paced=$(awk -v o="$pace" '{print $0, ($4 >= 0.99 * o ? "yes" : "no")}' <<< "$paced")
# the paced runs whose round's PgQ run kept up: the rounds that give a
# latency ratio
paced_fair=$(awk '$2 == "pgq" && $11 == "yes" {ok[$1] = 1} {run[NR] = $0; round[NR] = $1}
	END {for (i = 1; i <= NR; i++) if (round[i] in ok) print run[i]}' <<< "$paced")
kept() { awk -v s="$1" '$2 == s && $11 == "yes" {n++} END {print n + 0}' <<< "$paced"; }
echo "### Latency: producers paced at $pace msg/s"
echo
echo "The producers offer $pace msg/s in all; the consumers drain what is left after them (up to $drain s)," \
	"and consumed/s counts that over the run's $seconds s. Medians of the rounds; kept up: consumed at least 99 %" \
	"of what was offered."
echo
echo "| side | offered msg/s | put msg/s | consumed msg/s | put-to-consumer p50 ms | p99 ms | rounds kept up |"
echo "|---|---|---|---|---|---|---|"
for side in queue pgq; do
	echo "| $(name "$side") | $pace$(median_cells "$paced" "$side" 3 4 5 6) | $(kept "$side") of $rounds |"
done
echo
read -r l1 lm l3 <<< "$(per_round "$paced_fair" 5 4)"
read -r n1 nm n3 <<< "$(per_round "$paced_fair" 6 4)"
echo "Extension / PgQ, per round where PgQ kept up ($(kept pgq) of $rounds), median (interquartile range):" \
	"latency p50 $lm ($l1–$l3), latency p99 $nm ($n1–$n3)."
echo
echo "| round | first | extension consumed/s | p50 ms | p99 ms | kept up | PgQ consumed/s | p50 ms | p99 ms | kept up |"
echo "|---|---|---|---|---|---|---|---|---|---|"
round_table "$paced" 4 5 6 11
echo
# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
echo "stolen by the host during the run: $(steal_since $run_steal) %"
echo
target_spread_line pgq.consumed "$c1" "$cm" "$c3" pairs="$pairs"
target_spread_line pgq.latency_p50 "$l1" "$lm" "$l3" pairs="$pairs" pace="$(thousands "$pace")"
