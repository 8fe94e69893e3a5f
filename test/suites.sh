#!/usr/bin/env bash
# Runs every test suite of the queue extension on one PostgreSQL version,
# the one this system has (PGVER picks one where several are installed),
# and ends with one line:
#	N passed, N failed
# over all suites; exits non-zero if anything failed.  test/run.sh calls it
# once per supported version, here or inside a chroot (test/chroot.sh).
#
# Each suite gets its own throwaway server with the extension preloaded
# (test/queue.conf), run by an unprivileged user in a temporary directory:
#	layout     test/layout.py: the shape of src/ (no file uses another that
#	           uses it back), the rules of a message spelled once, the docs
#	regress    pg_regress, the tests of sql/ against expected/*.out
#	isolation  pg_isolation_regress, test/isolation/specs/*.spec
#	pgtap      pg_prove, test/pgtap/*.sql
#	tap        prove with PostgreSQL::Test::Cluster, test/t/*.pl
#	chaos      test/chaos/chaos.py: clients under injected faults, checked
#	clients    the client libraries (clients/python, clients/node) installed
#	           with pip and npm, their tests, two workers in two languages
#	           on one queue, and the examples
#	gateway    test/gateway/run.sh: the gateway against the SQS clients of
#	           this system's Debian (Query protocol in 12, JSON in sid) and
#	           the Azure SDKs for JavaScript and Python
#	ha         test/ha/ha.py: a Patroni cluster (etcd, three nodes, HAProxy)
#	           with producers and Workers through failovers
#	bench      bench/smoke.sh: each script of the benchmark run for a few
#	           seconds, so that the benchmark cannot break unseen
#	package    the Debian package built, installed, and "make installcheck"
#	           run against it (test/package.sh)
#
# Needs root or sudo, once, to install what is missing (test/prepare.sh).
# Usage: bash test/suites.sh [suite...]
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER,CHAOS_SECONDS,CHAOS_ARGS,QUEUE_TAP bash "$0" "$@"
fi

pgver=$(bash "$repo/test/prepare.sh" | tail -n 1) || { echo "0 passed, 1 failed"; exit 1; }

# The tests run as the user who called sudo, else as queuetest.
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi

bindir=/usr/lib/postgresql/$pgver/bin
pgxs=/usr/lib/postgresql/$pgver/lib/pgxs
work=$(mktemp -d /tmp/queue-tests.XXXXXX)
cp -r "$repo/test" "$repo/sql" "$repo/expected" "$repo/examples" "$repo/clients" "$repo/monitoring" "$work/"
rm -rf "$work"/clients/node/node_modules "$work"/examples/node/node_modules "$work"/clients/python/build
chown -R "$user" "$work"
cd "$work" || exit 1

as_user() {
	runuser -u "$user" -- env HOME="$work" PATH="$bindir:/usr/local/bin:/usr/bin:/bin" "$@"
}

total_passed=0
total_failed=0

# record SUITE LOG STATUS: counts "... ok" / "... FAILED" lines (pg_regress)
# or "ok" / "not ok" lines (TAP); a suite that failed without a failing
# test (it could not start, or a script died), or that ran no test at all,
# counts one failure.
record() {
	local suite=$1 log=$2 status=$3 passed failed
	if [ "$suite" = package ]; then
		# pg_regress and prove together, both formats of pg_regress
		passed=$(grep -cE '\.\.\. ok |^ *ok [0-9]+ ' "$log")
		failed=$(grep -cE '\.\.\. (FAILED|failed)|^ *not ok [0-9]+ ' "$log")
	elif [ "$suite" = regress ] || [ "$suite" = isolation ]; then
		# "test ... ok" up to PostgreSQL 15, "ok 1 - test" (TAP) from 16 on
		passed=$(grep -cE '\.\.\. ok |^ok [0-9]+ ' "$log")
		failed=$(grep -cE '\.\.\. (FAILED|failed)|^not ok [0-9]+ ' "$log")
	else
		passed=$(grep -cE '^ *ok [0-9]' "$log")
		failed=$(grep -cE '^ *not ok [0-9]' "$log")
	fi
	if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ $((passed + failed)) -eq 0 ]; then
		echo "$suite: ran no test" >> "$log"
		failed=1
	fi
	if [ "$failed" -gt 0 ]; then
		echo "--- $suite: failures (full log: $log)"
		grep -E 'FAILED|failed|not ok|Dubious|Parse errors|Bad plan|error|Error|Traceback' "$log" | head -n 40
		case $suite in
		regress) diffs="$work/regression.diffs" ;;
		isolation) diffs="$work/test/isolation/regression.diffs" ;;
		*) diffs= ;;
		esac
		if [ -n "$diffs" ] && [ -f "$diffs" ]; then
			head -n 150 "$diffs"
		fi
	fi
	# figures the TAP and chaos tests measured ("# measured: ..." lines)
	grep -E '^# measured: ' "$log" || true
	echo "$suite: $passed passed, $failed failed ($(($(date +%s) - suite_started)) s)"
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
}

