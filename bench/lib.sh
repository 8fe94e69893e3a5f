# Sourced by every benchmark script, the suite's in bench/ and the
# experiments' in bench/experiments/<name>/, each of which sets bench_name
# and bench_port first: runs the caller again under sudo unless root,
# installs and builds what the tests need (test/prepare.sh), and sets up a
# work directory holding the workloads (bench/workloads/, and an
# experiment's own *.sql beside its script), owned by the user the server
# runs as.
# Gives: repo, pgver, bindir, user, work, as_user, need, floor_planner,
# durable_settings, init_server, start_server, start_durable_server, install_pgmq,
# create_pgmq_queue, pgbench_as, reset_sides,
# cost_start, cost_per_message, steal_now, steal_since, wal_flushes, wal_records, median,
# thousands, target_find, target_mark, target_filled, target_line, turns, paired_runs,
# side_values, round_ratios, spread, spread_mark, target_spread_line.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# PGMQ_SOURCE, pgmq's release source (.tar.gz): a script that needs it sets
# uses_pgmq=required before sourcing this file, one that can do without it
# uses_pgmq=optional; the path is made absolute before anything else
if [ "${uses_pgmq:-}" = required ] || { [ "${uses_pgmq:-}" = optional ] && [ -n "${PGMQ_SOURCE:-}" ]; }; then
	if [ ! -f "${PGMQ_SOURCE:-}" ]; then
		echo "$0: set PGMQ_SOURCE to pgmq's release source (.tar.gz)" >&2
		exit 1
	fi
	PGMQ_SOURCE=$(realpath "$PGMQ_SOURCE")
fi
if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER,SOAK_SECONDS,BACKLOG_SIZES,MEMORY_STATEMENTS,ROUNDS,PACE,CLIENTS,WORKLOADS,DEEP,AHEAD,GETTERS,HERD_ROUNDS,PGMQ_SOURCE,BENCH_VERSIONS,BENCH_SCRIPTS,QUICK,THROUGHPUT,DRIFT,SYNCHRONOUS_COMMIT,WORKLOAD,IN_FLIGHT,MODES,OLD_VERSION,SETTINGS,WARM_WAL_SEGMENTS,SOAK_SAMPLE_SECONDS,ROWS,LATENCY_RUNS,INVISIBLE_AHEAD,WAKES,PLOTS,WAITERS,QUEUES,SENDS,BASELINE,NPM_CACHE,JOBS,CONCURRENCY,PGBOSS_WORKERS,CYCLES,RETAINED,SUBSCRIPTIONS bash "$0" "$@"
fi
pgver=$(bash "$repo/test/prepare.sh" | tail -n 1)
bindir=/usr/lib/postgresql/$pgver/bin
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi
work=$(mktemp -d "/tmp/queue-$bench_name.XXXXXX")
cp -r "$repo/bench/workloads" "$work/"
# an experiment's own workloads join the suite's, so that every script finds
# its files under workloads/ in the work directory
find "$(dirname "$0")" -maxdepth 1 -name '*.sql' -exec cp -t "$work/workloads/" {} +
chown -R "$user" "$work"

# as_user COMMAND...: as the server's user, connected to the throwaway server
as_user() {
	runuser -u "$user" -- env PATH="$bindir:/usr/bin:/bin" PGHOST="$work" PGPORT="$bench_port" PGDATABASE="${bench_db:-postgres}" "$@"
}

# need COMMAND PACKAGE: installs the Debian package unless COMMAND is there
need() {
	command -v "$1" > /dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" > /dev/null
}

# The extension plans its statements with these planner methods off (see
# src/queue_storage/session.c: a queue's table is often empty when its statistics are
# taken); the floor's sessions get the same, or their prepared statements,
# planned while the table was empty, scan it sequentially as dead rows
# pile up, and the floor is neither fast nor steady.
floor_planner="-c enable_seqscan=off -c enable_bitmapscan=off -c enable_mergejoin=off"

