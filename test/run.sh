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
# first when it was built for another version (test/prepare.sh).  Two
# lanes run side by side: this machine's versions, then the chroots' but
# the newest; and the chroots' building, then the newest version and the
# upgrades to it.  Each version's output shows whole once it is done.
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
# runs once, on this machine, after the suites of this machine's lane
# (below); in a whole run, and when it is named.  Named alone, it runs alone.
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

# step NAME KIND COMMAND...: runs one step of the run (a version's suites,
# the dashboard, an upgrade, the release files), its output into a log of
# its own, and then prints that log whole, one step at a time, as the two
# lanes below run side by side.  KIND says how its tests are counted:
# "version" reads the last line ("N passed, N failed") of test/suites.sh,
# "tap" counts "ok" and "not ok" lines.  A failed step without a failing
# test counts one failure.  Writes NAME's line of the summary to its
# result file.
step() {
	local name=$1 kind=$2 started=$SECONDS log status passed failed line
	shift 2
	log="$logs/$name.log"
	flock "$logs/print.lock" echo "--- $name: started after $SECONDS s"
	"$@" > "$log" 2>&1
	status=$?
	if [ "$kind" = version ]; then
		line=$(tail -n 1 "$log")
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=${BASH_REMATCH[1]}
			failed=${BASH_REMATCH[2]}
		else
			passed=0
			failed=1
		fi
	else
		passed=$(grep -cE '^ *ok [0-9]' "$log")
		failed=$(grep -cE '^ *not ok [0-9]' "$log")
		[ "$status" -eq 0 ] || [ "$failed" -gt 0 ] || failed=1
		[ $((passed + failed)) -gt 0 ] || { echo "$name: ran no test" >> "$log"; failed=1; }
	fi
	echo "$name: $passed passed, $failed failed ($((SECONDS - started)) s)" > "$logs/$name.result"
	flock "$logs/print.lock" bash -c 'echo "=== $1"; cat "$2"' print "$name" "$log"
}

# version_step VERSION [suite...]: the suites of VERSION, as a step
version_step() {
	local version=$1
	shift
	if [ -e "$logs/chroot-failed-$version" ]; then
		step "PostgreSQL $version" version bash -c \
			'echo "the chroot could not be built:"; tail -n 20 "$1"; echo "0 passed, 1 failed"' \
			chroot "/tmp/queue-chroot-$version.log"
	else
		# shellcheck disable=SC2046
		step "PostgreSQL $version" version run_version "$version" $(suites_of "$version" "$@")
	fi
}

# What this run does, in the order of its summary.  A whole run (PGVER
# unset, no suite named) also upgrades to the newest version with
# pg_upgrade, from the oldest and from 18 (test/pg_upgrade.sh), and checks
# the PGXN release files (test/dist.sh).
newest=${supported##* }
whole=no
[ -z "${PGVER:-}" ] && [ $# -eq 0 ] && [ "$dashboard_alone" = no ] && whole=yes
here_versions=()
chroot_versions=()
newest_in_chroot=
for version in $versions; do
	if offered_here "$version"; then
		here_versions+=("$version")
	else
		chroot_versions+=("$version")
	fi
done
[ ${#chroot_versions[@]} -gt 0 ] && newest_in_chroot=${chroot_versions[-1]}
order=()
for version in $versions; do
	order+=("PostgreSQL $version")
done
[ "$dashboard" = yes ] && order+=("dashboard in a browser")
if [ "$whole" = yes ]; then
	order+=("pg_upgrade ${supported%% *} -> $newest" "pg_upgrade 18 -> $newest" "PGXN release")
fi

# Two lanes side by side, as most of a suite's time is spent waiting.  The
# chroots' lane builds the missing chroots (side by side: they download
# and unpack), then runs the newest version in its chroot and the upgrades
# to it.  This machine's lane runs the versions offered here, then, once the
# chroots are ready, the other chroots' versions, the dashboard and the
# release files.
chroots_lane() {
	local pids=() i version
	for version in "${chroot_versions[@]}"; do
		bash "$repo/test/chroot.sh" "$version" > "/tmp/queue-chroot-$version.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || touch "$logs/chroot-failed-${chroot_versions[$i]}"
	done
	touch "$logs/chroots-ready"
	flock "$logs/print.lock" echo "chroots ready after $SECONDS s"
	[ -z "$newest_in_chroot" ] || version_step "$newest_in_chroot" "$@"
	if [ "$whole" = yes ]; then
		for from in ${supported%% *} 18; do
			step "pg_upgrade $from -> $newest" tap bash "$repo/test/pg_upgrade.sh" "$from" "$newest"
		done
	fi
}

here_lane() {
	local version
	for version in "${here_versions[@]}"; do
		version_step "$version" "$@"
	done
	until [ -e "$logs/chroots-ready" ] || ! kill -0 "$chroots_pid" 2>/dev/null; do
		sleep 1
	done
	for version in "${chroot_versions[@]}"; do
		[ "$version" = "$newest_in_chroot" ] || version_step "$version" "$@"
	done
	if [ "$dashboard" = yes ]; then
		step "dashboard in a browser" tap bash -o pipefail -c 'host_version=$(env -u PGVER bash "$1/test/prepare.sh" | tail -n 1) &&
			PGVER=$host_version bash "$1/test/dashboard/run.sh"' dashboard "$repo"
	fi
	[ "$whole" = yes ] && step "PGXN release" tap bash "$repo/test/dist.sh"
	return 0
}

# debootstrap once, before the chroots are built side by side
if [ ${#chroot_versions[@]} -gt 0 ] &&
	! { command -v debootstrap && dpkg-query -W debian-archive-keyring; } >/dev/null 2>&1; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		debootstrap debian-archive-keyring
fi
SECONDS=$(($(date +%s) - started))
chroots_lane "$@" &
chroots_pid=$!
# What the dashboard's test, and in a whole run this machine's suites,
# install here: at once, while the chroots build.
if [ "$dashboard" = yes ]; then
	extras="QUEUE_BROWSER=1"
	[ "$whole" = no ] || extras="$extras QUEUE_GATEWAY=1 QUEUE_HA=1"
	# shellcheck disable=SC2086
	if ! env -u PGVER $extras bash "$repo/test/prepare.sh" > "$logs/prepare.log" 2>&1; then
		tail -n 20 "$logs/prepare.log"
	fi
fi

here_lane "$@"
wait "$chroots_pid"

total_passed=0
total_failed=0
for name in "${order[@]}"; do
	result="$logs/$name.result"
	[ -f "$result" ] || echo "$name: 0 passed, 1 failed (did not run)" > "$result"
	line=$(cat "$result")
	echo "$line"
	[[ $line =~ :\ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]
	total_passed=$((total_passed + BASH_REMATCH[1]))
	total_failed=$((total_failed + BASH_REMATCH[2]))
done
rm -rf "$logs"
echo "whole run: $(($(date +%s) - started)) s"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
