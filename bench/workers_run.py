"""The Python sides of bench/workers.sh: loads the jobs with put_batch, or
drains them with a handler that does nothing but count, and prints the
run's figures.  The sides:

  python   our Python Worker (pgqueue): concurrency and batch_size
           CONCURRENCY, the other options at their defaults
  pyloop   our Python client without the Worker: delete_and_get of
           CONCURRENCY in a loop, each call deleting the batch the
           previous one got, whose messages were handled one by one
  psyloop  the same loop on psycopg alone, without our client: the
           statement our client sends, prepared, the rows as tuples

The run is timed from its first fetch until every job's deletion is
committed: the Worker counts a job processed once the call that deleted it
returned, the loop ends with the call that deleted the last batch.

Usage: python3 workers_run.py load|run SIDE DSN JOBS CONCURRENCY
Prints for run one line: the run's seconds, the jobs handled, 0 (the
queries made to see the end: none), the CPU time in µs (user and system,
all threads) of this process over the run, and the Worker's options as
JSON (the Worker's, or the loop's call).
"""
import itertools
import json
import sys
import threading
import time

from pgqueue import Client, Worker

CHUNK = 1000    # jobs per put_batch


def drain_with_worker(client: Client, jobs: int, concurrency: int):
    """Runs the Worker until it has deleted every job: the jobs handled, its
    options, and what stops it (after the clock)."""
    counter = itertools.count(1)   # next() is atomic under the GIL
    all_handled = threading.Event()

    def handler(_message) -> None:
        if next(counter) == jobs:
            all_handled.set()

    options = {"concurrency": concurrency, "batch_size": concurrency}
    worker = Worker(client, "bench", handler, **options)
    worker.start()
    all_handled.wait()
    while worker.metrics.processed < jobs:
        time.sleep(0.001)
    return next(counter) - 1, options, worker.stop


LOOP_OPTIONS = {"visibility_timeout": 30, "wait": 0}


def drain_in_loop(step):
    """Drains the queue in a plain loop: step(done) deletes the messages done
    with and returns how many it deleted and the next messages, handled one
    by one.  Returns the jobs handled."""
    handled = deleted = 0
    done = []
    while True:
        deleted_now, got = step(done)
        deleted += deleted_now
        if not got:
            break
        for _message in got:   # the handler, which does nothing but count
            handled += 1
        done = got
    if deleted != handled:
        raise RuntimeError(f"the loop handled {handled} jobs and deleted {deleted}")
    return handled


def drain_with_loop(client: Client, jobs: int, concurrency: int):
    """delete_and_get in a loop until the queue is empty: the jobs handled,
    the call's options, and nothing to stop."""
    options = {"max_messages": concurrency, **LOOP_OPTIONS}

    def step(done):
        got = client.delete_and_get("bench", done, **options)
        return sum(1 for result in got.deleted if result.status == "deleted"), got.messages

    return drain_in_loop(step), options, lambda: None


DELETE_AND_GET = (
    "SELECT * FROM queue_delete_and_get("
    "%s, %s::bigint[], %s::uuid[], %s::int, pg_catalog.make_interval(secs => %s::float8), '0', false) "
    "WITH ORDINALITY AS r WHERE r.status OPERATOR(pg_catalog.<>) 'deleted'")


def drain_with_psycopg(dsn: str, jobs: int, concurrency: int):
    """The loop of drain_with_loop on psycopg alone: the jobs handled, the
    call's options, and what closes the connection."""
    import psycopg
    options = {"max_messages": concurrency, **LOOP_OPTIONS}
    connection = psycopg.connect(dsn, autocommit=True)

    def step(done):
        # the rows: status, message_id, body, ..., pop_receipt (the ninth)
        rows = connection.execute(DELETE_AND_GET, ("bench", [row[1] for row in done], [row[8] for row in done],
                                                   concurrency, LOOP_OPTIONS["visibility_timeout"]),
                                  prepare=True).fetchall()
        claimed = [row for row in rows if row[0] == "claimed"]
        # the rows left are the claims and the deletes that failed
        return len(done) - (len(rows) - len(claimed)), claimed

    return drain_in_loop(step), options, connection.close


def main() -> None:
    mode, side, dsn = sys.argv[1], sys.argv[2], sys.argv[3]
    jobs, concurrency = int(sys.argv[4]), int(sys.argv[5])
    client = Client(dsn)
    if mode == "load":
        for start in range(0, jobs, CHUNK):
            client.put_batch("bench", [json.dumps({"n": i}) for i in range(start, min(start + CHUNK, jobs))])
        client.close()
        return
    client.stats("bench")   # the schema looked up before the clock starts
    cpu, started = time.process_time(), time.perf_counter()
    if side == "psyloop":
        handled, options, stop = drain_with_psycopg(dsn, jobs, concurrency)
    else:
        drain = {"python": drain_with_worker, "pyloop": drain_with_loop}[side]
        handled, options, stop = drain(client, jobs, concurrency)
    seconds = time.perf_counter() - started
    cpu_us = (time.process_time() - cpu) * 1e6
    stop()
    client.close()
    print(f"{seconds} {handled} 0 {cpu_us:.0f} {json.dumps(options, separators=(',', ':'))}")


if __name__ == "__main__":
    main()
