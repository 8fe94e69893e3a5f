#!/usr/bin/env bash
# The gateway's tests (test/gateway/*.test.js, node:test) as TAP: SigV4
# verification against what botocore, the AWS CLI and the AWS SDK for
# JavaScript sign, the SQS wire protocols (JSON 1.0 and Query) against
# what those clients send and parse, the gateway end to end with them, with
# a Celery worker on kombu's SQS transport and with sqs-consumer (npm), and
# through restarts of PostgreSQL and of the gateway; its Azure Queue Storage
# side end to end with @azure/storage-queue (npm) and Debian's Azure SDK for
# Python.  Debian 12's boto3 and AWS CLI speak the Query protocol, the
# JavaScript SDK from npm the JSON protocol.  A test that skips fails the
# run here: the clients it needs are installed by test/prepare.sh
# (QUEUE_GATEWAY=1) and by npm ci below.
#
# Run as root or as a normal user; as root the tests run as the user who
# called sudo, else queuetest.  Usage: bash test/gateway/run.sh
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

if [ "$(id -u)" -eq 0 ]; then
	user=queuetest
	if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
		user=$SUDO_USER
	fi
	as_user() { runuser -u "$user" -- env HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin "$@"; }
else
	user=$(id -un)
	as_user() { "$@"; }
fi

# A copy the test user may write into (npm installs beside the tests).
work=$(mktemp -d /tmp/queue-gateway.XXXXXX)
tar -C "$repo" --exclude=node_modules -cf - gateway clients/node test/gateway | tar -C "$work" -xf -
[ "$(id -u)" -eq 0 ] && chown -R "$user" "$work"

# install_step LABEL COMMAND...: runs an install as the test user; on failure,
# one failing test and the end of its output; else its time, as a comment.
install_step() {
	local label=$1 started=$SECONDS
	shift
	if ! as_user "$@" > "$work/npm.log" 2>&1; then
		echo "not ok 1 - $label"
		sed 's/^/# /' "$work/npm.log" | tail -n 20
		echo "1..1"
		exit 1
	fi
	echo "# $label: $((SECONDS - started)) s"
}
install_step "npm ci installs the test's JavaScript SDKs (test/gateway/package-lock.json)" \
	npm ci --prefix "$work/test/gateway" --no-audit --no-fund --silent
# the gateway's own dependencies, once, before tests start gateways side by side
install_step "the gateway's dependencies install (clients/node/install_into.sh)" \
	bash "$work/clients/node/install_into.sh" "$work/gateway" gateway

# four test files at a time: most of their time is spent waiting on clients,
# the gateway and PostgreSQL
(cd "$work" && as_user node --test --test-concurrency=4 --test-reporter=tap test/gateway/*.test.js) > "$work/tap.log" 2>&1
status=$?
cat "$work/tap.log"
if grep -q '# SKIP' "$work/tap.log"; then
	echo "not ok - no test of the gateway skipped (the clients they need are installed by this run)"
	status=1
fi
[ "$status" -eq 0 ] && rm -rf "$work"
exit "$status"