# The settings of the throwaway server that run.sh and batch_cost.sh measure
# on (printed in their reports).
durable_settings="shared_preload_libraries = 'queue'
shared_buffers = 512MB
max_connections = 50
fsync = on
synchronous_commit = on
wal_level = replica
checkpoint_timeout = 15min
min_wal_size = 4GB
max_wal_size = 4GB
autovacuum_naptime = 10s"

# install_pgmq: pgmq from its release source (PGMQ_SOURCE, a .tar.gz),
# built for this PostgreSQL and installed into it: "make" and "make
# install" apart (one "make install" leaves its generated install script
# out)
install_pgmq() {
	local dir
	tar -C "$work" -xzf "$PGMQ_SOURCE"
	dir=$(find "$work" -maxdepth 1 -type d -name 'pgmq*' | head -n 1)
	make -s -C "$dir" PG_CONFIG="$bindir/pg_config" > /dev/null
	make -s -C "$dir" PG_CONFIG="$bindir/pg_config" install > /dev/null
}

# create_pgmq_queue: pgmq created on the running server with its queue
# 'bench'; prints pgmq's version
create_pgmq_queue() {
	as_user psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION pgmq' \
		-c "SELECT pgmq.create('bench')" > /dev/null
	as_user psql -XAtc "SELECT extversion FROM pg_extension WHERE extname = 'pgmq'"
}

# start_durable_server: a throwaway server in $work with durable_settings on
# bench_port, stopped and removed on exit, set up with workloads/setup.sql,
# its WAL warmed.
#
# Warming the WAL: a server that has been running reuses its old WAL
# segments (renamed at each checkpoint, up to min_wal_size); a new one
# creates every 16 MB segment as it needs it and fills it with zeros in the
# backend that crossed into it (XLogFileInit stood out in a perf profile of
# the batch on a new server: bench/reports/history.md).
# 240 segments are switched through, then a checkpoint turns them into
# segments ready for reuse, so that every figure is taken on a server in
# its running state rather than in its first minutes, on both sides.
# WARM_WAL_SEGMENTS sets how many: a smoke run, which measures nothing,
# takes few.
warm_segments=${WARM_WAL_SEGMENTS:-240}
warm_wal() {
	as_user psql -X -q -c "DO \$\$BEGIN
		FOR i IN 1..$warm_segments LOOP
			PERFORM pg_logical_emit_message(false, 'bench', 'warm');
			PERFORM pg_switch_wal();
		END LOOP;
	END\$\$" -c CHECKPOINT
}

# init_server [MORE_SETTINGS]: the data directory of a throwaway server in
# $work/data, with durable_settings and MORE_SETTINGS (later lines win), on
# a unix socket in $work and bench_port
init_server() {
	as_user initdb -D "$work/data" -A trust > /dev/null
	printf "%s\n%s\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = %s\n" \
		"$durable_settings" "${1:-}" "$work" "$bench_port" >> "$work/data/postgresql.conf"
}

# start_server [MORE_SETTINGS] [OPEN_FILES]: a throwaway server made by
# init_server, started, stopped and removed on exit; OPEN_FILES raises its
# open files limit
start_server() {
	init_server "${1:-}"
	as_user bash -c "ulimit -n ${2:-$(ulimit -n)} && pg_ctl -D '$work/data' -l '$work/server.log' -w start" > /dev/null
	trap 'as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
}

start_durable_server() {
	start_server
	as_user psql -X -q -f "$work/workloads/setup.sql" > /dev/null
	warm_wal
}

# pgbench_as SIDE ARGS...: pgbench as the server's user, with the floor's
# planner settings when SIDE is floor or floorfn (the floor in functions)
pgbench_as() {
	local side=$1
	shift
	case "$side" in
		floor | floorfn) as_user env PGOPTIONS="$floor_planner" pgbench "$@" ;;
		*) as_user pgbench "$@" ;;
	esac
}