# The shape of the repository (test/layout.py), read from the build this
# run made: no server needed.
run_layout() {
	/usr/bin/python3 "$repo/test/layout.py" "$repo" > "$work/layout.log" 2>&1
	record layout "$work/layout.log" $?
}

run_regress() {
	as_user "$pgxs/src/test/regress/pg_regress" \
		--temp-instance="$work/tmp_regress" --temp-config=test/queue.conf \
		--load-extension=queue --bindir="$bindir" \
		--schedule=test/regress_schedule \
		> "$work/regress.log" 2>&1
	record regress "$work/regress.log" $?
}

run_isolation() {
	local specs
	specs=$(ls test/isolation/specs/*.spec | xargs -n 1 basename | sed 's/\.spec$//')
	# shellcheck disable=SC2086
	as_user "$pgxs/src/test/isolation/pg_isolation_regress" \
		--temp-instance="$work/tmp_isolation" --temp-config=test/queue.conf \
		--load-extension=queue --bindir="$bindir" \
		--inputdir=test/isolation --outputdir=test/isolation $specs \
		> "$work/isolation.log" 2>&1
	record isolation "$work/isolation.log" $?
}

run_pgtap() {
	local data="$work/tmp_pgtap" status
	as_user initdb -D "$data" -A trust > "$work/pgtap.log" 2>&1
	cat test/queue.conf >> "$data/postgresql.conf"
	printf "listen_addresses = ''\nunix_socket_directories = '%s'\n" "$work" >> "$data/postgresql.conf"
	as_user pg_ctl -D "$data" -l "$work/pgtap-server.log" -w start >> "$work/pgtap.log" 2>&1
	as_user psql -h "$work" -d postgres -X -q \
		-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION queue" >> "$work/pgtap.log" 2>&1
	as_user pg_prove -v -h "$work" -d postgres test/pgtap/*.sql >> "$work/pgtap.log" 2>&1
	status=$?
	as_user pg_ctl -D "$data" -m fast -w stop >> "$work/pgtap.log" 2>&1
	record pgtap "$work/pgtap.log" $status
}

# Three files at a time on two cores (at most four): most of a TAP file's
# time is spent waiting (for a server to start, a worker to sweep, a
# getter to wake, a schedule's next minute), and each file has servers of
# its own.  The longest files start first, so that the others run beside
# them rather than after.  --timer gives each file's time.
longest_tap_files="test/t/029_schedules.pl test/t/014_replication.pl test/t/013_upgrade.pl test/t/002_worker.pl"
run_tap() {
	local jobs files file
	jobs=$(($(nproc) + 1))
	[ "$jobs" -le 4 ] || jobs=4
	files=${QUEUE_TAP:-}
	if [ -z "$files" ]; then
		files=$longest_tap_files
		for file in test/t/*.pl; do
			[[ " $longest_tap_files " == *" $file "* ]] || files="$files $file"
		done
	fi
	as_user mkdir -p "$work/tmp_tap"
	# shellcheck disable=SC2086
	as_user env PERL5LIB="$pgxs/src/test/perl" TESTDIR="$work/tmp_tap" \
		PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
		prove -v --timer -j "$jobs" $files > "$work/tap.log" 2>&1
	record tap "$work/tap.log" $?
}

# The chaos test (test/chaos/chaos.py): producers and consumers under
# injected faults; CHAOS_SECONDS sets how long (30 s by default), CHAOS_ARGS
# adds options (--producers, --consumers, --pace).
run_chaos() {
	# shellcheck disable=SC2086
	as_user /usr/bin/python3 test/chaos/chaos.py --bindir "$bindir" \
		--workdir "$work/tmp_chaos" --seconds "${CHAOS_SECONDS:-30}" ${CHAOS_ARGS:-} \
		> "$work/chaos.log" 2>&1
	record chaos "$work/chaos.log" $?
}

# The client libraries (clients/python, clients/node), installed with pip
# (into a virtual environment that sees Debian's psycopg) and npm, and their
# tests against one throwaway server, which some of them restart; then a
# Python worker and a Node worker on one queue (test/clients/two_languages.py),
# the examples, and test/clients/wait_xmin.js (a node-postgres client waiting
# in queue_get holds no xmin).
run_clients() {
	local data="$work/tmp_clients" log="$work/clients.log" status=0 dsn venv="$work/venv" lang
	# a URL: libpq (psql, psycopg) and node-postgres all read it
	dsn="postgresql://$user@$(printf %s "$work" | sed 's|/|%2F|g'):55490/postgres"
	as_user initdb -D "$data" -A trust > "$log" 2>&1
	printf "shared_preload_libraries = 'queue'\nlisten_addresses = ''\nunix_socket_directories = '%s'\nport = 55490\n" \
		"$work" >> "$data/postgresql.conf"
	as_user pg_ctl -D "$data" -l "$work/clients-server.log" -w start >> "$log" 2>&1
	# installed as the security docs advise: a schema of its own, off the
	# search_path, so the clients work only if they qualify every call
	as_user psql "$dsn" -X -q -c "CREATE SCHEMA queue" -c "CREATE EXTENSION queue SCHEMA queue" >> "$log" 2>&1

	# the packages, as a user installs them (no PyPI here: Debian's psycopg
	# and setuptools, hence --system-site-packages and --no-build-isolation)
	tap_step 1 "pip installs clients/python" pip_install_python "$venv" || status=1
	tap_step 2 "npm installs clients/node" npm_install clients/node || status=1
	# the type hints hold (py.typed tells users' checkers to read them)
	tap_step 3 "mypy --strict clients/python/pgqueue" \
		as_user /usr/bin/python3 -m mypy --strict --cache-dir "$work/mypy-cache" clients/python/pgqueue || status=1
	(cd "$work" && as_user env PGQUEUE_TEST_DSN="$dsn" PGQUEUE_TEST_PGDATA="$data" PGQUEUE_TEST_BINDIR="$bindir" \
		"$venv/bin/python" clients/python/tests/run.py) >> "$log" 2>&1 || status=1
	(cd clients/node && as_user env PGQUEUE_TEST_DSN="$dsn" PGQUEUE_TEST_PGDATA="$data" PGQUEUE_TEST_BINDIR="$bindir" \
		npm test --silent) >> "$log" 2>&1 || status=1
	as_user "$venv/bin/python" test/clients/two_languages.py "$dsn" "$venv/bin/python" "$work/clients" \
		>> "$log" 2>&1 || status=1

	# the examples: each works off its queue, then stops at SIGTERM
	npm_install examples/node >> "$log" 2>&1
	for lang in python node; do
		as_user psql "$dsn" -X -q -c "SELECT queue.queue_create('example-$lang')" \
			-c "SELECT count(*) FROM queue.queue_put_batch('example-$lang', ARRAY['one', 'two', 'three'])" >> "$log" 2>&1
		if [ "$lang" = python ]; then
			set -- "$venv/bin/python" examples/python/consumer.py
		else
			set -- node examples/node/consumer.js
		fi
		as_user "$@" "$dsn" "example-$lang" > "$work/example-$lang.out" 2>> "$log" &
		example_done "$dsn" "example-$lang" "$!" "$work/example-$lang.out" >> "$log" || status=1
	done

	as_user psql "$dsn" -X -q -c "SELECT queue.queue_create('node-wait')" >> "$log" 2>&1
	as_user env NODE_PATH=clients/node/node_modules node test/clients/wait_xmin.js "$dsn" node-wait \
		>> "$log" 2>&1 || status=1
	as_user pg_ctl -D "$data" -m fast -w stop >> "$log" 2>&1
	record clients "$log" $status
}

# tap_step N LABEL COMMAND...: runs COMMAND, its output into the clients
# log, and adds a TAP line saying whether it succeeded.
tap_step() {
	local number=$1 label=$2
	shift 2
	if "$@" >> "$work/clients.log" 2>&1; then
		echo "ok $number - $label" >> "$work/clients.log"
	else
		echo "not ok $number - $label" >> "$work/clients.log"
		return 1
	fi
}

# pip_install_python VENV: a virtual environment that sees Debian's
# packages, and clients/python installed into it.
pip_install_python() {
	as_user /usr/bin/python3 -m venv --system-site-packages "$1" &&
		as_user "$1/bin/pip" install -q --no-build-isolation "$work/clients/python"
}

# npm_install DIR: the dependencies of the package in DIR, as the test user.
npm_install() {
	(cd "$1" && as_user npm install --no-audit --no-fund --silent)
}

# example_done DSN QUEUE PID OUTPUT: waits (30 s at most) until the example
# emptied its queue, stops it with SIGTERM and says in TAP whether it
# printed the three bodies and exited.
example_done() {
	local dsn=$1 queue=$2 pid=$3 output=$4 left i
	for i in $(seq 300); do
		left=$(as_user psql "$dsn" -X -A -t -c "SELECT total FROM queue.queue_stats('$queue')")
		[ "$left" = 0 ] && break
		sleep 0.1
	done
	# the example itself (its command line starts with node or python), not
	# runuser around it, which would exit as killed
	pkill -TERM -f "^[^ ]*(node|python[0-9.]*) examples/.*/consumer\.[a-z]+ $dsn $queue\$"
	if wait "$pid" && [ "$left" = 0 ] && [ "$(grep -cE ' (one|two|three)$' "$output")" = 3 ]; then
		echo "ok 1 - examples: $queue handled its three messages and stopped"
	else
		echo "not ok 1 - examples: $queue (left $left; output: $(tr '\n' ' ' < "$output"))"
		return 1
	fi
}

# The gateway's tests (test/gateway/run.sh), with the boto3, AWS CLI and
# Azure SDK for Python of this system: Debian 12's boto3 and AWS CLI speak
# the Query protocol, sid's JSON.
run_gateway() {
	# the clients' installation begun with the run (below); prepare.sh then
	# installs what is still missing, and fails with its own output if it can't
	[ -z "$gateway_packages" ] || wait "$gateway_packages"
	if QUEUE_GATEWAY=1 bash "$repo/test/prepare.sh" > "$work/gateway.log" 2>&1; then
		bash "$repo/test/gateway/run.sh" > "$work/gateway.log" 2>&1
		record gateway "$work/gateway.log" $?
	else
		record gateway "$work/gateway.log" 1
	fi
}

# High availability under Patroni (test/ha/ha.py): etcd, three Patroni
# nodes in synchronous mode and HAProxy on loopback; producers and both
# Workers through a switchover, a kill -9 of the leader, a frozen leader
# and a restart of the whole cluster.  test/run.sh runs it on the version
# this machine's Patroni supports.
run_ha() {
	PGVER=$pgver bash "$repo/test/ha/run.sh" > "$work/ha.log" 2>&1
	record ha "$work/ha.log" $?
}

# The benchmark's smoke run (bench/smoke.sh): it measures nothing, it
# shows that every script of the benchmark still runs to its end.
run_bench() {
	bash "$repo/bench/smoke.sh" > "$work/bench.log" 2>&1
	record bench "$work/bench.log" $?
}

# The Debian package (test/package.sh): last, as it swaps the source build
# for the package and back.
run_package() {
	bash "$repo/test/package.sh" "$pgver" "$user" "$work" > "$work/package.log" 2>&1
	record package "$work/package.log" $?
}

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(layout regress isolation pgtap tap chaos clients gateway bench package)
# The gateway's clients take minutes to install where they are missing (a
# chroot built afresh): they install beside the suites that run first.
gateway_packages=
if [[ " ${suites[*]} " == *" gateway "* ]]; then
	QUEUE_GATEWAY=1 bash "$repo/test/prepare.sh" --packages > "$work/gateway-packages.log" 2>&1 &
	gateway_packages=$!
fi
for suite in "${suites[@]}"; do
	suite_started=$(date +%s)
	"run_$suite"
done

if [ "$total_failed" -eq 0 ]; then
	rm -rf "$work"
else
	echo "logs kept in $work"
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
