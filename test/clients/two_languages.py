#!/usr/bin/env python3
"""A Python worker and a Node worker on one queue, and prints TAP lines.

Both run their package's worker (clients/python/tests/worker_cli.py,
clients/node/test/worker_cli.js) with a 2 s lease extended when less than
1 s is left.  Among the messages: short tasks, tasks of 4 s (twice the
lease: only the extensions keep them from the other worker) and messages
that fail on their first delivery and come back after 0.5 s.

Usage: two_languages.py DSN PYTHON CLIENTS_DIR  (PYTHON has pg-lease-queue installed)
"""
import json
import os
import signal
import subprocess
import sys
import time

from pgqueue import Client

dsn, python, clients = sys.argv[1:4]
queue = "two-languages"
env = dict(os.environ, WORKER_VISIBILITY_TIMEOUT="2", WORKER_EXTENSION_THRESHOLD="1",
           WORKER_HEARTBEAT_INTERVAL="0.25", WORKER_FAILURE_DELAY="0.5", WORKER_BATCH_SIZE="4")
client = Client(dsn)
client.create_queue(queue)
commands = {
    "python": [python, os.path.join(clients, "python/tests/worker_cli.py"), dsn, queue],
    "node": ["node", os.path.join(clients, "node/test/worker_cli.js"), dsn, queue],
}
workers = {lang: subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
           for lang, cmd in commands.items()}
time.sleep(2)   # both polling before the first put

bodies = ["sleep:0.05"] * 100 + ["sleep:4"] * 4 + ["fail"] * 6
put = {str(r.message_id): b for r, b in zip(client.put_batch(queue, bodies), bodies)}
deadline = time.monotonic() + 90
while client.stats(queue)["total"] > 0 and time.monotonic() < deadline:
    time.sleep(0.2)
emptied = client.stats(queue)["total"] == 0

records = []
for worker in workers.values():
    worker.send_signal(signal.SIGTERM)
for lang, worker in workers.items():
    try:
        output, _ = worker.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()   # no summary line: the check below fails
        output, _ = worker.communicate()
    for line in output.splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            print(f"# {lang}: {line}")
summaries = {r["lang"]: r["metrics"] for r in records if r.get("summary")}
handled = [r for r in records if not r.get("summary")]
done = [r["message_id"] for r in handled if r["outcome"] == "done"]


def metric(lang, snake):
    """A metric of either worker: snake_case in Python, camelCase in Node."""
    camel = snake.split("_")[0] + "".join(w.title() for w in snake.split("_")[1:])
    return summaries.get(lang, {}).get(snake, summaries.get(lang, {}).get(camel, -1))


fails = sorted((r["dequeue_count"], r["outcome"]) for r in handled if r["body"] == "fail")
checks = [
    ("the queue was emptied", emptied),
    ("both workers stopped and reported", set(summaries) == {"python", "node"}),
    (f"all {len(put)} messages done", set(done) == set(put)),
    ("each done exactly once", len(done) == len(set(done))),
    ("both languages did work", all(any(r["lang"] == lang and r["outcome"] == "done" for r in handled)
                                    for lang in workers)),
    ("the 4 s tasks were handed out once each (their leases were extended)",
     sorted(r["dequeue_count"] for r in handled if r["body"] == "sleep:4") == [1, 1, 1, 1]),
    ("the failed messages came back and succeeded on their second delivery",
     fails == sorted([(1, "failed"), (2, "done")] * 6)),
    ("leases were extended", metric("python", "extensions") + metric("node", "extensions") > 0),
    ("no lease was lost", metric("python", "lost_leases") == 0 and metric("node", "lost_leases") == 0),
]
print(f"# measured: two languages: python did {sum(r['lang'] == 'python' for r in handled)}, "
      f"node {sum(r['lang'] == 'node' for r in handled)} deliveries")
for number, (label, passed) in enumerate(checks, 1):
    print(f"{'ok' if passed else 'not ok'} {number} - two languages: {label}")
if not all(passed for _, passed in checks):
    print(f"# summaries: {summaries}")
sys.exit(0 if all(passed for _, passed in checks) else 1)
