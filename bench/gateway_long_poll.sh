#!/usr/bin/env bash
# Long polling through the SQS gateway: the gateway with maxConnections 20,
# WAITERS receives (default 1000) long-polling (WaitTimeSeconds 20) QUEUES
# queues (default 10) with the AWS SDK for JavaScript, each receiving again
# once answered, as the SDK's pollers do; then SENDS messages (default
# 300), one at a time, each after the message before reached its waiter
# (bench/gateway_long_poll.js). Prints, as a Markdown section, p50, p99
# and max from the send's commit (taken as the arrival of its response at
# the sender) to the arrival of the woken receive's response, how many
# waiters each send woke, and the most PostgreSQL connections the gateway
# held (pg_stat_activity every 0.1 s, through one psql session); then one
# line per target (bench/targets.tsv's gateway_long_poll.* rows):
# "target|<target>|<figure>|<✓ or ✗>".
# Not part of CI; about half a minute, once npm has the SDK in its cache.
# Usage: [WAITERS=1000] [QUEUES=10] [SENDS=300] bash bench/gateway_long_poll.sh
set -euo pipefail

bench_name=gateway_long_poll bench_port=55495
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
max_connections=20
application=queue-gateway-bench

start_server
as_user psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION queue" -c "CREATE ROLE sqs_bench NOLOGIN" \
	-c "SELECT queue_grant('*', 'sqs_bench', p) FROM unnest(ARRAY['send', 'process', 'read', 'manage']) AS p" > /dev/null

# the gateway and the SDK, installed as the tests install them, in the work
# directory (the test's lock file pins the SDK)
tar -C "$repo" --exclude=node_modules -cf - gateway clients/node test/gateway/package.json test/gateway/package-lock.json |
	tar -C "$work" -xf -
cp "$repo/bench/gateway_long_poll.js" "$work/"
chown -R "$user" "$work"
# npm keeps its cache under HOME
as_user env HOME="$work" bash -c "cd '$work/test/gateway' && npm ci --no-audit --no-fund --silent" > /dev/null
as_user env HOME="$work" bash "$work/clients/node/install_into.sh" "$work/gateway" gateway 2> /dev/null

key=AKIDBENCHLONGPOLL
secret=bench-long-poll-secret-0123456789abcdef
cat > "$work/gateway.json" <<EOF
{
  "database": "postgresql://$user@${work//\//%2F}:$bench_port/postgres?application_name=$application",
  "host": "127.0.0.1", "port": 0, "maxConnections": $max_connections,
  "receiptSecret": "a bench secret of at least thirty-two characters",
  "credentials": [{ "accessKeyId": "$key", "secretAccessKey": "$secret", "role": "sqs_bench" }]
}
EOF
chown "$user" "$work/gateway.json"
background_as_user gateway "node '$work/gateway/server.js' --config '$work/gateway.json' > '$work/gateway.log' 2>&1"
# the sampler and the gateway end before the server, which lib.sh's trap stops
trap 'stop_background sampler; stop_background gateway; as_user pg_ctl -D "$work/data" -m fast -w stop > /dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
	grep -qs 'listening on' "$work/gateway.log" && break
	sleep 0.1
done
url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/gateway.log")
[ -n "$url" ] || { cat "$work/gateway.log" >&2; exit 1; }

# one psql session samples the gateway's connections every 0.1 s
echo "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$application' \\watch 0.1" > "$work/sample.sql"
background_as_user sampler "psql -X -q -At < '$work/sample.sql' > '$work/connections.txt'"

result=$(as_user env NODE_PATH="$work/test/gateway/node_modules" bash -c \
	"ulimit -n 8192 && exec node '$work/gateway_long_poll.js' '$url' '$key' '$secret'" 2> "$work/driver.log") ||
	{ cat "$work/driver.log" "$work/gateway.log" >&2; exit 1; }
stop_background sampler
peak=$(grep -E '^[0-9]+$' "$work/connections.txt" | sort -n | tail -n 1)
samples=$(grep -cE '^[0-9]+$' "$work/connections.txt")

field() { node -e "const r = JSON.parse(process.argv[1]); const v = r['$1']; console.log(typeof v === 'object' ? Object.entries(v).map(([n, c]) => c + ' × ' + n).join(', ') : v)" "$result"; }
sends=$(field sends)
waiters=${WAITERS:-1000}
queues=${QUEUES:-10}
echo "## Long polling through the SQS gateway"
echo
echo "\`bash bench/gateway_long_poll.sh\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'), Node $(node --version): the gateway with maxConnections $max_connections;"
echo "$waiters receives (AWS SDK for JavaScript) long-poll $queues queues, each receiving again once answered;"
echo "$sends messages sent one at a time round the queues, each after the one before reached its waiter."
echo "The send's commit is taken as the arrival of its response at the sender, so the latencies leave out the gateway's write of that response and its trip over loopback."
echo
echo "| | |"
echo "|---|---|"
echo "| sends whose message a waiting receive returned | $(field received) of $sends (received twice: $(field twice)) |"
echo "| the send's commit to the woken receive's response | p50 $(field p50) ms, p99 $(field p99) ms, max $(field max) ms |"
echo "| receives answered with a message, per send | $(field wokenPerSend) |"
echo "| receives answered empty before their wait ran out | $(field emptyBeforeWaitRanOut) |"
echo "| receives answered empty at the end of their wait (not woken by a send) | $(field emptyAtEndOfWait) |"
echo "| the gateway's PostgreSQL connections, at most | $peak ($samples samples of pg_stat_activity) |"
echo
target_line gateway_long_poll.wake_p99 "$(field p99) ms" "$(field p99)" waiters="$waiters" queues="$queues"
target_line gateway_long_poll.connections "$peak" "$peak" waiters="$waiters" max_connections="$max_connections"
