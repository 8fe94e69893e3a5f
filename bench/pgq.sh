#!/usr/bin/env bash
# The extension beside PgQ (Debian's postgresql-NN-pgq3 for this
# PostgreSQL, and pgqd, its ticker daemon, installed with apt when
# missing), in one run on one throwaway server (durable settings of
# bench/lib.sh, synchronous_commit on): 4 producers and 4 consumers at
# once, moving batches of 100, for SECONDS per run.  One driver for both
# sides, bench/pgq_run.py (psycopg 3, a process and a connection per
# producer or consumer), which says exactly what each side runs:
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
# Each round runs each side once, the one that goes first alternating, each
# run after both sides' queues were emptied (the extension's cleared,
# PgQ's dropped and made again) and vacuumed, and a checkpoint.  Per run:
# messages put per second, messages consumed per second (those whose
# consumption committed: deleted by a queue_delete_and_get that returned,
# or in a PgQ batch whose finish_batch committed), the latency p50 over
# every message received, WAL bytes, the server's CPU time (the
# postmaster and its children, pgqd's backends among them) and the
# driver's per message consumed.  While consumers fall behind producers the messages wait in
# the queue, and the latency holds that wait too.  The ratios extension /
# PgQ (messages consumed per second, latency p50) are taken per round and
# reported as median and interquartile range; a target is met when the
# median clears it and the unfavourable quartile is within 5 % of it
# (peers.sh's rule).  Prints a Markdown report, then a line per target
# (bench/targets.tsv's pgq.* rows): "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI; about 4 minutes with the defaults.
#
# Usage: [ROUNDS=7] bash bench/pgq.sh [seconds per run, default 10]
# A trial of the plumbing, not a measurement:
#   ROUNDS=1 WARM_WAL_SEGMENTS=2 bash bench/pgq.sh 2
set -euo pipefail

bench_name=pgq bench_port=55498
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-10}
rounds=${ROUNDS:-7}
pairs=4
consumer_sleep=1

# PgQ from Debian, and psycopg for the driver.  pgqd's package enables and
# starts a service of its own, for the machine's default cluster, where
# policy-rc.d lets it: this benchmark runs its own pgqd, so a service the
# install started is stopped and disabled.
apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" > /dev/null; }
[ -f "/usr/share/postgresql/$pgver/extension/pgq.control" ] || apt_install "postgresql-$pgver-pgq3"
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

# run_side SIDE: one run after a reset and a checkpoint: messages put and
# consumed per second, the latency p50 in ms, messages per batch received,
# WAL bytes, the server's and the driver's CPU µs per message consumed
run_side() {
	local side=$1 out put consumed p50 server driver batches wal
	reset
	as_user psql -XAtq -c CHECKPOINT
	[ "$side" = pgq ] && start_pgqd
	cost_start
	out=$(cd "$work" && as_user env IDLE_SLEEP="$consumer_sleep" \
		POSTMASTER_PID="$(head -n 1 "$work/data/postmaster.pid")" python3 pgq_run.py "$side" "$seconds" "$pairs")
	read -r put consumed p50 server driver batches <<< "$out"
	wal=$(cost_per_message "$(( consumed > 0 ? consumed : 1 ))" | awk '{print $2}')
	[ "$side" = pgq ] && stop_pgqd
	awk -v s="$seconds" -v p="$put" -v c="$consumed" -v l="$p50" -v b="$batches" -v w="$wal" \
		-v server="$server" -v driver="$driver" 'BEGIN {
		printf "%.0f %.0f %s %.0f %s %.1f %.1f\n", p / s, c / s, l, (b > 0 ? c / b : 0), w,
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
	"(postgresql-$pgver-pgq3 $(dpkg-query -W -f '${Version}' "postgresql-$pgver-pgq3"), $(pgqd -V)), $rounds rounds of $seconds s per side, $(date -u +%Y-%m-%d)"
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
# "round side put/s consumed/s p50 per-batch WAL server-CPU driver-CPU" per run
results=""
for round in $(seq "$rounds"); do
	for side in $(turns "$round" queue pgq); do
		results+="$round $side $(run_side "$side")"$'\n'
	done
done

# med SIDE FIELD: the median over the rounds of a side's FIELD of $results
med() { awk -v s="$1" -v f="$2" '$2 == s {print $f}' <<< "$results" | median; }
# per_round FIELD [DIGITS]: the spread of the extension's FIELD over PgQ's,
# round by round; "- - -" when no round gave both (nothing consumed)
per_round() {
	local ratios
	ratios=$(awk -v f="$1" '$2 == "queue" {a[$1] = $f} $2 == "pgq" {b[$1] = $f}
		END {for (r in a) if (a[r] ~ /^[0-9.]+$/ && b[r] ~ /^[0-9.]+$/ && b[r] > 0) print a[r] / b[r]}' <<< "$results")
	if [ -n "$ratios" ]; then spread "${2:-2}" <<< "$ratios"; else echo "- - -"; fi
}
echo "Medians of the rounds. WAL and CPU time per message consumed: the server's (the postmaster and its children)," \
	"and the driver's producers' and consumers' (bench/pgq_run.py, on the same cores)."
echo
echo "| side | put msg/s | consumed msg/s | put-to-consumer p50 ms | messages per batch received | WAL B/msg | server CPU µs/msg | driver CPU µs/msg |"
echo "|---|---|---|---|---|---|---|---|"
for side in queue pgq; do
	echo "| $([ "$side" = queue ] && echo extension || echo PgQ) | $(med "$side" 3) | $(med "$side" 4) | $(med "$side" 5)" \
		"| $(med "$side" 6) | $(med "$side" 7) | $(med "$side" 8) | $(med "$side" 9) |"
done
echo
read -r c1 cm c3 <<< "$(per_round 4)"
read -r p1 pm p3 <<< "$(per_round 3)"
read -r l1 lm l3 <<< "$(per_round 5 4)"
echo "Extension / PgQ, per round, median (interquartile range): messages consumed/s $cm ($c1–$c3)," \
	"messages put/s $pm ($p1–$p3), latency p50 $lm ($l1–$l3)."
echo
echo "| round | first | extension put/s | consumed/s | p50 ms | PgQ put/s | consumed/s | p50 ms |"
echo "|---|---|---|---|---|---|---|---|"
for round in $(seq "$rounds"); do
	awk -v r="$round" -v first="$(turns "$round" queue pgq | cut -d' ' -f1)" '$1 == r {v[$2] = $3 " | " $4 " | " $5}
		END {printf "| %s | %s | %s | %s |\n", r, first == "queue" ? "extension" : "PgQ", v["queue"], v["pgq"]}' <<< "$results"
done
echo
# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
echo "stolen by the host during the run: $(steal_since $run_steal) %"
echo
target_spread_line pgq.consumed "$c1" "$cm" "$c3" pairs="$pairs"
target_spread_line pgq.latency_p50 "$l1" "$lm" "$l3" pairs="$pairs"
