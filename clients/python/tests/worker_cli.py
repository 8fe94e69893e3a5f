#!/usr/bin/env python3
"""A worker for the cross-language test: a body "sleep:S" works S seconds,
"fail" fails on its first delivery.  Prints a JSON line per message handled,
and at SIGTERM stops gracefully and prints a summary line with the metrics.

Usage: worker_cli.py DSN QUEUE; options from WORKER_VISIBILITY_TIMEOUT,
WORKER_BATCH_SIZE, WORKER_HEARTBEAT_INTERVAL, WORKER_EXTENSION_THRESHOLD,
WORKER_FAILURE_DELAY (seconds).
"""
import json
import os
import signal
import sys
import threading
import time

from pgqueue import Client, Worker

out = threading.Lock()


def emit(record):
    with out:
        print(json.dumps(record), flush=True)


def handle(message):
    outcome = "done"
    try:
        if message.body.startswith("sleep:"):
            time.sleep(float(message.body.split(":")[1]))
        if message.body == "fail" and message.dequeue_count == 1:
            outcome = "failed"
            raise RuntimeError("fails on its first delivery")
    finally:
        emit({"lang": "python", "message_id": str(message.message_id), "body": message.body,
              "dequeue_count": message.dequeue_count, "outcome": outcome})


def option(name, default):
    return float(os.environ.get(f"WORKER_{name}", default))


worker = Worker(Client(sys.argv[1]), sys.argv[2], handle,
                visibility_timeout=option("VISIBILITY_TIMEOUT", 30),
                batch_size=int(option("BATCH_SIZE", 16)),
                heartbeat_interval=option("HEARTBEAT_INTERVAL", 1),
                extension_threshold=option("EXTENSION_THRESHOLD", 5),
                failure_delay=option("FAILURE_DELAY", 0))
signal.signal(signal.SIGTERM, lambda *_: worker.stop())
worker.run()
emit({"summary": True, "lang": "python", "metrics": worker.metrics.as_dict()})
