#!/usr/bin/env bash
# Where a message's WAL goes: the batch of 100 (put_batch, get 100,
# delete_batch; 1 KiB bodies) at 4 clients for SECONDS on a throwaway server
# with the durable settings of bench/lib.sh, then pg_waldump --stats over
# exactly the WAL those batches wrote, per record type, in bytes per
# message.  Not part of CI; under a minute.
# Usage: bash bench/experiments/wal_breakdown/wal_breakdown.sh [seconds, default 10]
set -euo pipefail

bench_name=wal_breakdown bench_port=55492
. "$(dirname "${BASH_SOURCE[0]}")/../../lib.sh"
seconds=${1:-10}

start_durable_server
reset_sides
start_lsn=$(as_user psql -XAtc "SELECT pg_current_wal_insert_lsn()")
batches=$(cd "$work" && as_user pgbench -n -M prepared -c 4 -j 2 -T "$seconds" \
	-f workloads/batch_queue.sql 2>&1 | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
end_lsn=$(as_user psql -XAtc "SELECT pg_current_wal_insert_lsn()")
messages=$(( batches * 100 ))
wal_bytes=$(as_user psql -XAtc "SELECT pg_wal_lsn_diff('$end_lsn', '$start_lsn')::bigint")

echo "## WAL per message"
echo
echo "\`bash bench/experiments/wal_breakdown/wal_breakdown.sh $seconds\` on PostgreSQL $(as_user psql -XAtc 'SHOW server_version'):"
echo "$messages messages in batches of 100 at 4 clients (bench/workloads/batch_queue.sql), 1 KiB bodies;"
echo "pg_waldump --stats=record from $start_lsn to $end_lsn, per message (the worker's vacuum included):"
echo
echo "| record | records per message | bytes per message |"
echo "|---|---|---|"
wal_records "$start_lsn" "$end_lsn" "$messages"
echo "| all WAL between the two positions (record types under 1 B included) | | $(( wal_bytes / messages )) |"
