#!/usr/bin/env python3
"""Checks what two consumer examples did with the same queue and prints TAP.

Usage: check.py NAME EXPECTED OUTPUT...

EXPECTED is how many messages were put: 'ok' bodies, one 'sleep:6' (a task
longer than the 4 s lease: only the heartbeat keeps it from being handed to
the other consumer) and 'fail' bodies (they fail once, come back after the
retry delay and succeed).
"""
import json
import sys

name, expected, outputs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
handled, summaries = [], []
for path in outputs:
    with open(path) as f:
        for line in f:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            (summaries if record.get('summary') else handled).append(record)

done = [r for r in handled if r['outcome'] == 'done']
done_ids = [r['message_id'] for r in done]
fails = [r for r in handled if r['body'] == 'fail']
long_task = [r for r in handled if r['body'] == 'sleep:6']
checks = [
    (f'{name}: both consumers finished', len(summaries) == len(outputs)),
    (f'{name}: all {expected} messages done', len(set(done_ids)) == expected),
    (f'{name}: each exactly once', len(done_ids) == len(set(done_ids))),
    (f'{name}: the 6 s task was handed out once (the heartbeat kept its lease)',
     len(long_task) == 1 and long_task[0]['dequeue_count'] == 1),
    (f'{name}: failed messages were released and succeeded on their second delivery',
     sorted((r['dequeue_count'], r['outcome']) for r in fails)
     == sorted([(1, 'failed'), (2, 'done')] * (len(fails) // 2)) and len(fails) > 0),
    (f'{name}: leases were renewed', sum(s['renewals'] for s in summaries) > 0),
]
gaps = [s.get('longest_heartbeat_gap', 0) for s in summaries]
if gaps:
    print(f'# measured: {name}: longest time between two heartbeat rounds {max(gaps):.2f} s '
          f'(lease 4 s, a round every 1 s)')
for i, (label, passed) in enumerate(checks, 1):
    print(f"{'ok' if passed else 'not ok'} {i} - {label}")
if not all(p for _, p in checks):
    print(f'# {name}: {handled}')
    print(f'# {name}: {summaries}')
sys.exit(0 if all(p for _, p in checks) else 1)
