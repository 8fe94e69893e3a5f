#!/usr/bin/env bash
# pg_upgrade of a cluster holding queues, from PostgreSQL OLD to NEW, both
# installed from Debian's packages in NEW's chroot (test/chroot.sh installs
# the older server beside the newer one there).  The extension is built and
# installed for both, and test/pg_upgrade/*.pl runs with
# PostgreSQL::Test::Cluster as an unprivileged user.
#
# Why not from 15 or 17: Debian's current 15.20 and 17.12 record a version
# of every column of every table in its attoptions (pg_attver), which the
# 18.6 and 19rc1 Debian serves refuse when pg_upgrade restores the schema:
# no table at all, ours or not, survives that pg_upgrade (docs/upgrades.md).
#
# Run as root by test/run.sh.  Usage: bash test/pg_upgrade.sh OLD NEW
# Prints TAP lines; exits non-zero if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old=$1
new=$2
root=$(bash "$repo/test/chroot.sh" "$new" | tail -n 1) || exit 1

rm -rf "$root/build/pg_upgrade"
mkdir -p "$root/build/pg_upgrade/queue"
tar -C "$repo" --exclude=./.cache --exclude=./.git --exclude=./demo/cluster \
	--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=node_modules \
	--exclude=./src/.built-for --exclude=./tmp_check -cf - . |
	tar -C "$root/build/pg_upgrade/queue" -xf -

bash "$repo/test/in_chroot.sh" "$root" bash -c "
	set -e
	for version in $old $new; do
		if [ ! -x /usr/lib/postgresql/\$version/bin/pg_config ] ||
			[ ! -f /usr/include/postgresql/\$version/server/postgres.h ]; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				postgresql-\$version postgresql-server-dev-\$version > /dev/null
		fi
		make -s -C /build/pg_upgrade/queue clean PG_CONFIG=/usr/lib/postgresql/\$version/bin/pg_config
		make -s -C /build/pg_upgrade/queue install PG_CONFIG=/usr/lib/postgresql/\$version/bin/pg_config
	done
	id queuetest >/dev/null 2>&1 || useradd --system --create-home --shell /bin/bash queuetest
	chown -R queuetest /build/pg_upgrade
" >&2 || {
	echo "not ok 1 - the extension builds for PostgreSQL $old and $new"
	exit 1
}

bash "$repo/test/in_chroot.sh" "$root" bash -c "
	cd /build/pg_upgrade/queue
	runuser -u queuetest -- env HOME=/build/pg_upgrade \
		PATH=/usr/lib/postgresql/$new/bin:/usr/bin:/bin \
		PERL5LIB=/usr/lib/postgresql/$new/lib/pgxs/src/test/perl \
		PG_REGRESS=/usr/lib/postgresql/$new/lib/pgxs/src/test/regress/pg_regress \
		TESTDIR=/build/pg_upgrade \
		OLD_INSTALL=/usr/lib/postgresql/$old NEW_INSTALL=/usr/lib/postgresql/$new \
		prove -v test/pg_upgrade/*.pl
"
