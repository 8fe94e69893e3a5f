#!/usr/bin/env bash
# Runs every test suite of the queue extension on every supported
# PostgreSQL major version, prints a line per version, and ends with one
# line over all of them:
#	N passed, N failed
# and exits non-zero if anything failed.
#
# A version this machine's package sources offer runs here (test/suites.sh);
# the others run inside a Debian chroot of the suite that ships them
# (test/chroot.sh: 17 from trixie, 18 from sid, 19 from experimental),
# built on first use and reused after.  Each chroot run gets a fresh copy of
# the source tree; the version run here builds in the checkout, cleaned
# first when it was built for another version (test/prepare.sh).
#
# Needs root or sudo, to install packages and to build the chroots.
# Usage: bash test/run.sh [suite...]   (suites of test/suites.sh, and dashboard)
#	PGVER=17 bash test/run.sh           one version
#	PGVER="15 18" bash test/run.sh tap  some versions, one suite
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
supported="15 17 18 19"

if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER,CHAOS_SECONDS,CHAOS_ARGS,QUEUE_CHROOTS,QUEUE_TAP bash "$0" "$@"
fi

versions=${PGVER:-$supported}
started=$(date +%s)

# "dashboard" names no suite of a version: the browser test of the dashboard
# runs once, on this machine, after the versions' suites; in a whole run,
# and when it is named.  Named alone, it runs alone.
dashboard=no
dashboard_alone=no
[ $# -eq 0 ] && dashboard=yes
suites=()
for arg in "$@"; do
	if [ "$arg" = dashboard ]; then
		dashboard=yes
	else
		suites+=("$arg")
	fi
done
if [ "$dashboard" = yes ] && [ $# -gt 0 ] && [ ${#suites[@]} -eq 0 ]; then
	dashboard_alone=yes
	versions=
fi
set -- "${suites[@]+"${suites[@]}"}"

# The package lists are needed to know what this machine offers.
if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
fi

offered_here() {
	[ -x "/usr/lib/postgresql/$1/bin/postgres" ] ||
		apt-cache show "postgresql-$1" >/dev/null 2>&1
}

# Build the missing chroots first, side by side: they only download and unpack.
chroot_versions=()
for version in $versions; do
	offered_here "$version" || chroot_versions+=("$version")
done
# debootstrap once, before the chroots are built side by side
if [ ${#chroot_versions[@]} -gt 0 ] && ! command -v debootstrap >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		debootstrap debian-archive-keyring
fi
pids=()
for version in "${chroot_versions[@]}"; do
	bash "$repo/test/chroot.sh" "$version" > "/tmp/queue-chroot-$version.log" 2>&1 &
	pids+=($!)
done
chroot_failed=()
for i in "${!pids[@]}"; do
	if ! wait "${pids[$i]}"; then
		chroot_failed+=("${chroot_versions[$i]}")
		echo "--- PostgreSQL ${chroot_versions[$i]}: the chroot could not be built"
		tail -n 20 "/tmp/queue-chroot-${chroot_versions[$i]}.log"
	fi
done
echo "chroots ready after $(($(date +%s) - started)) s"

# run_version VERSION [suite...]: the suites of one version; their output
# goes to the terminal, and the last line is their "N passed, N failed".
run_version() {
	local version=$1 root
	shift
	if offered_here "$version"; then
		PGVER=$version bash "$repo/test/suites.sh" "$@"
		return
	fi
	root=$(bash "$repo/test/chroot.sh" "$version" | tail -n 1)
	rm -rf "$root/build/queue"
	bash "$repo/test/copy_tree.sh" "$root/build/queue"
	PGVER=$version bash "$repo/test/in_chroot.sh" "$root" \
		bash /build/queue/test/suites.sh "$@"
}

# suites_of VERSION [suite...]: the suites to run on VERSION.  Named
# suites, or versions named with PGVER, get what was asked.  In a whole run,
# the suites that test no difference between versions (the shape of the
# tree, the client libraries, the long chaos run, the SQS gateway, the
# benchmark's smoke run) run on the newest version only.  The gateway's
# runs also on the oldest, here on the machine: its SQS clients are Debian
# 12's, which speak the Query protocol, where sid's (the newest's chroot)
# speak JSON.  The Patroni suite (ha) runs on the oldest too, here on the
# machine: Debian 12's Patroni (3.0) supports PostgreSQL up to 15.  The
# whole TAP suite (servers started, crashed, replicated,
# upgraded) runs on the oldest and the newest; the versions between run
# the SQL suites and the package, whose TAP tests of the worker and of the
# updates run there against the installed .deb.
suites_of() {
	local version=$1
	shift
	if [ $# -gt 0 ]; then
		echo "$@"
	elif [ -n "${PGVER:-}" ] || [ "$version" = "${supported##* }" ]; then
		echo layout regress isolation pgtap tap chaos clients gateway bench package
	elif [ "$version" = "${supported%% *}" ]; then
		echo regress isolation pgtap tap gateway ha package
	else
		echo regress isolation pgtap package
	fi
}

logs=$(mktemp -d /tmp/queue-versions.XXXXXX)
total_passed=0
total_failed=0
summary=()
for version in $versions; do
	version_started=$(date +%s)
	echo "=== PostgreSQL $version"
	if [[ " ${chroot_failed[*]} " == *" $version "* ]]; then
		line="0 passed, 1 failed"
	else
		run_version "$version" $(suites_of "$version" "$@") 2>&1 | tee "$logs/$version.log"
		line=$(tail -n 1 "$logs/$version.log")
	fi
	if [[ ! $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		line="0 passed, 1 failed"
	fi
	passed=$(echo "$line" | cut -d' ' -f1)
	failed=$(echo "$line" | cut -d' ' -f3)
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
	summary+=("PostgreSQL $version: $passed passed, $failed failed ($(($(date +%s) - version_started)) s)")
done

# count_tap NAME LOG STATUS: adds a TAP log's "ok" and "not ok" lines to the
# totals and the summary; a failed run without a failing test counts one.
count_tap() {
	local name=$1 log=$2 status=$3 passed failed
	passed=$(grep -cE '^ *ok [0-9]' "$log")
	failed=$(grep -cE '^ *not ok [0-9]' "$log")
	if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ $((passed + failed)) -eq 0 ]; then
		echo "$name: ran no test"
		failed=1
	fi
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
	summary+=("$name: $passed passed, $failed failed ($(($(date +%s) - step_started)) s)")
}

# The dashboard in headless Chromium (test/dashboard/run.sh), against this
# machine's PostgreSQL, with the extension built and installed for it.
if [ "$dashboard" = yes ]; then
	echo "=== dashboard in a browser"
	step_started=$(date +%s)
	if host_version=$(env -u PGVER QUEUE_BROWSER=1 bash "$repo/test/prepare.sh" 2> "$logs/dashboard-prepare.log" | tail -n 1); then
		PGVER=$host_version bash "$repo/test/dashboard/run.sh" 2>&1 | tee "$logs/dashboard.log"
		count_tap "dashboard in a browser (PostgreSQL $host_version)" "$logs/dashboard.log" "${PIPESTATUS[0]}"
	else
		tail -n 20 "$logs/dashboard-prepare.log"
		echo "not ok 1 - test/prepare.sh prepared this machine for the dashboard test" > "$logs/dashboard.log"
		count_tap "dashboard in a browser" "$logs/dashboard.log" 1
	fi
fi

# pg_upgrade to the newest version, from the oldest and from the one before
# it (test/pg_upgrade.sh), and the PGXN release files: once per run, after
# the versions' suites, when the whole matrix ran (PGVER unset) and no suite
# was picked.
newest=${supported##* }
if [ -z "${PGVER:-}" ] && [ $# -eq 0 ] && [ "$dashboard_alone" = no ]; then
	for from in ${supported%% *} 18; do
		echo "=== pg_upgrade $from -> $newest"
		step_started=$(date +%s)
		bash "$repo/test/pg_upgrade.sh" "$from" "$newest" 2>&1 | tee "$logs/pg_upgrade.log"
		count_tap "pg_upgrade $from -> $newest" "$logs/pg_upgrade.log" "${PIPESTATUS[0]}"
	done
	echo "=== PGXN release"
	step_started=$(date +%s)
	bash "$repo/test/dist.sh" 2>&1 | tee "$logs/dist.log"
	count_tap "PGXN release" "$logs/dist.log" "${PIPESTATUS[0]}"
fi

rm -rf "$logs"
printf '%s\n' "${summary[@]}"
echo "whole run: $(($(date +%s) - started)) s"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
