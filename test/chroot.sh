#!/usr/bin/env bash
# Makes (or reuses) a Debian chroot holding one PostgreSQL major version,
# for running the test suites on a server this machine's own release does
# not ship.  Each version comes from the Debian suite that has it:
#	15  bookworm
#	17  trixie
#	18  sid
#	19  sid, with the server from experimental
# The chroots live under $QUEUE_CHROOTS (default: .cache/chroots in the
# checkout, git-ignored), one folder per version; a folder that is complete
# (it holds a .ready mark) is reused as it is.  Nothing is added to the
# host's apt sources: the suites are named inside the chroot only.
#
# Run as root.  Usage: bash test/chroot.sh VERSION
# Prints, as its last line, the path of the chroot.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=${1:?usage: test/chroot.sh VERSION}
mirror=${QUEUE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=${QUEUE_CHROOTS:-$repo/.cache/chroots}/pg$version

# (19's chroot also has 18, for the pg_upgrade test: test/pg_upgrade.sh)
case $version in
15) suite=bookworm extra= also= ;;
17) suite=trixie extra= also= ;;
18) suite=sid extra= also= ;;
19) suite=sid extra=experimental also=postgresql-18 ;;
*)
	echo "test/chroot.sh: no Debian suite known for PostgreSQL $version" >&2
	exit 1
	;;
esac

if [ "$(id -u)" -ne 0 ]; then
	echo "test/chroot.sh must run as root" >&2
	exit 1
fi

if [ -f "$root/.ready" ]; then
	echo "$root"
	exit 0
fi

# debootstrap, and Debian's keys where the host is not Debian (Ubuntu)
for pkg in debootstrap debian-archive-keyring; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			debootstrap debian-archive-keyring >&2
		break
	fi
done

rm -rf "$root"
mkdir -p "$root"
echo "building the PostgreSQL $version chroot ($suite${extra:+ + $extra}) in $root" >&2
debootstrap --variant=minbase --keyring=/usr/share/keyrings/debian-archive-keyring.gpg \
	"$suite" "$root" "$mirror" > "$root.debootstrap.log" 2>&1 || {
	tail -n 20 "$root.debootstrap.log" >&2
	exit 1
}
rm -f "$root.debootstrap.log"

if [ -n "$extra" ]; then
	echo "deb $mirror $extra main" > "$root/etc/apt/sources.list.d/$extra.list"
	# take a package from $extra only where asked for by name
	printf 'Package: *\nPin: release a=%s\nPin-Priority: 1\n' "$extra" \
		> "$root/etc/apt/preferences.d/$extra"
	printf 'Package: postgresql-%s postgresql-server-dev-%s postgresql-client-%s libpq5 libpq-dev postgresql-%s-pgtap\nPin: release a=%s\nPin-Priority: 990\n' \
		"$version" "$version" "$version" "$version" "$extra" >> "$root/etc/apt/preferences.d/$extra"
fi
# The archive this machine reaches may serve a suite's files a while after
# their Release file's Valid-Until (sid's and experimental's last a week).
echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99queue-valid-until"
# the servers of the chroot must not start themselves when installed
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# the packages test/prepare.sh would otherwise install on the first run
bash "$repo/test/in_chroot.sh" "$root" bash -c "
	set -e
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# postgresql-common first, told not to create a cluster of its own
	apt-get install -y -qq --no-install-recommends postgresql-common
	sed -i 's/^#\\?create_main_cluster.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf
	apt-get install -y -qq --no-install-recommends \
		postgresql-$version postgresql-server-dev-$version make gcc libc6-dev perl \
		python3 python3-psycopg2 python3-psycopg python3-venv python3-pip python3-setuptools python3-wheel mypy python3-pglast \
		libtap-parser-sourcehandler-pgtap-perl libipc-run-perl prometheus-postgres-exporter \
		nodejs npm ca-certificates build-essential debhelper postgresql-server-dev-all $also
	apt-get clean
" >&2

# The certificate authorities this machine trusts on top of Debian's (a
# TLS proxy's, say) are trusted in the chroot too: npm fetches packages
# over TLS there.
if [ -n "$(ls -A /usr/local/share/ca-certificates 2>/dev/null)" ]; then
	cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
	bash "$repo/test/in_chroot.sh" "$root" update-ca-certificates >&2
fi

# pgTAP: Debian's package where the suite has one for this version; else
# built from the upstream tarball of Debian's source package (pure SQL).
if ! bash "$repo/test/in_chroot.sh" "$root" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	"postgresql-$version-pgtap" >&2; then
	echo "no postgresql-$version-pgtap package: building pgTAP from its source" >&2
	echo "deb-src $mirror $suite main" > "$root/etc/apt/sources.list.d/$suite-src.list"
	bash "$repo/test/in_chroot.sh" "$root" bash -c "
		set -e
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends patch
		rm -rf /build/pgtap && mkdir -p /build/pgtap && cd /build/pgtap
		# the upstream tarball is all we need, whatever else fails to come
		apt-get source --download-only -qq pgtap || true
		tar xf pgtap_*.orig.tar.*
		cd pgtap-*/
		make -s PG_CONFIG=/usr/lib/postgresql/$version/bin/pg_config
		make -s PG_CONFIG=/usr/lib/postgresql/$version/bin/pg_config install
		rm -rf /build/pgtap
	" >&2
fi

touch "$root/.ready"
echo "$root"
