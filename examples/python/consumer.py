#!/usr/bin/env python3
"""A queue consumer in Python (psycopg2), in the pattern of Azure Functions'
queue trigger and the AWS .NET message processing framework:

  - get a batch of messages with a visibility timeout (the lease);
  - while a handler works, a heartbeat extends the lease of every message
    still in flight before it runs out (queue_update_batch);
  - on success, delete the message with its newest receipt;
  - on failure, release it with a delay (visible again after a backoff),
    so another attempt comes later; after max_dequeue_count attempts the
    queue moves it to <queue>-poison by itself.

Usage: consumer.py DSN QUEUE [--exit-when-empty]

Every call names the schema the extension is installed in (looked up once),
so that no function another role created in a schema earlier in search_path
can stand in for ours.

The handler here is a stand-in: a body "sleep:S" works S seconds, "fail"
fails on its first attempt.  Prints one line per message handled and a
summary line, as JSON.
"""
import json
import sys
import threading
import time

import psycopg2

BATCH = 10
LEASE = 4.0            # seconds
BEAT = LEASE / 4       # the heartbeat renews this often: three beats can be
                       # missed (a stalled disk, a busy machine) before a
                       # lease runs out
RETRY_DELAY = 1.0      # seconds before a failed message is visible again
LOST = ('QU404', 'QU409')  # not found / stale receipt: the lease was lost


def api_schema(conn):
    """The extension's schema, quoted as an identifier, to qualify calls."""
    cur = conn.cursor()
    cur.execute("SELECT quote_ident(n.nspname) FROM pg_catalog.pg_extension e "
                "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
                "WHERE e.extname = 'queue'")
    row = cur.fetchone()
    if row is None:
        sys.exit('the queue extension is not installed in this database')
    return row[0]


def handle(body, dequeue_count):
    """The work.  Returns normally on success, raises on failure."""
    if body.startswith('sleep:'):
        time.sleep(float(body.split(':')[1]))
    if body == 'fail' and dequeue_count == 1:
        raise RuntimeError('failed on the first attempt')


class Heartbeat(threading.Thread):
    """Extends the leases of the messages in flight every BEAT s, on a
    connection of its own, and keeps their newest receipts.  A failed round
    is reported and the next one tried; the longest time between two rounds
    is kept for the summary."""

    def __init__(self, dsn, queue):
        super().__init__(daemon=True)
        self.conn = psycopg2.connect(dsn)
        self.conn.autocommit = True
        self.queue = queue
        self.api = api_schema(self.conn)
        self.lock = threading.Lock()
        self.receipts = {}          # message id -> newest pop receipt
        self.stopped = threading.Event()
        self.renewals = 0
        self.longest_gap = 0.0

    def hold(self, message_id, receipt):
        with self.lock:
            self.receipts[message_id] = receipt

    def let_go(self, message_id):
        with self.lock:
            return self.receipts.pop(message_id)

    def run(self):
        last = time.monotonic()
        while not self.stopped.wait(BEAT):
            now = time.monotonic()
            self.longest_gap = max(self.longest_gap, now - last)
            last = now
            with self.lock:
                try:
                    self.renew()
                except psycopg2.Error as e:
                    print(f'heartbeat: {e.pgcode} {e}', file=sys.stderr, flush=True)

    def renew(self):
        ids = list(self.receipts)
        if not ids:
            return
        cur = self.conn.cursor()
        cur.execute(f"SELECT message_id, pop_receipt, status FROM {self.api}.queue_update_batch("
                    "%s, %s::bigint[], %s::uuid[], make_interval(secs => %s))",
                    (self.queue, ids, [self.receipts[i] for i in ids], LEASE))
        for message_id, receipt, status in cur.fetchall():
            if status == 'updated':
                self.receipts[message_id] = receipt
                self.renewals += 1


def main():
    dsn, queue = sys.argv[1], sys.argv[2]
    exit_when_empty = '--exit-when-empty' in sys.argv
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    api = api_schema(conn)
    heartbeat = Heartbeat(dsn, queue)
    heartbeat.start()
    done = failed = 0

    while True:
        cur = conn.cursor()
        cur.execute(f"SELECT message_id, pop_receipt, dequeue_count, body FROM {api}.queue_get("
                    "%s, %s, make_interval(secs => %s), '2 seconds')", (queue, BATCH, LEASE))
        batch = cur.fetchall()
        if not batch:
            cur.execute(f"SELECT visible + in_flight + delayed FROM {api}.queue_stats(%s)", (queue,))
            if exit_when_empty and cur.fetchone()[0] == 0:
                break
            continue
        for message_id, receipt, _, _ in batch:
            heartbeat.hold(message_id, receipt)

        for message_id, _, dequeue_count, body in batch:
            try:
                handle(body, dequeue_count)
                outcome = 'done'
            except Exception:
                outcome = 'failed'
            receipt = heartbeat.let_go(message_id)
            try:
                if outcome == 'done':
                    cur.execute(f"SELECT {api}.queue_delete(%s, %s, %s)",
                                (queue, message_id, receipt))
                    done += 1
                else:
                    cur.execute(f"SELECT {api}.queue_update(%s, %s, %s, make_interval(secs => %s))",
                                (queue, message_id, receipt, RETRY_DELAY))
                    failed += 1
            except psycopg2.Error as e:
                # Another consumer has the message now (at-least-once): its
                # work here is not acknowledged, and the loop goes on.
                if e.pgcode not in LOST:
                    raise
                outcome = 'lease_lost'
            print(json.dumps({'message_id': message_id, 'body': body,
                              'dequeue_count': dequeue_count, 'outcome': outcome}), flush=True)

    heartbeat.stopped.set()
    print(json.dumps({'summary': True, 'done': done, 'failed': failed,
                      'renewals': heartbeat.renewals,
                      'longest_heartbeat_gap': round(heartbeat.longest_gap, 3)}), flush=True)


if __name__ == '__main__':
    main()
