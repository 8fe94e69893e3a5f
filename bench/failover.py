#!/usr/bin/env python3
"""What a failover costs under Patroni: the Patroni cluster of the
high-availability test (test/ha/cluster.py: etcd, three nodes, HAProxy),
one producer putting through HAProxy as fast as one connection goes, and
rounds of a kill -9 of the leader (its postmaster and its Patroni, as when
its machine dies) and of a planned switchover.

For each round: the longest time between two acknowledged puts through
HAProxy around the event, and the acknowledged puts the new leader does
not have.  Three setups, one cluster each: Patroni's
default timings (ttl 30 s, loop_wait 10 s, retry_timeout 10 s) with
synchronous replication; timings tuned for a fast failover (ttl 8 s,
loop_wait 1 s, retry_timeout 3 s, HAProxy checking every 500 ms) with
synchronous replication; the same with asynchronous replication.

Prints a Markdown section.  Runs as an unprivileged user; bench/failover.sh
runs it.
"""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'ha'))
from cluster import Cluster  # noqa: E402

QUEUE = 'failover'


class Producer(threading.Thread):
    """Puts numbered bodies through HAProxy; remembers each outcome's time."""

    def __init__(self, dsn):
        super().__init__(daemon=True)
        self.dsn = dsn
        self.acknowledged = []      # (time, n)
        self.stopping = threading.Event()

    def run(self):
        conn = None
        n = 0
        while not self.stopping.is_set():
            if conn is None:
                try:
                    conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=1)
                except psycopg.Error:
                    time.sleep(0.05)
                    continue
            n += 1
            try:
                conn.execute('SELECT queue_put(%s, %s)', (QUEUE, str(n)))
                self.acknowledged.append((time.time(), n))
            except psycopg.Error:
                conn.close()
                conn = None

    def longest_gap(self, start, end):
        """The longest time between two acknowledged puts around [start, end]."""
        times = [at for at, _ in self.acknowledged if start - 2 <= at <= end]
        return max((b - a for a, b in zip(times, times[1:])), default=None)

    def missing(self, have, count):
        """How many of the first count acknowledged puts are not among have."""
        return sum(1 for _, n in self.acknowledged[:count] if n not in have)


def run_setup(work, bindir, timings, synchronous, rounds):
    cluster = Cluster(work, bindir, timings=timings, synchronous=synchronous)
    rows = []
    try:
        cluster.start()
        cluster.sql(cluster.leader(), 'CREATE EXTENSION queue')
        cluster.sql(cluster.leader(), f"SELECT queue_create('{QUEUE}')")
        producer = Producer(cluster.haproxy_dsn())
        producer.start()
        lost_before = 0
        for _ in range(rounds):
            for kind, event in (('kill -9 of the leader', cluster.kill_leader),
                                ('switchover', cluster.switchover)):
                time.sleep(3)
                start = time.time()
                event()
                # until puts are acknowledged again for a while
                deadline = time.time() + 120
                while time.time() < deadline and not (
                        producer.acknowledged and producer.acknowledged[-1][0] > time.time() - 0.5
                        and len([a for a, _ in producer.acknowledged if a > start]) > 50):
                    time.sleep(0.1)
                gap = producer.longest_gap(start, time.time())
                # no consumer runs: every put acknowledged before the look
                # must be on the leader
                count = len(producer.acknowledged)
                have = {int(b) for (b,) in cluster.sql(
                    cluster.leader(), 'SELECT m.body FROM queue_storage.messages m '
                    'JOIN queue_storage.queues q USING (queue_id) WHERE q.name = %s', (QUEUE,))}
                missing = producer.missing(have, count)
                rows.append((kind, gap, missing - lost_before))
                lost_before = missing
                cluster.wait_rejoined()
        producer.stopping.set()
        producer.join(10)
        rate = len(producer.acknowledged) / max(1e-9, producer.acknowledged[-1][0] - producer.acknowledged[0][0])
    finally:
        cluster.stop()
        cluster.remove()
    return rows, rate


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--bindir', required=True)
    parser.add_argument('--rounds', type=int, default=3)
    args = parser.parse_args()
    version = os.path.basename(os.path.dirname(args.bindir.rstrip('/')))
    print('### Failover under Patroni')
    print()
    print(f'`bash bench/failover.sh {args.rounds}`: PostgreSQL {version}, Patroni, etcd and HAProxy from '
          f'Debian, three nodes on loopback, {os.cpu_count()} cores, {time.strftime("%Y-%m-%d")}, '
          f'{platform.release()}. One producer puts through HAProxy as fast as one connection goes; '
          'each round kills the leader (kill -9 of its postmaster and its Patroni) and then switches over. '
          'Unavailable: the longest time between two acknowledged puts around the event. Lost: puts '
          'acknowledged by the old leader that the new leader does not have.')
    print()
    print('| setup | event | rounds | unavailable s, median (min–max) | lost | puts/s between events |')
    print('|---|---|---|---|---|---|')
    for label, timings, synchronous in (
            ("Patroni's defaults, synchronous", 'default', True),
            ('tuned for fast failover, synchronous', 'fast', True),
            ('tuned for fast failover, asynchronous', 'fast', False)):
        work = tempfile.mkdtemp(prefix='queue-failover.')
        try:
            rows, rate = run_setup(work, args.bindir, timings, synchronous, args.rounds)
        except (RuntimeError, OSError, psycopg.Error) as error:
            print(f'| {label} | the cluster failed: {error} | | | | |', flush=True)
            continue
        finally:
            time.sleep(5)   # the ports of this cluster's processes, free for the next
        for kind in ('kill -9 of the leader', 'switchover'):
            times = [t for k, t, _ in rows if k == kind and t is not None]
            lost = [n for k, _, n in rows if k == kind]
            missing = sum(1 for k, t, _ in rows if k == kind and t is None)
            spread = (f'{statistics.median(times):.1f} ({min(times):.1f}–{max(times):.1f})'
                      if times else 'none')
            print(f'| {label} | {kind} | {len(lost)}{f" ({missing} never back)" if missing else ""} '
                  f'| {spread} | {sum(lost)} ({", ".join(map(str, lost))}) | {rate:.0f} |', flush=True)
    print()


if __name__ == '__main__':
    main()
