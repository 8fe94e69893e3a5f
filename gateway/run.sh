#!/usr/bin/env bash
# Starts the gateway (SQS: docs/sqs.md; Azure Queue Storage: docs/azure.md)
# with a configuration file, its dependencies installed first when missing
# or older than clients/node.
# Usage: bash gateway/run.sh --config FILE
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/../clients/node/install_into.sh" "$here" gateway
cd "$here"
exec node "$here/server.js" "$@"
