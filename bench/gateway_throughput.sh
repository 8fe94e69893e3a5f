#!/usr/bin/env bash
# Throughput through the SQS gateway against the Node client directly, on
# one throwaway server (durable settings of bench/lib.sh): CLIENTS clients
# (default 4) each loop over a send of a batch of 10 messages of about 100
# bytes, a receive of up to 10 and a delete of those received, on one
# queue (bench/gateway_throughput.js):
#
#   gateway  the AWS SDK for JavaScript (JSON protocol) through the gateway,
#            started by gateway/run.sh: SendMessageBatch, ReceiveMessage
#            (MaxNumberOfMessages 10), DeleteMessageBatch
#   direct   the Node client (clients/node) on the same database, as the
#            role the gateway's access key maps to: putBatch, get of 10,
#            deleteBatch
#
# The sides take turns, a run of SECONDS each (default 4), ROUNDS times
# (default 3), after an unmeasured warm-up run of each. BASELINE=REF adds a
# third side: a second gateway, of REF's gateway/ and clients/node (git
# archive), started the same way and taking its turn first, so that a
# change to the gateway is measured before and after in one run.
# Prints, as a Markdown section, each run's messages/s (messages deleted
# per second), each side's median, the ratio of the medians gateway /
# direct, the CPU time per message of the clients, the gateway and
# PostgreSQL, and the share of the cores other processes kept busy over
# each run (/proc/stat less the processes of the run: a figure taken
# beside other work is low, and the direct side loses most); then a line per
# target (bench/targets.tsv's gateway_throughput.* rows):
# "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI; about a minute with the defaults, once npm's cache
# (NPM_CACHE) holds the packages.
# Usage: [ROUNDS=3] [CLIENTS=4] [BASELINE=REF] bash bench/gateway_throughput.sh [seconds per run, default 4]
set -euo pipefail

bench_name=gateway_throughput bench_port=55496
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
seconds=${1:-4}
rounds=${ROUNDS:-3}
clients=${CLIENTS:-4}

# sets $baseline and $baseline_commit
gateway_bench_setup sqs_bench gateway_throughput.js

key=AKIDBENCHTHROUGHPUT
secret=bench-throughput-secret-0123456789abcdef
dsn="postgresql://$user@${work//\//%2F}:$bench_port/postgres"
# start_gateway NAME DIR: the gateway of DIR/gateway started by its run.sh
# on an ephemeral port; adds NAME=URL@PID, the driver's side, to sides
sides=()
start_gateway() {
	cat > "$work/$1.json" <<-EOF
	{
	  "database": "$dsn?application_name=queue-gateway-$1",
	  "host": "127.0.0.1", "port": 0,
	  "receiptSecret": "a bench secret of at least thirty-two characters",
	  "credentials": [{ "accessKeyId": "$key", "secretAccessKey": "$secret", "role": "sqs_bench" }]
	}
	EOF
	chown "$user" "$work/$1.json"
	background_as_user "$1" "bash '$2/gateway/run.sh' --config '$work/$1.json' > '$work/$1.log' 2>&1"
	local url
	url=$(logged_url "$work/$1.log" 'listening on')
	sides+=("$1=$url@$(cat "$work/$1.pid")")
}
# the gateways end before the server, which lib.sh's trap stops
trap 'stop_background baseline; stop_background gateway; as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
[ -n "$baseline" ] && start_gateway baseline "$work/baseline"
start_gateway gateway "$work"
sides+=(direct)

run_steal=$(steal_now)
# the direct side runs as the role the gateway's access key maps to
result=$(as_user env NODE_PATH="$work/test/gateway/node_modules:$work/gateway/node_modules" \
	POSTMASTER_PID="$(head -n 1 "$work/data/postmaster.pid")" \
	node "$work/gateway_throughput.js" "$seconds" "$rounds" "$clients" "$dsn?options=-c%20role%3Dsqs_bench" \
	"$key" "$secret" "${sides[@]}" 2> "$work/driver.log") ||
	{ cat "$work/driver.log" "$work"/*.log >&2; exit 1; }

gateway_median=$(field gateway rates | median)
direct_median=$(field direct rates | median)

echo "## Throughput through the SQS gateway"
echo
echo "\`$([ -n "${ROUNDS:-}" ] && echo "ROUNDS=$rounds ")$([ -n "${CLIENTS:-}" ] && echo "CLIENTS=$clients ")$([ -n "$baseline" ] && echo "BASELINE=$baseline ")bash bench/gateway_throughput.sh $seconds\`: $(nproc) cores, PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), the extension $(as_user psql -XAtc "SELECT extversion FROM pg_extension WHERE extname = 'queue'"), Node $(node --version), $(date -u +%Y-%m-%d)."
echo "$clients clients each send a batch of 10 messages of 100 bytes, receive up to 10 and delete those received, in a loop on one queue:"
echo "through the gateway with the AWS SDK for JavaScript (SendMessageBatch, ReceiveMessage of 10, DeleteMessageBatch),"
echo "and through the Node client on the same database, as the role the gateway's access key maps to (putBatch, get of 10, deleteBatch)."
echo "The sides take turns, $rounds runs of $seconds s each after a warm-up of each; messages/s are the messages deleted per second."
echo "CPU time per message, the median of the runs: the clients (one Node process, the SDK's or the Node client's), the gateway's process, PostgreSQL's processes."
echo
echo "| side | msg/s, each run | msg/s, median | clients' CPU µs/msg | gateway's CPU µs/msg | PostgreSQL's CPU µs/msg |"
echo "|---|---|---|---|---|---|"
if [ -n "$baseline" ]; then
	baseline_median=$(field baseline rates | median)
	side_row baseline "through the gateway of $baseline_commit ($baseline)"
	side_row gateway "through the gateway of the working tree"
else
	side_row gateway "through the gateway"
fi
side_row direct "the Node client directly"
echo
figure=$(ratio "$gateway_median" "$direct_median")
echo "gateway / direct, medians: $figure$([ -n "$baseline" ] && echo "; through the gateway of $baseline_commit: $(ratio "$baseline_median" "$direct_median")")"
echo
load_lines
echo
target_line gateway_throughput.ratio "${figure}×" "$figure" clients="$clients"
