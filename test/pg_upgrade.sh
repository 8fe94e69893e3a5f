#!/usr/bin/env bash
# pg_upgrade of a cluster holding queues, from PostgreSQL OLD to NEW, in
# NEW's chroot (test/chroot.sh).  The extension is built and installed for
# both, and test/pg_upgrade/*.pl runs with PostgreSQL::Test::Cluster as an
# unprivileged user.
#
# OLD comes from the chroot's own Debian suite where it has it (18 beside 19
# in sid).  Else (15) it comes from this machine's package sources, unpacked
# into the chroot with the shared libraries it links that the chroot's newer
# Debian lacks (copied from this machine into OLD's lib folder, which the
# test puts first in LD_LIBRARY_PATH for OLD's programs), at the newest
# release NEW can upgrade from.  Debian's 15.20 and 17.12 record a version
# of every column in its attoptions (pg_attver), which the 18.6 and 19rc1
# Debian serves refuse while pg_upgrade restores the schema, for any table:
# where NEW does not know that option, OLD must be a release that does not
# write it (15.18, Debian 12's point release).  Where this machine offers no
# such release, the test says so and is skipped.
#
# Run as root by test/run.sh.  Usage: bash test/pg_upgrade.sh OLD NEW
# Prints TAP lines; exits non-zero if anything failed.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old=$1
new=$2
root=$(bash "$repo/test/chroot.sh" "$new" | tail -n 1) || exit 1

# The newest release of OLD in this machine's package sources that NEW can
# upgrade from (see above); none: empty.
# A release whose header could not be read is passed over, never taken
# for one without the option.
pick_release() {
	local debs=$1 release attver_new=no
	local header=usr/include/postgresql/$old/server/catalog/pg_attribute.h
	grep -qs pg_attver "$root/usr/include/postgresql/$new/server/catalog/pg_attribute.h" &&
		attver_new=yes
	for release in $(apt-cache madison "postgresql-server-dev-$old" 2>/dev/null | awk '{print $3}'); do
		rm -rf "$debs/probe" && mkdir -p "$debs/probe"
		(cd "$debs/probe" && apt-get download -q "postgresql-server-dev-$old=$release") >/dev/null 2>&1 ||
			continue
		dpkg-deb -x "$debs"/probe/*.deb "$debs/probe/x" && [ -f "$debs/probe/x/$header" ] ||
			continue
		if [ "$attver_new" = yes ] || ! grep -q pg_attver "$debs/probe/x/$header"; then
			echo "$release"
			return
		fi
	done
}

# OLD from this machine's package sources, unpacked into the chroot
unpack_old() {
	local release=$1 debs=$2 lib=$root/usr/lib/postgresql/$old/lib soname path
	(cd "$debs" && apt-get download -q "postgresql-$old=$release" \
		"postgresql-client-$old=$release" "postgresql-server-dev-$old=$release") >&2 || return 1
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	bash "$repo/test/in_chroot.sh" "$root" ldconfig -p | awk 'NR > 1 {print $1}' | sort -u \
		> "$debs/chroot-libs"
	# what its programs and libraries link, and what those link in turn
	for pass in 1 2 3 4; do
		for object in "$root/usr/lib/postgresql/$old"/bin/* "$lib"/*.so*; do
			[ -f "$object" ] && ldd "$object" 2>/dev/null
		done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
			while read -r soname path; do
				grep -qxF "$soname" "$debs/chroot-libs" || [ -e "$lib/$soname" ] ||
					cp -L "$path" "$lib/$soname"
			done
	done
}

if ! bash "$repo/test/in_chroot.sh" "$root" \
	sh -c "apt-cache show postgresql-$old >/dev/null 2>&1"; then
	# this run's own folder: another run's download must not mix with it
	debs=$(mktemp -d /tmp/queue-pg_upgrade-debs.XXXXXX)
	trap 'rm -rf "$debs"' EXIT
	if [ -x "$root/usr/lib/postgresql/$old/bin/postgres" ]; then
		release=$(cat "$root/usr/lib/postgresql/$old/.queue-release" 2>/dev/null)
	else
		release=$(pick_release "$debs")
		if [ -z "$release" ]; then
			echo "ok 1 # skip pg_upgrade from $old to $new: this machine's package sources have no PostgreSQL $old release that $new can upgrade from"
			exit 0
		fi
		rm -rf "$debs"/* && unpack_old "$release" "$debs" || {
			echo "not ok 1 - PostgreSQL $old $release unpacked into the chroot of $new"
			exit 1
		}
		echo "$release" > "$root/usr/lib/postgresql/$old/.queue-release"
	fi
	echo "# PostgreSQL $old: $release, from this machine's package sources"
fi

rm -rf "$root/build/pg_upgrade"
bash "$repo/test/copy_tree.sh" "$root/build/pg_upgrade/queue"

bash "$repo/test/in_chroot.sh" "$root" bash -c "
	set -e
	for version in $old $new; do
		if [ ! -x /usr/lib/postgresql/\$version/bin/pg_config ] ||
			[ ! -f /usr/include/postgresql/\$version/server/postgres.h ]; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				postgresql-\$version postgresql-server-dev-\$version > /dev/null
		fi
		export LD_LIBRARY_PATH=/usr/lib/postgresql/\$version/lib
		# no JIT bitcode: an unpacked release's clang may not be here
		make -s -C /build/pg_upgrade/queue clean PG_CONFIG=/usr/lib/postgresql/\$version/bin/pg_config
		make -s -C /build/pg_upgrade/queue install with_llvm=no \
			PG_CONFIG=/usr/lib/postgresql/\$version/bin/pg_config
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
