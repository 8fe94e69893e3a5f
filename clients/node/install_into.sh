#!/usr/bin/env bash
# Installs the dependencies of an application built on this client library
# (the dashboard, the gateway) into its folder, when they are missing or
# older than this library.  The library is installed as a copy
# (--install-links: a plain file: dependency would be a symlink whose own
# dependencies are missing), so a copy older than clients/node must be
# installed again.
# Usage: bash clients/node/install_into.sh APP_DIR NAME
set -euo pipefail

app=${1:?usage: install_into.sh APP_DIR NAME}
name=${2:?usage: install_into.sh APP_DIR NAME}
library=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$app"

installed() {
	[ -d node_modules/pg ] && [ -d node_modules/pg-lease-queue ] &&
		diff -rq "$library/lib" node_modules/pg-lease-queue/lib >/dev/null 2>&1 &&
		cmp -s "$library/index.js" node_modules/pg-lease-queue/index.js
}
installed && exit 0
# one install at a time: gateways started together would each install
exec 9> .install.lock
flock 9
if ! installed; then
	echo "$name: installing its dependencies (npm install --install-links)" >&2
	# npm keeps a copy whose version is the library's, however old its files
	rm -rf node_modules/pg-lease-queue
	npm install --install-links --no-audit --no-fund --silent >&2
fi
