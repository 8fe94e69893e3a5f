#!/usr/bin/env bash
# High availability, to watch: starts a Patroni cluster on loopback (etcd,
# three PostgreSQL nodes with the queue extension preloaded, synchronous
# replication, HAProxy in front), runs producers (SQL, the Python client,
# SQS through the gateway) and consumers (the Python and Node Workers, SQS),
# performs a switchover and a failover (kill -9 of the leader), checks that
# nothing acknowledged was lost or handed out twice, and prints what each
# event cost.  It is the high-availability test (test/ha/ha.py) with two of
# its four events.
#
# Needs root or sudo, once, to install what is missing.
# Usage: bash demo/ha.sh
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../test/ha/run.sh" --events switchover,kill "$@"