# reset_sides: both sides' tables (and pgmq's queue, where pgmq is
# installed) emptied and vacuumed before a measurement.
# TRUNCATE on: the messages table is created with vacuum_truncate off (the
# worker gives its room back, see src/worker/vacuum.c), and each measurement starts
# from an empty table, as the floor's TRUNCATE gives it.
reset_sides() {
	as_user psql -X -q -c "SELECT queue_clear('bench')" -c "TRUNCATE floor_q" \
		-c "DO \$\$BEGIN
			IF EXISTS (SELECT FROM pg_extension WHERE extname = 'pgmq') THEN
				PERFORM pgmq.purge_queue('bench');
			END IF;
		END\$\$" -c "VACUUM (ANALYZE, TRUNCATE)" > /dev/null
}

# busy, total (steal left out of both) and stolen jiffies of all CPUs,
# from /proc/stat
cpu_jiffies() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8, $9}' /proc/stat; }

# steal_now, then steal_since $(steal_now's output): the share in % of the
# CPU time that the hypervisor gave to other guests in between (/proc/stat's
# steal), what makes every figure of a contended run low, on both sides
steal_now() { cpu_jiffies | awk '{print $3, $2 + $3}'; }
steal_since() {
	local steal all
	read -r steal all < <(steal_now)
	awk -v s="$(( steal - $1 ))" -v a="$(( all - $2 ))" 'BEGIN {printf "%.0f\n", 100 * s / a}'
}

# cost_start, then cost_per_message MESSAGES after the run: the CPU time in
# µs (all processes: server, client, WAL writer) and the WAL bytes per
# message since cost_start, and the share of all cores busy in %
cost_start() {
	cost_wal=$(as_user psql -XAtc "SELECT wal_bytes FROM pg_stat_wal")
	read -r cost_busy cost_total _ < <(cpu_jiffies)
}
cost_per_message() {
	local wal busy total
	read -r busy total _ < <(cpu_jiffies)
	wal=$(as_user psql -XAtc "SELECT wal_bytes FROM pg_stat_wal")
	awk -v m="$1" -v hz="$(getconf CLK_TCK)" -v busy=$(( busy - cost_busy )) \
		-v total=$(( total - cost_total )) -v wal=$(( wal - cost_wal )) \
		'BEGIN {printf "%.1f %.0f %.0f\n", busy / hz * 1e6 / m, wal / m, 100 * busy / total}'
}

# wal_flushes: the WAL flushes (fsyncs) of the server since its start, and
# their time in ms, with track_wal_io_timing on: pg_stat_wal's before
# PostgreSQL 18, pg_stat_io's after
wal_flushes() {
	if [ "$(as_user psql -XAtc 'SHOW server_version_num')" -ge 180000 ]; then
		as_user psql -XAtF' ' -c "SELECT sum(fsyncs), sum(fsync_time) FROM pg_stat_io WHERE object = 'wal'"
	else
		as_user psql -XAtF' ' -c "SELECT wal_sync, wal_sync_time FROM pg_stat_wal"
	fi
}

# wal_records START END MESSAGES: the WAL between two positions, per record
# type (pg_waldump --stats=record), as the rows of a markdown table: type,
# records per message, bytes per message; the types of under 1 B a message
# left out
wal_records() {
	# pg_waldump's columns: type, count, record size, FPI size, combined
	# size, each size but the type's followed by its share in parentheses
	as_user "$bindir/pg_waldump" --stats=record -p "$work/data/pg_wal" -s "$1" -e "$2" |
		awk -v m="$3" '{gsub(/\([^)]*\)/, "")} $2 ~ /^[0-9]+$/ && $1 != "Total" && $5 > 0 {
			printf "%s|%.3f|%.0f\n", $1, $2 / m, $5 / m}' |
		sort -t'|' -k3 -nr | awk -F'|' '$3 >= 1 {printf "| %s | %s | %s |\n", $1, $2, $3}'
}

