"""The Python side of bench/workers.sh: loads the jobs with put_batch, or
drains them with our Python Worker (pgqueue, concurrency and batch_size
CONCURRENCY, the other options at their defaults) whose handler does
nothing but count, and prints the run's figures.

The run is timed from worker.start() (its first fetch) until the Worker
counts every job processed, which it does once the call that deleted it
returned: the completion is committed.

Usage: python3 workers_run.py load|run DSN JOBS CONCURRENCY
Prints for run one line: the run's seconds, the jobs handled, 0 (the
queries made to see the end: none), the CPU time in µs (user and system,
all threads) of this process over the run, and the Worker's options as
JSON.
"""
import itertools
import json
import sys
import threading
import time

from pgqueue import Client, Worker

CHUNK = 1000    # jobs per put_batch


def main() -> None:
    mode, dsn, jobs, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    client = Client(dsn)
    if mode == "load":
        for start in range(0, jobs, CHUNK):
            client.put_batch("bench", [json.dumps({"n": i}) for i in range(start, min(start + CHUNK, jobs))])
        client.close()
        return
    client.stats("bench")   # the schema looked up before the clock starts
    counter = itertools.count(1)   # next() is atomic under the GIL
    all_handled = threading.Event()

    def handler(_message) -> None:
        if next(counter) == jobs:
            all_handled.set()

    options = {"concurrency": concurrency, "batch_size": concurrency}
    worker = Worker(client, "bench", handler, **options)
    cpu, started = time.process_time(), time.perf_counter()
    worker.start()
    all_handled.wait()
    while worker.metrics.processed < jobs:
        time.sleep(0.001)
    seconds = time.perf_counter() - started
    cpu_us = (time.process_time() - cpu) * 1e6
    worker.stop()
    client.close()
    print(f"{seconds} {next(counter) - 1} 0 {cpu_us:.0f} {json.dumps(options, separators=(',', ':'))}")


if __name__ == "__main__":
    main()
