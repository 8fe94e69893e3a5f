#!/usr/bin/env bash
# What this machine charges for waking a sleeping process, without
# PostgreSQL: process_wake.c beside it wakes one of PROCESSES sleeping
# processes every 20 ms and times it until it has read TOUCH of its memory.
# Prints a Markdown table: the floor under bench/herd.sh's wake-up, and
# why a long poll wakes the getter that began waiting last first.
# Not part of CI; about two minutes.  Usage: bash bench/experiments/process_wake/process_wake.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v gcc > /dev/null || { echo "needs gcc (test/prepare.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gcc -O2 -o "$tmp/process_wake" "$here/process_wake.c"

echo "## Waking a sleeping process"
echo
echo "\`bash bench/experiments/process_wake/process_wake.sh\` on $(nproc) cores: from the write that wakes a process to the end of its reading of its own memory, in ms."
echo
echo "| processes asleep | the one woken | memory it reads | p50 | p99 | max |"
echo "|---|---|---|---|---|---|"
# processes, rounds, KB read, rotation, description
while read -r processes rounds kb rotation who; do
	read -r p50 p99 max < <("$tmp/process_wake" "$processes" "$rounds" "$kb" "$rotation")
	echo "| $processes | $who | $kb KB | $p50 | $p99 | $max |"
done <<'CASES'
2 300 0 2 one of the two
2 300 2048 2 one of the two
1000 1000 0 1000 asleep longest (20 s)
1000 1000 2048 1000 asleep longest (20 s)
1000 300 0 2 one of the two that ran last
1000 300 2048 2 one of the two that ran last
CASES
