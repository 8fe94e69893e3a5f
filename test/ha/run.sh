#!/usr/bin/env bash
# The high-availability test (test/ha/ha.py) from a checkout: installs what
# it needs (Patroni, etcd and HAProxy from Debian, boto3 for its SQS client,
# the Node client's and the gateway's npm packages), then runs it in a copy
# of the tree as an unprivileged user.  Arguments go to ha.py (--events,
# --keep).  test/suites.sh runs it as the ha suite; demo/ha.sh runs it for
# people to watch.
#
# Needs root or sudo, to install what is missing.
# Usage: [PGVER=15] bash test/ha/run.sh [ha.py options]
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	exec sudo --preserve-env=PGVER bash "$0" "$@"
fi

# Debian 12's Patroni (3.0) supports PostgreSQL up to 15
pgver=$(QUEUE_HA=1 QUEUE_GATEWAY=1 PGVER=${PGVER:-15} bash "$repo/test/prepare.sh" | tail -n 1) || {
	echo "not ok 1 - test/prepare.sh installs what the test needs"
	exit 1
}
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi
work=$(mktemp -d /tmp/queue-ha-run.XXXXXX)
tar -C "$repo" --exclude=node_modules -cf - test/ha clients gateway | tar -C "$work" -xf -
chown -R "$user" "$work"
as_user() { runuser -u "$user" -- env HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin "$@"; }

cd "$work" || exit 1
if ! (as_user npm --prefix clients/node install --no-audit --no-fund --silent &&
	as_user bash clients/node/install_into.sh gateway gateway) > "$work/npm.log" 2>&1; then
	echo "not ok 1 - npm installs the Node client and the gateway"
	sed 's/^/# /' "$work/npm.log" | tail -n 20
	exit 1
fi
as_user /usr/bin/python3 test/ha/ha.py --bindir "/usr/lib/postgresql/$pgver/bin" \
	--node-client clients/node --gateway gateway "$@"
status=$?
cd / && [ "$status" -ne 0 ] || rm -rf "$work"
exit "$status"
