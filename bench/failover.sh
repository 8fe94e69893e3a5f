#!/usr/bin/env bash
# What a failover costs under Patroni (bench/failover.py): a three-node
# Patroni cluster with etcd and HAProxy on loopback, with Patroni's default
# timings and with timings tuned for a fast failover, synchronous and
# asynchronous; rounds of a kill -9 of the leader and of a switchover, one
# producer putting through HAProxy.  Prints a Markdown section.  Not part of
# CI; about twelve minutes with the default three rounds.
# Usage: bash bench/failover.sh [rounds, default 3]
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then
	exec sudo bash "$0" "$@"
fi
# Debian 12's Patroni (3.0) supports PostgreSQL up to 15
pgver=$(QUEUE_HA=1 PGVER=${PGVER:-15} bash "$repo/test/prepare.sh" | tail -n 1)
user=queuetest
if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
	user=$SUDO_USER
fi
work=$(mktemp -d /tmp/queue-failover-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -C "$repo" -cf - bench/failover.py test/ha | tar -C "$work" -xf -
chown -R "$user" "$work"
cd "$work"
runuser -u "$user" -- env HOME="$work" PATH=/usr/bin:/bin \
	/usr/bin/python3 bench/failover.py --bindir "/usr/lib/postgresql/$pgver/bin" --rounds "${1:-3}"
