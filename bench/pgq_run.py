#!/usr/bin/env python3
"""One timed run of a side of bench/pgq.sh: PAIRS producers and PAIRS
consumers at once for SECONDS, on the extension's queue or on PgQ's queues,
each in a process of its own with one connection (libpq's environment:
PGHOST, PGPORT, PGDATABASE), and what the run did.

Without PACE the producers put as fast as they can, and the consumers stop
with them.  With PACE, the producers offer PACE messages a second in all:
each puts a batch every 100 * PAIRS / PACE seconds on a schedule of its
own, the producers' schedules staggered evenly, sleeping until a batch is
due (and putting at once when late, until SECONDS are over); the consumers
then go on after the producers stopped until every message put was
received, or DRAIN seconds more have passed, a consumer stopping after a
turn that received nothing (the extension's consumer then holds no claimed
batch, it deleted its last).

Every producer puts 100 messages a transaction, the bodies 100 rows of
bench_bodies in a row from a random one (as workloads/batch_queue.sql),
each body's first characters replaced by the put's clock_timestamp() in
epoch seconds (1 KiB all the same).  Every consumer, receiving a message,
takes clock_timestamp() less that stamp in the statement that receives it:
the message's put-to-consumer latency.

  queue  producers: queue_put_batch('bench', 100 bodies), one statement.
         Consumers, one queue shared: the consumer loop, one statement and
         transaction a batch, queue_delete_and_get('bench', the ids and
         receipts of the batch it got last, 100, wait => '1 s'); with
         nothing to delete and nothing visible, it waits for a put.
  pgq    producer i: pgq.insert_event('bench_i', ...) 100 times in one
         statement.  Consumer i, registered as 'bench' on bench_i only:
         pgq.next_batch, pgq.get_batch_events, pgq.finish_batch, one
         transaction a batch; with no batch ready, IDLE_SLEEP seconds of
         sleep (bench/pgq.sh says why), cut short at the end of the run.

A message counts as consumed when its consumption committed: deleted by a
queue_delete_and_get that returned (a batch claimed when the time ran out
is not), or in a PgQ batch whose finish_batch committed.  The server's CPU
time is that of the postmaster (POSTMASTER_PID) and its children, from
/proc, between the start of the run and its end (a process that ends
within the run leaves its share out), so Linux only.

Prints one line: messages put, messages consumed, the latency p50 and p99
over every message received in ms, the CPU time in s of the server and of
the driver's producers and consumers, the consumers' transactions that got
messages.

Usage: IDLE_SLEEP=1 POSTMASTER_PID=N python3 pgq_run.py queue|pgq SECONDS PAIRS [PACE DRAIN]
"""
import multiprocessing
import os
import random
import statistics
import sys
import threading
import time

import psycopg

# a body of bench_bodies with the put's time in front, 1 KiB as it was
STAMPED = "left(extract(epoch FROM clock_timestamp()) || ' ' || body, 1024)"
# the age in ms of a stamped body, when the statement that receives it runs
AGE = "((extract(epoch FROM clock_timestamp()) - split_part({}, ' ', 1)::numeric) * 1000)::float8"
BODIES = "FROM bench_bodies WHERE id > %(r)s AND id <= %(r)s + 100"

PUT = {
    "queue": f"SELECT count(*) FROM queue_put_batch('bench', ARRAY(SELECT {STAMPED} {BODIES}))",
    "pgq": f"SELECT count(pgq.insert_event(%(queue)s, 'bench', {STAMPED})) {BODIES}",
}
# A consumer's statements answer in one row: the messages consumed and
# received, and the ages of those received as text, read after the run (the
# driver shares the machine's cores with the server); the extension's,
# the ids and receipts of the batch to delete next as array literals, given
# back as they are.
CLAIMED = "FILTER (WHERE status = 'claimed')"
LOOP = (f"SELECT count(*) FILTER (WHERE status = 'deleted'), count(*) {CLAIMED}, "
        f"string_agg({AGE.format('body')}::text, ' ') {CLAIMED}, "
        f"coalesce(array_agg(message_id) {CLAIMED}, '{{}}')::text, "
        f"coalesce(array_agg(pop_receipt) {CLAIMED}, '{{}}')::text "
        "FROM queue_delete_and_get('bench', %s::bigint[], %s::uuid[], 100, wait => '1 s')")
EVENTS = f"SELECT count(*), string_agg({AGE.format('ev_data')}::text, ' ') FROM pgq.get_batch_events(%s)"


class Counts:
    """What the producers and consumers tell each other: messages put and
    received so far, and the producers still putting."""

    def __init__(self, fork, pairs):
        self.put = fork.Value("q", 0)
        self.received = fork.Value("q", 0)
        self.producing = fork.Value("i", pairs)

    def add(self, value, n):
        with value.get_lock():
            value.value += n

    def drained(self):
        """Every producer stopped and every message put was received."""
        return self.producing.value == 0 and self.received.value >= self.put.value


def produce(side, conn, number, started, run, counts):
    """Puts batches of 100, at full speed or on the schedule of
    run["pace"], until run["seconds"] are over: put, 0, no ages, 0."""
    conn.autocommit = True
    pick = random.Random(number)
    deadline = started + run["seconds"]
    put = 0
    # paced, a batch every `every` s, the producers' first batches spread
    # over the first `every` s; each due time from the start, not from the
    # last batch, so that a late batch does not shift the rest
    every = 100 * run["pairs"] / run["pace"] if run["pace"] else 0
    while time.monotonic() < deadline:
        if run["pace"]:
            due = every * (put / 100 + (number - 1) / run["pairs"])
            if due >= run["seconds"]:
                break
            time.sleep(max(0.0, started + due - time.monotonic()))
        conn.execute(PUT[side], {"r": pick.randint(0, 900), "queue": f"bench_{number}"})
        put += 100
        counts.add(counts.put, 100)
    with counts.producing.get_lock():
        counts.producing.value -= 1
    return put, 0, [], 0


