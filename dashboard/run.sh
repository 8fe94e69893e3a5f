#!/usr/bin/env bash
# Starts the queue dashboard (docs/dashboard.md) against a database: installs
# its dependencies when they are missing or older than clients/node, then
# runs dashboard/server.js with the arguments given.
# Usage: bash dashboard/run.sh DSN [--port 8080] [--host 127.0.0.1] [--allowed-host NAME] [--refresh 2] [--allow-writes]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here"

# The client library is installed as a copy (--install-links: a plain file:
# dependency would be a symlink whose own dependencies are missing), so a
# copy older than clients/node must be installed again.
installed() {
	[ -d node_modules/pg ] && [ -d node_modules/pg-lease-queue ] &&
		diff -rq ../clients/node/lib node_modules/pg-lease-queue/lib >/dev/null 2>&1 &&
		cmp -s ../clients/node/index.js node_modules/pg-lease-queue/index.js
}
if ! installed; then
	echo "dashboard: installing its dependencies (npm install --install-links)" >&2
	npm install --install-links --no-audit --no-fund --silent >&2
fi

exec node "$here/server.js" "$@"
