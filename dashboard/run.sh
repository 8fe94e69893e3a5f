#!/usr/bin/env bash
# Starts the queue dashboard (docs/dashboard.md) against a database, its
# dependencies installed first when missing or older than clients/node.
# Usage: bash dashboard/run.sh DSN [--port 8080] [--host 127.0.0.1] [--allowed-host NAME] [--refresh 2] [--allow-writes]
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/../clients/node/install_into.sh" "$here" dashboard
cd "$here"
exec node "$here/server.js" "$@"