# median: the middle one of the numbers on standard input, blank lines
# skipped.  (The rounds' lines end in a newline and <<< adds one more: until
# that blank line was skipped, it sorted first, and every "median" of three
# rounds was their smallest, of five the second smallest.)
median() {
	sort -n | awk 'NF {a[++n] = $1} END {print a[int((n + 1) / 2)]}'
}

# thousands N: N with commas between thousands, 10000000 as 10,000,000
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<< "$1"; }

# The speed targets live in bench/targets.tsv, one row each after a header
# line, tab-separated: key, comparison (>=, <= or =), threshold (as the
# report shows it: commas between thousands allowed) and text.  A key may
# hold * for any text, and the first row whose key matches wins, so a
# specific row goes before a general one.  In the text, {target} stands for
# the comparison and threshold ("≥ 0.9"), {NAME} for a value the script
# passes (target_line).

# target_find KEY: reads KEY's row into target_op, target_limit (the
# threshold as a number), target_bound ("≥ 0.9") and target_text; fails
# when no row matches
target_find() {
	local key op threshold text
	while IFS=$'\t' read -r key op threshold text; do
		# shellcheck disable=SC2053 # the row's key is a pattern
		[[ $1 == $key ]] || continue
		case "$op" in
			'>=') target_bound="≥ $threshold" ;;
			'<=') target_bound="≤ $threshold" ;;
			'=') target_bound="= $threshold" ;;
			*) echo "bench/targets.tsv: $key: comparison $op is none of >=, <=, =" >&2; exit 1 ;;
		esac
		target_op=$op target_limit=${threshold//,/} target_text=$text
		return 0
	done < <(tail -n +2 "$repo/bench/targets.tsv")
	return 1
}

# target_mark FIGURE: ✓ when FIGURE meets the target target_find read, ✗
# when not and when FIGURE is no number (a run that failed)
target_mark() {
	awk -v f="$1" -v l="$target_limit" -v op="$target_op" 'BEGIN {
		ok = (f ~ /^[0-9.]+$/) && (op == ">=" ? f >= l : op == "<=" ? f <= l : f == l)
		print ok ? "✓" : "✗"}'
}

