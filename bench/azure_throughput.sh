#!/usr/bin/env bash
# Throughput through the gateway's Azure Queue Storage port, against the
# Node client directly and against Azurite (the storage emulator), on one
# throwaway server (durable settings of bench/lib.sh): CLIENTS clients
# (default 4) each loop over a put of 32 messages of about 100 bytes, a get
# of up to 32 and a delete of each message got, on one queue
# (bench/azure_throughput.js):
#
#   gateway  @azure/storage-queue through the gateway's Azure port
#            (azurePort, an account mapped to a role), started by
#            gateway/run.sh: sendMessage 32 times, receiveMessages
#            (numberOfMessages 32), deleteMessage for each (the Queue
#            service has no batch put or delete)
#   direct   the Node client (clients/node) on the same database, as the
#            role the gateway's account maps to: putBatch of 32, get of 32,
#            deleteBatch
#   azurite  the same SDK calls as the gateway's side against Azurite's
#            queue service (in memory, on 127.0.0.1 only, telemetry off)
#
# Azurite is the one test/gateway's lock file pins (its tests compare the
# gateway with it).
#
# The sides take turns, a run of SECONDS each (default 3), ROUNDS times
# (default 3), after an unmeasured warm-up run of each. Prints, as a
# Markdown section, each run's messages/s (messages deleted per second),
# each side's median, the ratios of the medians gateway / direct and
# gateway / Azurite, the CPU time per message of the clients, the gateway
# or Azurite, and PostgreSQL, and the share of the cores other processes
# kept busy over each run; then a line per target (bench/targets.tsv's
# azure_throughput.* rows): "target|<target>|<figure>|<✓ or ✗>".
# BASELINE=REF adds a fourth side: a second gateway, of REF's gateway/ and
# clients/node (git archive), with the same account, taking its turn
# first, so that a change to the gateway is measured before and after in
# one run.
# Not part of CI; about 85 s with the defaults once npm's cache holds the
# packages (NPM_CACHE), half a minute more the first time.
# Usage: [ROUNDS=3] [CLIENTS=4] [BASELINE=REF] bash bench/azure_throughput.sh [seconds per run, default 3]
set -euo pipefail

bench_name=azure_throughput bench_port=55497
azurite_port=55498
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-3}
rounds=${ROUNDS:-3}
clients=${CLIENTS:-4}

# sets $baseline and $baseline_commit
gateway_bench_setup azure_bench azure_throughput.js

# the gateway's account, a key of its own; Azurite's is its well-known
# development account
account=benchaccount
account_key=$(head -c 64 /dev/urandom | base64 -w0)
azurite_account=devstoreaccount1
azurite_key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
dsn="postgresql://$user@${work//\//%2F}:$bench_port/postgres"
cat > "$work/gateway.json" <<-EOF
{
  "database": "$dsn?application_name=queue-gateway",
  "host": "127.0.0.1", "port": 0,
  "receiptSecret": "a bench secret of at least thirty-two characters",
  "credentials": [{ "accessKeyId": "AKIDBENCHAZURE", "secretAccessKey": "bench-azure-secret-0123456789abcdef", "role": "azure_bench" }],
  "azurePort": 0,
  "azureAccounts": [{ "name": "$account", "key": "$account_key", "role": "azure_bench" }]
}
EOF
chown "$user" "$work/gateway.json"
# the gateways and Azurite end before the server, which lib.sh's trap stops
trap 'stop_background baseline; stop_background azurite; stop_background gateway; as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
background_as_user gateway "bash '$work/gateway/run.sh' --config '$work/gateway.json' > '$work/gateway.log' 2>&1"
[ -n "$baseline" ] && background_as_user baseline "bash '$work/baseline/gateway/run.sh' --config '$work/gateway.json' > '$work/baseline.log' 2>&1"
# Azurite's queue service, in its directory: env and its script
# (#!/usr/bin/env node) exec, so the process id is Node's
azurite_version=$(node -p "require('$work/test/gateway/node_modules/azurite/package.json').version")
mkdir "$work/azurite"
chown "$user" "$work/azurite"
background_as_user azurite "env -C '$work/azurite' '$work/test/gateway/node_modules/.bin/azurite-queue' --inMemoryPersistence \
	--disableTelemetry --silent --queueHost 127.0.0.1 --queuePort $azurite_port > '$work/azurite.log' 2>&1"
