#!/usr/bin/env bash
# The browser test of the dashboard (dashboard/, docs/dashboard.md): a
# throwaway PostgreSQL with the queue extension, the dashboard started
# with dashboard/run.sh, and headless Chromium driven by puppeteer-core
# (test/dashboard/check.js) looking at the page as a person would.
# Prints TAP lines ("ok N - ...", "not ok N - ...") and a plan; exits
# non-zero if anything failed.
#
# Run as root or as a normal user; the server, the dashboards and the
# browser run unprivileged (as root: as the user who called sudo, else
# queuetest). Needs the extension installed (make install, as
# test/prepare.sh does), Debian's chromium and npm.
# Usage: bash test/dashboard/run.sh
#	PGVER=15                   the PostgreSQL version (default: the newest installed)
#	CHROMIUM=/usr/bin/chromium the browser
#	DASHBOARD_SCREENSHOT=path  also save the screenshot of the page there
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pgver=${PGVER:-$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)}
bindir=/usr/lib/postgresql/$pgver/bin
chromium=${CHROMIUM:-/usr/bin/chromium}
port=55530
started=$(date +%s)

# initdb refuses to run as root
if [ "$(id -u)" -eq 0 ]; then
	user=queuetest
	if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
		user=$SUDO_USER
	fi
	if ! id "$user" >/dev/null 2>&1; then
		echo "not ok 1 - the user $user exists to run the test (test/prepare.sh makes queuetest)"
		echo "1..1"
		exit 1
	fi
	as_user() {
		runuser -u "$user" -- env PATH="$bindir:/usr/local/bin:/usr/bin:/bin" "$@"
	}
else
	user=$(id -un)
	as_user() {
		env PATH="$bindir:$PATH" "$@"
	}
fi

if [ ! -f "$repo/dashboard/run.sh" ] || [ ! -f "$repo/clients/node/package.json" ]; then
	echo "not ok 1 - dashboard/ and clients/node/ are beside test/ (run this script of a checkout, not of a copy of test/)"
	echo "1..1"
	exit 1
fi

# The copies the test installs into and runs: the test user may not be
# able to write into the checkout (a fresh clone of root's).
work=$(mktemp -d /tmp/queue-dashboard.XXXXXX)
tar -C "$repo" --exclude=node_modules --exclude=package-lock.json -cf - dashboard clients/node test/dashboard |
	tar -C "$work" -xf -
[ "$(id -u)" -eq 0 ] && chown -R "$user" "$work"
data=$work/data
log=$work/setup.log

# Everything started here stops, whatever happens; the logs and the
# screenshot stay in $work.
cleanup() {
	local pid
	if [ -f "$work/pids" ]; then
		while read -r pid; do
			kill "$pid" 2>/dev/null
		done < "$work/pids"
	fi
	if [ -f "$data/postmaster.pid" ]; then
		as_user pg_ctl -D "$data" -m immediate -w stop >> "$log" 2>&1
	fi
	rm -rf "$data" "$work/dashboard/node_modules" "$work/test/dashboard/node_modules" "$work/clients"
	echo "# logs and screenshot: $work ($(($(date +%s) - started)) s in all)"
}
trap cleanup EXIT

number=0
failed=0
# step LABEL COMMAND...: a TAP line for the command; its output goes to the log
step() {
	local label=$1
	shift
	number=$((number + 1))
	if "$@" >> "$log" 2>&1; then
		echo "ok $number - $label"
	else
		echo "not ok $number - $label"
		failed=$((failed + 1))
		tail -n 15 "$log" | sed 's/^/# /'
	fi
}

browser_present() {
	[ -x "$chromium" ] || { echo "no browser at $chromium: apt-get install chromium"; return 1; }
}

npm_install() {
	(cd "$work/dashboard" && as_user npm install --install-links --no-audit --no-fund --silent) &&
		(cd "$work/test/dashboard" && as_user npm install --no-audit --no-fund --silent)
}

start_server() {
	[ -f "/usr/share/postgresql/$pgver/extension/queue.control" ] ||
		{ echo "the queue extension is not installed for PostgreSQL $pgver: make install"; return 1; }
	as_user initdb -D "$data" -U postgres -A trust &&
		cat >> "$data/postgresql.conf" <<-CONF &&
			shared_preload_libraries = 'queue'
			listen_addresses = ''
			unix_socket_directories = '$work'
			port = $port
			fsync = off
			# the background worker sweeps often: the poison message of the test moves quickly
			queue.maintenance_interval = 200ms
		CONF
		as_user pg_ctl -D "$data" -l "$work/postgresql.log" -w start &&
		as_user psql "$dsn" -X -q -v ON_ERROR_STOP=1 -c "CREATE SCHEMA queue" -c "CREATE EXTENSION queue SCHEMA queue"
}

# a URL that libpq (psql) and node-postgres both read: the socket directory as the host
dsn="postgresql://postgres@$(printf %s "$work" | sed 's|/|%2F|g'):$port/postgres"

step "chromium is installed ($chromium)" browser_present
# the server first: its background worker gets going while npm installs
step "a throwaway PostgreSQL $pgver with the queue extension starts" start_server
step "npm installs the dashboard and the test (puppeteer-core)" npm_install

status=0
if [ "$failed" -eq 0 ]; then
	(cd "$work/test/dashboard" && as_user env TAP_START=$((number + 1)) DSN="$dsn" WORK="$work" \
		PGDATA="$data" PGBINDIR="$bindir" CHROMIUM="$chromium" DASHBOARD_DIR="$work/dashboard" \
		node check.js)
	status=$?
else
	echo "1..$number"
	status=1
fi
if [ -f "$work/dashboard.png" ] && [ -n "${DASHBOARD_SCREENSHOT:-}" ]; then
	cp "$work/dashboard.png" "$DASHBOARD_SCREENSHOT"
fi
exit $status