# target_filled [NAME=VALUE...]: the text of the target target_find read,
# its {target} and {NAME}s filled in
target_filled() {
	local text=${target_text//\{target\}/"$target_bound"} pair
	for pair in "$@"; do
		text=${text//\{${pair%%=*}\}/"${pair#*=}"}
	done
	echo "$text"
}

# target_line KEY SHOWN FIGURE [NAME=VALUE...]: the line bench/run.sh
# gathers, "target|<text>|<SHOWN>|<✓ or ✗>", with the text's {NAME}s
# filled in; FIGURE is the number SHOWN says, weighed against the target
target_line() {
	local key=$1 shown=$2 figure=$3
	shift 3
	if ! target_find "$key"; then
		echo "bench/targets.tsv has no target $key" >&2
		exit 1
	fi
	echo "target|$(target_filled "$@")|$shown|$(target_mark "$figure")"
}

# Paired rounds (peers.sh, pgq.sh, workers.sh): in each round every side
# runs once, the one that goes first moving round by round; a ratio between
# two sides is taken per round, and reported as the median and
# interquartile range of the rounds.

# The runs of paired rounds are lines "ROUND SIDE FIGURE...", a figure's
# FIELD counted from 1 as awk counts (the first figure is field 3).
# side_values RUNS SIDE FIELD: SIDE's FIELD of each run in RUNS, one a line
side_values() { awk -v s="$2" -v f="$3" '$2 == s {print $f}' <<< "$1"; }
# round_ratios RUNS A B FIELD: A's FIELD over B's, round by round, one a
# line, of the rounds in which both gave a number, B's above 0
round_ratios() {
	awk -v a="$2" -v b="$3" -v f="$4" '$2 == a {x[$1] = $f} $2 == b {y[$1] = $f}
		END {for (r in x) if (x[r] ~ /^[0-9.]+$/ && y[r] ~ /^[0-9.]+$/ && y[r] > 0) print x[r] / y[r]}' <<< "$1"
}

# turns ROUND SIDES...: the sides in the order they take their turns in
# ROUND; who goes first moves round by round
turns() {
	local round=$1 i
	shift
	local -a all=("$@")
	for i in "${!all[@]}"; do
		printf "%s " "${all[$(( (i + round - 1) % ${#all[@]} ))]}"
	done
}

# paired_runs SIDE...: rounds (the caller's $rounds) of the caller's
# run_side SIDE for each SIDE, taking turns (turns); a line "ROUND SIDE
# FIGURES..." per run, as side_values and round_ratios read them
paired_runs() {
	local round side
	for round in $(seq 1 "$rounds"); do
		for side in $(turns "$round" "$@"); do
			echo "$round $side $(run_side "$side")"
		done
	done
}

# spread [DIGITS]: "q1 median q3" of the numbers on standard input (linear
# interpolation between the nearest ranks), with DIGITS decimals (default 2)
# shellcheck disable=SC2120 # DIGITS is optional
spread() {
	sort -g | awk -v d="${1:-2}" 'NF {v[++n] = $1}
		function at(p,   x, i) {x = 1 + (n - 1) * p; i = int(x); return v[i] + (x - i) * (v[i + 1 < n ? i + 1 : n] - v[i])}
		END {f = "%." d "f"; printf f " " f " " f "\n", at(0.25), at(0.5), at(0.75)}'
}

# spread_mark Q1 MEDIAN Q3: ✓ when the median meets the target target_find
# read and the quartile on the wrong side is within 5 % of it; ✗ when they
# are no numbers (no round gave a ratio)
spread_mark() {
	awk -v q1="$1" -v m="$2" -v q3="$3" -v l="$target_limit" -v op="$target_op" 'BEGIN {
		ok = op == ">=" ? (m >= l && q1 >= 0.95 * l) : op == "<=" ? (m <= l && q3 <= 1.05 * l) : m == l
		print ok && (q1 m q3) ~ /^[0-9.]+$/ ? "✓" : "✗"}'
}

# target_spread_line KEY Q1 MEDIAN Q3 [NAME=VALUE...]: target_line's line
# for a ratio taken round by round, shown as "MEDIAN× (IQR Q1–Q3)" and
# marked by spread_mark
target_spread_line() {
	local key=$1 q1=$2 m=$3 q3=$4
	shift 4
	if ! target_find "$key"; then
		echo "bench/targets.tsv has no target $key" >&2
		exit 1
	fi
	echo "target|$(target_filled "$@")|${m}× (IQR $q1–$q3)|$(spread_mark "$q1" "$m" "$q3")"
}

# background_as_user NAME COMMAND: COMMAND as the server's user, in the
# background, its process id in $work/NAME.pid (bash execs it, and
# gateway/run.sh execs node), with a socket per connection allowed;
# runuser's own word when it ends ("Terminated") left out
background_as_user() {
	as_user env HOME="$work" bash -c "echo \$\$ > '$work/$1.pid' && ulimit -n 8192 && exec $2" 2> /dev/null &
	eval "${1}_job=$!"
}

# stop_background NAME: ends what background_as_user NAME started, and
# waits for it
stop_background() {
	local job=${1}_job
	if [ -f "$work/$1.pid" ]; then kill "$(cat "$work/$1.pid")" 2> /dev/null || true; fi
	if [ -n "${!job:-}" ]; then wait "${!job}" || true; fi
}

# The table of a throughput benchmark's sides, read from the driver's JSON
# in $result (per side: rates, and CPU µs per message of driver, process
# and server).
# field SIDE KEY: the side's figures under KEY, one a line
field() { node -e "for (const v of JSON.parse(process.argv[1])['$1']['$2']) console.log(v)" "$result"; }
runs() { local v out=""; for v in $(field "$1" rates); do out+="${out:+ / }$(thousands "$v")"; done; echo "$out"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
# side_row SIDE TEXT: the side's line of the table (no server process for
# the direct side)
side_row() {
	local proc=–
	[ "$1" = direct ] || proc=$(field "$1" process | median)
	echo "| $2 | $(runs "$1") | $(thousands "$(field "$1" rates | median)") | $(field "$1" driver | median) | $proc | $(field "$1" server | median) |"
}

# gateway_bench_setup ROLE DRIVER: the server started, with the extension
# and ROLE allowed everything on every queue; the gateway, the Node client
# and the test's SDKs and Azurite (test/gateway's lock file pins them)
# installed in the work directory, with the driver bench/DRIVER and
# throughput_run.js. With BASELINE=REF, REF's gateway and Node client (git
# archive) installed in $work/baseline, and REF's short commit in
# $baseline_commit. npm's cache outlives the run (NPM_CACHE, default
# /tmp/queue-bench-npm), so that a second run installs from it: Azurite
# alone took about 25 s to download and install.
gateway_bench_setup() {
	start_server
	as_user psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION queue" -c "CREATE ROLE $1 NOLOGIN" \
		-c "SELECT queue_grant('*', '$1', p) FROM unnest(ARRAY['send', 'process', 'read', 'manage']) AS p" > /dev/null
	tar -C "$repo" --exclude=node_modules -cf - gateway clients/node test/gateway/package.json test/gateway/package-lock.json |
		tar -C "$work" -xf -
	cp "$repo/bench/$2" "$repo/bench/throughput_run.js" "$work/"
	baseline=${BASELINE:-}
	if [ -n "$baseline" ]; then
		baseline_commit=$(git -C "$repo" rev-parse --short "$baseline^{commit}")
		mkdir "$work/baseline"
		git -C "$repo" archive "$baseline_commit" gateway clients/node | tar -C "$work/baseline" -xf -
	fi
	local npm_cache=${NPM_CACHE:-/tmp/queue-bench-npm} dir
	mkdir -p "$npm_cache"
	chown -R "$user" "$work"
	chown "$user" "$npm_cache"
	as_user env HOME="$work" npm_config_cache="$npm_cache" \
		bash -c "cd '$work/test/gateway' && npm ci --no-audit --no-fund --silent --prefer-offline" > /dev/null
	for dir in "$work" ${baseline:+"$work/baseline"}; do
		as_user env HOME="$work" bash "$dir/clients/node/install_into.sh" "$dir/gateway" gateway 2> /dev/null
	done
}

# logged_url LOG TEXT: the http URL that a process started in the
# background writes after TEXT in LOG, waited for up to 10 s; LOG shown
# and a failure when none comes
logged_url() {
	local url="" _
	for _ in $(seq 100); do
		url=$(sed -n "s/.*$2 \(http:[^ ]*\).*/\1/p" "$1" 2> /dev/null | head -n 1)
		[ -n "$url" ] && break
		sleep 0.1
	done
	[ -n "$url" ] || { cat "$1" >&2; return 1; }
	echo "$url"
}

# load_lines: how busy the machine was besides the run, per side of
# "${sides[@]}" (NAME=...) from $result, and what the host stole since
# $run_steal
load_lines() {
	local others="" side
	for side in "${sides[@]}"; do others+="${others:+, }${side%%=*} $(field "${side%%=*}" others | tr '\n' ' ' | sed 's/ $//; s/ / \/ /g')"; done
	echo "the machine's cores kept busy by other processes, in % of each run: $others"
	echo
	# shellcheck disable=SC2086 # steal_since takes the two numbers steal_now gave
	echo "stolen by the host during the run: $(steal_since $run_steal) %"
}