def consume_queue(conn, deadline, counts):
    """The consumer loop until the deadline, or until drained: 0,
    consumed, ages, batches."""
    conn.autocommit = True
    ids = receipts = "{}"
    ages = []
    consumed = batches = 0
    while time.monotonic() < deadline:
        deleted, claimed, received, ids, receipts = conn.execute(LOOP, (ids, receipts)).fetchone()
        consumed += deleted
        if claimed:
            ages.append(received)
            batches += 1
            counts.add(counts.received, claimed)
        elif counts.drained():
            break
    return 0, consumed, ages, batches


def consume_pgq(conn, number, deadline, idle, counts):
    """PgQ's consumer loop until the deadline, or until drained: 0,
    consumed, ages, batches."""
    name = f"bench_{number}"
    ages = []
    consumed = batches = 0
    while time.monotonic() < deadline:
        batch = conn.execute("SELECT pgq.next_batch(%s, 'bench')", (name,)).fetchone()[0]
        if batch is None:
            conn.commit()
            if counts.drained():
                break
            time.sleep(max(0.0, min(idle, deadline - time.monotonic())))
            continue
        received, text = conn.execute(EVENTS, (batch,)).fetchone()
        conn.execute("SELECT pgq.finish_batch(%s)", (batch,))
        conn.commit()
        consumed += received
        if received:
            ages.append(text)
            batches += 1
            counts.add(counts.received, received)
    return 0, consumed, ages, batches


def worker(role, side, number, run, start, end, counts, results):
    """One producer or consumer: connects, waits for the others, runs."""
    try:
        with psycopg.connect() as conn:
            conn.execute("SELECT 1")
            conn.commit()
            start.wait()
            started = time.monotonic()
            # paced, the consumers drain what is left once the producers stop
            deadline = started + run["seconds"] + (run["drain"] if run["pace"] else 0)
            if role == "producer":
                result = produce(side, conn, number, started, run, counts)
            elif side == "queue":
                result = consume_queue(conn, deadline, counts)
            else:
                result = consume_pgq(conn, number, deadline, run["idle"], counts)
            cpu = time.process_time()
            put, consumed, ages, batches = result
            results.put((put, consumed, [float(age) for text in ages for age in text.split()], batches, cpu))
            # connected until the server's CPU time is read
            end.wait()
    except Exception as error:  # the parent says what failed, and fails
        results.put(repr(error))
        start.abort()
        end.abort()


def server_cpu(postmaster):
    """The CPU time in s of the postmaster and its children, by pid."""
    pids = [postmaster]
    for task in os.listdir(f"/proc/{postmaster}/task"):
        with open(f"/proc/{postmaster}/task/{task}/children") as children:
            pids += [int(pid) for pid in children.read().split()]
    times = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(") ", 1)[1].split()
            times[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except FileNotFoundError:
            pass
    return times


def main():
    side, seconds, pairs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    run = {"seconds": seconds, "pairs": pairs, "idle": float(os.environ.get("IDLE_SLEEP", "1")),
           "pace": float(sys.argv[4]) if len(sys.argv) > 4 else 0,
           "drain": float(sys.argv[5]) if len(sys.argv) > 5 else 0}
    postmaster = int(os.environ["POSTMASTER_PID"])
    fork = multiprocessing.get_context("fork")
    start, end = fork.Barrier(2 * pairs + 1), fork.Barrier(2 * pairs + 1)
    counts = Counts(fork, pairs)
    results = fork.Queue()
    processes = [fork.Process(target=worker, daemon=True,
                              args=(role, side, number, run, start, end, counts, results))
                 for role in ("producer", "consumer") for number in range(1, pairs + 1)]
    for process in processes:
        process.start()
    outcomes = []
    try:
        start.wait()
        before = server_cpu(postmaster)
        for _ in processes:
            outcomes.append(results.get(timeout=seconds + run["drain"] + 60))
            if isinstance(outcomes[-1], str):
                sys.exit(f"pgq_run.py {side}: {outcomes[-1]}")
        after = server_cpu(postmaster)
        end.wait()
    except threading.BrokenBarrierError:
        sys.exit(f"pgq_run.py {side}: {results.get(timeout=10)}")
    for process in processes:
        process.join()
    put = sum(outcome[0] for outcome in outcomes)
    consumed = sum(outcome[1] for outcome in outcomes)
    ages = [age for outcome in outcomes for age in outcome[2]]
    batches = sum(outcome[3] for outcome in outcomes)
    server = sum(after[pid] - before[pid] for pid in after if pid in before)
    driver = sum(outcome[4] for outcome in outcomes)
    p50 = f"{statistics.median(ages):.3f}" if ages else "-"
    # the 99th of 100 quantiles; "-" below two ages
    p99 = f"{statistics.quantiles(ages, n=100)[98]:.3f}" if len(ages) > 1 else "-"
    print(put, consumed, p50, p99, f"{server:.2f}", f"{driver:.2f}", batches)


if __name__ == "__main__":
    main()
