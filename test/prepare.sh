#!/usr/bin/env bash
# Makes this machine ready to build, test and demo the queue extension:
# installs the Debian/Ubuntu packages that are missing, builds and installs
# the extension into the local PostgreSQL, and makes sure an unprivileged
# user exists to run throwaway servers (initdb refuses to run as root).
#
# Run as root (test/suites.sh and demo/run.sh call it that way).
# Prints, as its last line, the PostgreSQL major version it prepared.
# Usage: bash test/prepare.sh [--packages]   (--packages: the packages only)
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
	echo "test/prepare.sh must run as root" >&2
	exit 1
fi

missing() {
	local pkg
	for pkg in "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || echo "$pkg"
	done
}

apt_updated=no
install_packages() {
	[ $# -gt 0 ] || return 0
	echo "installing: $*" >&2
	if [ "$apt_updated" = no ]; then
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		apt_updated=yes
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

# The server first: its version decides the names of the other packages.
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
	install_packages postgresql
fi
pgver=${PGVER:-$(ls /usr/lib/postgresql | sort -n | tail -n 1)}

# pgTAP may have been built from source where no package has it (test/chroot.sh)
pgtap="postgresql-$pgver-pgtap"
[ -f "/usr/share/postgresql/$pgver/extension/pgtap.control" ] && pgtap=

# shellcheck disable=SC2046
install_packages $(missing make gcc libc6-dev perl python3 python3-psycopg2 python3-psycopg \
	python3-venv python3-pip python3-setuptools python3-wheel mypy python3-pglast \
	"postgresql-$pgver" "postgresql-server-dev-$pgver" $pgtap \
	libtap-parser-sourcehandler-pgtap-perl libipc-run-perl pgbouncer \
	build-essential debhelper postgresql-server-dev-all)

# The Prometheus exporter the metrics test starts (test/t/019_exporter.pl).
# Debian starts its service on installation, scraping the local server on
# port 9187: a service this script brought in is stopped and disabled.
if [ -n "$(missing prometheus-postgres-exporter)" ]; then
	install_packages prometheus-postgres-exporter
	if [ -d /run/systemd/system ]; then
		systemctl disable --now prometheus-postgres-exporter >&2 || true
	fi
fi

# Chromium, which the dashboard's browser test drives (test/dashboard/run.sh),
# when asked for (test/run.sh asks on the machine that runs that test); its
# fonts are only recommended, and recommendations are not installed here.
if [ -n "${QUEUE_BROWSER:-}" ]; then
	# shellcheck disable=SC2046
	install_packages $(missing chromium fonts-liberation)
fi

# The clients the gateway's tests use (test/gateway/run.sh): Debian's
# boto3 and AWS CLI, which speak the Query protocol, Celery on kombu's SQS
# transport (its worker receives through pycurl), and the Azure SDK for
# Python (azure.storage.queue), when asked for.
if [ -n "${QUEUE_GATEWAY:-}" ]; then
	# shellcheck disable=SC2046
	install_packages $(missing python3-boto3 awscli python3-celery python3-pycurl python3-azure-storage)
fi

# Patroni, etcd and HAProxy for the high-availability suite (test/ha/ha.py),
# when asked for.  Where systemd runs, Debian starts etcd's and HAProxy's
# services on installation: those this script brought in are stopped and
# disabled, as the suite starts its own on other ports.
if [ -n "${QUEUE_HA:-}" ]; then
	ha_missing=$(missing patroni etcd-server haproxy)
	# shellcheck disable=SC2086
	install_packages $ha_missing
	if [ -n "$ha_missing" ] && [ -d /run/systemd/system ]; then
		systemctl disable --now etcd haproxy patroni >&2 || true
	fi
fi

# Node for the Node consumer example, where the machine has none yet
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || install_packages nodejs npm

# With --packages, that is all: nothing built, no version printed
# (test/suites.sh installs the gateway's clients so, beside other suites).
if [ "${1:-}" = --packages ]; then
	exit 0
fi

pg_config="/usr/lib/postgresql/$pgver/bin/pg_config"
# objects built for another major version must not be linked into this one
built_for="$repo/src/.built-for"
if [ "$(cat "$built_for" 2>/dev/null)" != "$pgver" ]; then
	make -s -C "$repo" PG_CONFIG="$pg_config" clean >&2
fi
make -s -j"$(nproc)" -C "$repo" PG_CONFIG="$pg_config" >&2
echo "$pgver" > "$built_for"
make -s -C "$repo" PG_CONFIG="$pg_config" install >&2

if ! id queuetest >/dev/null 2>&1; then
	useradd --system --create-home --shell /bin/bash queuetest
fi

echo "$pgver"