sides=()
if [ -n "$baseline" ]; then
	baseline_url=$(logged_url "$work/baseline.log" 'Azure Queue Storage on')
	sides+=("baseline=$baseline_url@$(cat "$work/baseline.pid")@$account_key")
fi
gateway_url=$(logged_url "$work/gateway.log" 'Azure Queue Storage on')
azurite_url=$(logged_url "$work/azurite.log" 'successfully listens on')
sides+=("gateway=$gateway_url@$(cat "$work/gateway.pid")@$account_key" direct
	"azurite=$azurite_url/$azurite_account@$(cat "$work/azurite.pid")@$azurite_key")

run_steal=$(steal_now)
# the direct side runs as the role the gateway's account maps to
result=$(as_user env NODE_PATH="$work/test/gateway/node_modules:$work/gateway/node_modules" \
	POSTMASTER_PID="$(head -n 1 "$work/data/postmaster.pid")" \
	node "$work/azure_throughput.js" "$seconds" "$rounds" "$clients" "$dsn?options=-c%20role%3Dazure_bench" \
	"${sides[@]}" 2> "$work/driver.log") ||
	{ cat "$work/driver.log" "$work"/*.log >&2; exit 1; }

gateway_median=$(field gateway rates | median)
direct_median=$(field direct rates | median)
azurite_median=$(field azurite rates | median)

echo "## Throughput through the gateway's Azure Queue Storage port"
echo
echo "\`$([ -n "${ROUNDS:-}" ] && echo "ROUNDS=$rounds ")$([ -n "${CLIENTS:-}" ] && echo "CLIENTS=$clients ")$([ -n "$baseline" ] && echo "BASELINE=$baseline ")bash bench/azure_throughput.sh $seconds\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), the extension $(as_user psql -XAtc "SELECT extversion FROM pg_extension WHERE extname = 'queue'"), Node $(node --version), @azure/storage-queue $(node -p "require('$work/test/gateway/node_modules/@azure/storage-queue/package.json').version"), Azurite $azurite_version, $(date -u +%Y-%m-%d)."
echo "$clients clients each put 32 messages of 100 bytes, get up to 32 and delete those got, in a loop on one queue:"
echo "with @azure/storage-queue through the gateway's Azure port and against Azurite in memory (sendMessage 32 times, receiveMessages of 32, deleteMessage for each),"
echo "and through the Node client on the gateway's database, as the role the gateway's account maps to (putBatch of 32, get of 32, deleteBatch)."
echo "The sides take turns, $rounds runs of $seconds s each after a warm-up of each; messages/s are the messages deleted per second."
echo "CPU time per message, the median of the runs: the clients (one Node process, the SDK's or the Node client's), the gateway's or Azurite's process, PostgreSQL's processes."
echo
echo "| side | msg/s, each run | msg/s, median | clients' CPU µs/msg | gateway's or Azurite's CPU µs/msg | PostgreSQL's CPU µs/msg |"
echo "|---|---|---|---|---|---|"
if [ -n "$baseline" ]; then
	side_row baseline "through the gateway of $baseline_commit ($baseline)"
	side_row gateway "through the gateway of the working tree"
else
	side_row gateway "through the gateway"
fi
side_row direct "the Node client directly"
side_row azurite "Azurite"
echo
direct_ratio=$(ratio "$gateway_median" "$direct_median")
azurite_ratio=$(ratio "$gateway_median" "$azurite_median")
echo "gateway / direct, medians: $direct_ratio; gateway / Azurite: $azurite_ratio$([ -n "$baseline" ] && echo "; gateway / gateway of $baseline_commit: $(ratio "$gateway_median" "$(field baseline rates | median)")")"
echo
load_lines
echo
target_line azure_throughput.direct_ratio "${direct_ratio}×" "$direct_ratio" clients="$clients"
target_line azure_throughput.azurite_ratio "${azurite_ratio}×" "$azurite_ratio" clients="$clients"
