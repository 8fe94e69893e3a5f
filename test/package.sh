#!/usr/bin/env bash
# The Debian package test: builds postgresql-NN-queue from the source tree
# with pg_buildext (debian/), takes away what "make install" put in place,
# installs the .deb, and runs "make installcheck" against a fresh server
# that loads the packaged extension: the regression and isolation tests,
# and of the TAP tests those that prove the package's files work together
# (the background worker starts from the packaged library; every earlier
# version's script updates to the newest).  The source build runs every
# TAP test (suite "tap"): the package holds the same files.  Afterwards the
# package is removed and the source build installed again.
#
# Run as root by test/suites.sh (suite "package").
# Usage: bash test/package.sh PGVER USER WORKDIR
# Prints the tests' output; exits non-zero if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pgver=$1
user=$2
work=$3
bindir=/usr/lib/postgresql/$pgver/bin
pg_config=$bindir/pg_config
build=$work/package-build
status=0

as_user() {
	runuser -u "$user" -- env HOME="$work" PATH="$bindir:/usr/local/bin:/usr/bin:/bin" "$@"
}

echo "# building postgresql-$pgver-queue"
rm -rf "$build"
bash "$repo/test/copy_tree.sh" "$build/queue"
(
	cd "$build/queue" &&
		PG_SUPPORTED_VERSIONS=$pgver pg_buildext updatecontrol &&
		PG_SUPPORTED_VERSIONS=$pgver dpkg-buildpackage -us -uc -b -j"$(nproc)"
) > "$work/package-build.log" 2>&1 || {
	tail -n 40 "$work/package-build.log"
	echo "not ok 1 - postgresql-$pgver-queue builds"
	exit 1
}
deb=$(ls "$build"/postgresql-"$pgver"-queue_*.deb)
echo "ok 1 - postgresql-$pgver-queue builds: $(basename "$deb")"

# the system forgets the source build; only the package provides the extension
make -s -C "$repo" PG_CONFIG="$pg_config" uninstall
pkglibdir=$($pg_config --pkglibdir)
sharedir=$($pg_config --sharedir)
if [ -e "$pkglibdir/queue.so" ] || ls "$sharedir"/extension/queue* >/dev/null 2>&1; then
	echo "not ok 2 - make uninstall took the source build away"
	status=1
else
	echo "ok 2 - make uninstall took the source build away"
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" \
	>> "$work/package-build.log" 2>&1
owner=$(dpkg -S "$pkglibdir/queue.so" 2>/dev/null | cut -d: -f1)
if [ "$owner" = "postgresql-$pgver-queue" ]; then
	echo "ok 3 - queue.so comes from the package $owner"
else
	echo "not ok 3 - queue.so comes from the package (dpkg says: '$owner')"
	status=1
fi

# a fresh server that loads the packaged extension, for "make installcheck"
data=$work/tmp_package
bash "$repo/test/copy_tree.sh" "$work/package-tests"
chown -R "$user" "$work/package-tests"
as_user initdb -D "$data" -A trust > "$work/package-server.log" 2>&1
cat "$repo/test/queue.conf" >> "$data/postgresql.conf"
printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = 55491\n" "$work" \
	>> "$data/postgresql.conf"
as_user pg_ctl -D "$data" -l "$data/server.log" -w start >> "$work/package-server.log" 2>&1 || {
	tail -n 20 "$data/server.log"
	status=1
}
as_user env PGHOST="$work" PGPORT=55491 make -C "$work/package-tests" \
	PG_CONFIG="$pg_config" PROVE_FLAGS="-v -j2" \
	PROVE_TESTS="test/t/002_worker.pl test/t/013_upgrade.pl" installcheck 2>&1 || status=1
as_user pg_ctl -D "$data" -m fast -w stop > /dev/null

# back to the source build, for whatever runs next
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "postgresql-$pgver-queue" \
	>> "$work/package-build.log" 2>&1
make -s -C "$repo" PG_CONFIG="$pg_config" install
exit $status
