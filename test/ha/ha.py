#!/usr/bin/env python3
"""High availability under Patroni: the queue extension in a three-node
Patroni cluster (test/ha/cluster.py: etcd, synchronous mode, HAProxy in
front), with clients running through a planned switchover, a kill -9 of
the leader's postmaster, a leader frozen with SIGSTOP until another node
leads, and a stop and start of the whole cluster.

Traffic, each in a process of its own:
  sql        puts with plain SQL (psycopg) through HAProxy
  client     puts with the Python client, on a connection string listing
             the three nodes (target_session_attrs=read-write)
  py         the Python Worker, on the multi-host string
  node       the Node Worker, on the multi-host string
  sqs        boto3 through the SQS gateway (gateway/), whose database is
             the multi-host string: a sender, and a receiver that deletes
and a schedule due every minute.  Before each event a message is leased
for ten minutes; after it, it is deleted with its receipt on the new
leader.  Every put is logged as ok (acknowledged), failed (refused by the
server: not stored) or unknown (the connection broke: it may have been);
every delivery with its time, lease end and dequeue count.

Checked, each as a TAP line: no acknowledged put lost; no message handed
out while another consumer's lease on it ran; receipts valid on the new
leader; queue_stats' counters never going back; one schedule message per
due time; a background worker on the leader only.  Prints what each event
cost ("# measured: ..."): the longest time without an acknowledged put
through HAProxy around it.

Runs as an unprivileged user, with the Node client and the gateway
installed (npm):
  python3 test/ha/ha.py --bindir /usr/lib/postgresql/15/bin --node-client clients/node --gateway gateway
"""
import argparse
import glob
import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'clients', 'python'))

from cluster import Cluster  # noqa: E402
from pgqueue import Client, Worker  # noqa: E402

QUEUE = 'ha'
HELD = 'held'
TICKS = 'ticks'
LEASE = 10              # seconds: the workers' visibility timeout
EPSILON = 0.05          # seconds of slack between two processes' clocks
PACE = 0.02             # seconds between two puts of a producer

tests = 0
failures = 0


def tap(ok, what):
    global tests, failures
    tests += 1
    if not ok:
        failures += 1
    print(f'{"ok" if ok else "not ok"} {tests} - {what}', flush=True)
    return ok


def diag(text):
    for line in str(text).splitlines():
        print(f'# {line}', flush=True)


# ---- traffic ------------------------------------------------------------------

def outcome(error):
    """failed when the server refused the call (nothing stored), unknown
    when the connection broke (it may have committed)."""
    state = getattr(error, 'sqlstate', None)
    if state is None or state.startswith('08') or state in ('57P01', '57P02', '57P03'):
        return 'unknown'
    return 'failed'


def produce(kind, dsn, log_path):
    """Puts numbered bodies until SIGTERM, logging each outcome."""
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    client = Client(dsn) if kind == 'client' else None
    conn = None
    n = 0
    with open(log_path, 'a', encoding='utf-8') as log:
        while not stopping:
            body = f'{kind}-{n + 1}'
            if kind == 'sql' and conn is None:
                try:
                    conn = psycopg.connect(dsn, autocommit=True, connect_timeout=2)
                except psycopg.Error:
                    time.sleep(0.1)
                    continue
            n += 1
            try:
                if kind == 'sql':
                    conn.execute('SELECT queue_put(%s, %s)', (QUEUE, body))
                else:
                    client.put(QUEUE, body)
                result = 'ok'
            except psycopg.Error as error:
                result = outcome(error)
                if kind == 'sql':
                    conn.close()
                    conn = None
                time.sleep(0.1)
            log.write(json.dumps({'body': body, 'result': result, 'at': time.time()}) + '\n')
            log.flush()
            time.sleep(PACE)


def consume_py(dsn, log_path):
    log = open(log_path, 'a', encoding='utf-8')

    def handler(message):
        log.write(json.dumps({
            'id': message.message_id, 'body': message.body, 'at': time.time(),
            'visible_at': message.visible_at.timestamp(),
            'dequeue_count': message.dequeue_count, 'by': 'py'}) + '\n')
        log.flush()

    worker = Worker(Client(dsn), QUEUE, handler, visibility_timeout=LEASE, max_polling_interval=2)
    signal.signal(signal.SIGTERM, lambda *_: worker.stop(10))
    worker.run()


SQS_KEY = ('AKIDHATEST', 'ha-test-secret-key')


def sqs_client(endpoint):
    import boto3
    from botocore.config import Config
    return boto3.client('sqs', endpoint_url=endpoint, region_name='us-east-1',
                        aws_access_key_id=SQS_KEY[0], aws_secret_access_key=SQS_KEY[1],
                        config=Config(retries={'max_attempts': 1}, connect_timeout=2, read_timeout=30))


def sqs_send(endpoint, log_path):
    """Sends numbered bodies until SIGTERM: ok on a 200, failed on an
    error answer of the gateway before the database (none expected),
    unknown when the answer was a 5xx or none."""
    from botocore.exceptions import BotoCoreError, ClientError
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    sqs = sqs_client(endpoint)
    url = f'{endpoint}/000000000000/{QUEUE}'
    n = 0
    with open(log_path, 'a', encoding='utf-8') as log:
        while not stopping:
            n += 1
            body = f'sqs-{n}'
            try:
                sqs.send_message(QueueUrl=url, MessageBody=body)
                result = 'ok'
            except (BotoCoreError, ClientError):
                result = 'unknown'
                time.sleep(0.1)
            log.write(json.dumps({'body': body, 'result': result, 'at': time.time()}) + '\n')
            log.flush()
            time.sleep(PACE * 5)


def sqs_receive(endpoint, log_path):
    """Receives (long polls of 2 s, up to 10) and deletes until SIGTERM,
    logging each delivery as the Workers do."""
    from botocore.exceptions import BotoCoreError, ClientError
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    sqs = sqs_client(endpoint)
    url = f'{endpoint}/000000000000/{QUEUE}'
    with open(log_path, 'a', encoding='utf-8') as log:
        while not stopping:
            try:
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2,
                                          VisibilityTimeout=LEASE,
                                          AttributeNames=['ApproximateReceiveCount'])
            except (BotoCoreError, ClientError):
                time.sleep(0.5)
                continue
            now = time.time()
            for m in got.get('Messages', []):
                log.write(json.dumps({
                    'id': m['MessageId'], 'body': m['Body'], 'at': now,
                    # the lease began before the answer came: at most this
                    'visible_at': now + LEASE - 0.5,
                    'dequeue_count': int(m['Attributes']['ApproximateReceiveCount']), 'by': 'sqs'}) + '\n')
            log.flush()
            entries = [{'Id': str(i), 'ReceiptHandle': m['ReceiptHandle']}
                       for i, m in enumerate(got.get('Messages', []))]
            if entries:
                try:
                    sqs.delete_message_batch(QueueUrl=url, Entries=entries)
                except (BotoCoreError, ClientError):
                    pass    # they come back when their lease ends


NODE_CONSUMER = r"""
const fs = require('node:fs');
const { Client, Worker } = require(process.argv[2]);
const [, , , dsn, queue, logPath, lease] = process.argv;
const log = fs.openSync(logPath, 'a');
const client = new Client(dsn);
const worker = new Worker(client, queue, async (m) => {
  fs.writeSync(log, JSON.stringify({
    id: Number(m.messageId), body: m.body, at: Date.now() / 1000,
    visible_at: m.visibleAt.getTime() / 1000, dequeue_count: m.dequeueCount, by: 'node',
  }) + '\n');
}, { visibilityTimeout: Number(lease), maxPollingInterval: 2, logger: { warn() {} } });
process.on('SIGTERM', async () => { await worker.stop(10); await client.close(); process.exit(0); });
worker.start();
"""


class Traffic:
    """The producers and consumers, and the gateway the SQS ones go through."""

    def __init__(self, cluster, work, node_client, gateway):
        self.cluster = cluster
        self.work = work
        self.node_client = os.path.abspath(node_client)
        self.gateway_dir = os.path.abspath(gateway)
        self.endpoint = f'http://127.0.0.1:{cluster.haproxy_port + 30}'
        self.producers = []
        self.consumers = []
        self.children = []      # node processes: the Node Worker, the gateway

    def start(self):
        ctx = multiprocessing.get_context('spawn')
        self._start_gateway()
        for target, args, group in (
                (produce, ('sql', self.cluster.haproxy_dsn(), self.path('puts-sql')), self.producers),
                (produce, ('client', self.cluster.multi_host_dsn(), self.path('puts-client')), self.producers),
                (sqs_send, (self.endpoint, self.path('puts-sqs')), self.producers),
                (consume_py, (self.cluster.multi_host_dsn(), self.path('got-py')), self.consumers),
                (sqs_receive, (self.endpoint, self.path('got-sqs')), self.consumers)):
            p = ctx.Process(target=target, args=args)
            p.start()
            group.append(p)
        script = os.path.join(self.work, 'node_consumer.js')
        with open(script, 'w', encoding='utf-8') as f:
            f.write(NODE_CONSUMER)
        self.node = self._node([script, self.node_client, self.cluster.multi_host_dsn(),
                                QUEUE, self.path('got-node'), str(LEASE)], 'node-consumer.out')

    def _node(self, argv, out):
        process = subprocess.Popen(['node'] + argv, stdout=open(self.path(out), 'a'),
                                   stderr=subprocess.STDOUT)
        self.children.append(process)
        return process

    def _start_gateway(self):
        config = os.path.join(self.work, 'gateway.json')
        with open(config, 'w', encoding='utf-8') as f:
            json.dump({
                'database': self.cluster.multi_host_dsn(),
                'port': self.cluster.haproxy_port + 30,
                'receiptSecret': 'a secret of the high-availability test, 32+ chars',
                'credentials': [{'accessKeyId': SQS_KEY[0], 'secretAccessKey': SQS_KEY[1],
                                 'role': self.cluster.user}],
            }, f)
        self._node([os.path.join(self.gateway_dir, 'server.js'), '--config', config], 'gateway.out')
        deadline = time.time() + 30
        while 'listening' not in open(self.path('gateway.out'), encoding='utf-8').read():
            if time.time() > deadline:
                raise RuntimeError('the gateway did not start: see gateway.out.log')
            time.sleep(0.1)

    def path(self, name):
        return os.path.join(self.work, f'{name}.log')

    def _stop(self, processes):
        for p in processes:
            os.kill(p.pid, signal.SIGTERM)
        for p in processes:
            p.join(30)

    def stop_producers(self):
        self._stop(self.producers)

    def stop_consumers(self):
        self.node.send_signal(signal.SIGTERM)
        self._stop(self.consumers)
        self.node.wait(30)

    def kill(self):
        for p in self.producers + self.consumers:
            if p.is_alive():
                p.kill()
        for process in self.children:
            if process.poll() is None:
                process.kill()

    def _rows(self, prefix):
        """The JSON lines of every log named prefix-*."""
        rows = []
        for path in glob.glob(self.path(f'{prefix}-*')):
            with open(path, encoding='utf-8') as f:
                rows += [json.loads(line) for line in f if line.strip()]
        return rows

    def puts(self):
        return self._rows('puts')

    def deliveries(self):
        return self._rows('got')


class Sampler(threading.Thread):
    """queue_stats' counters through HAProxy, and the nodes with a worker."""

    def __init__(self, cluster):
        super().__init__(daemon=True)
        self.cluster = cluster
        self.counters = []      # (time, puts, gets, deletes)
        self.workers = []       # (time, {node: count})
        self.stopping = threading.Event()

    def run(self):
        conn = None
        while not self.stopping.is_set():
            try:
                if conn is None:
                    conn = psycopg.connect(self.cluster.haproxy_dsn(), autocommit=True, connect_timeout=2)
                [row] = conn.execute('SELECT puts, gets, deletes FROM queue_stats(%s)', (QUEUE,)).fetchall()
                self.counters.append((time.time(),) + tuple(row))
            except psycopg.Error:
                if conn is not None:
                    conn.close()
                conn = None
            self.workers.append((time.time(), self.cluster.workers_running()))
            self.stopping.wait(0.25)


# ---- the events -----------------------------------------------------------------

def hold(cluster):
    """A message of HELD leased for ten minutes, through HAProxy: (id, receipt)."""
    with psycopg.connect(cluster.haproxy_dsn(), autocommit=True) as conn:
        [row] = conn.execute("SELECT message_id, pop_receipt FROM queue_get(%s, 1, '10 minutes')",
                             (HELD,)).fetchall()
    return row


def delete_held(cluster, held):
    deadline = time.time() + 30
    while True:
        try:
            with psycopg.connect(cluster.haproxy_dsn(), autocommit=True, connect_timeout=2) as conn:
                conn.execute('SELECT queue_delete(%s, %s, %s)', (HELD,) + tuple(held))
                return None
        except psycopg.Error as error:
            # a lost connection, or 25006 from a leader being demoted (its
            # connection still open, the server now read-only): the delete
            # did not happen, and is tried again
            retry = isinstance(error, psycopg.OperationalError) or error.sqlstate == '25006'
            if not retry or time.time() > deadline:
                return f'{error.sqlstate}: {error}'
            time.sleep(0.2)


def longest_gap(puts, start, end):
    """The longest time between two acknowledged puts through HAProxy
    around [start, end]."""
    times = sorted(p['at'] for p in puts if p['result'] == 'ok' and p['body'].startswith('sql-')
                   and start - 5 <= p['at'] <= end + 10)
    return max((b - a for a, b in zip(times, times[1:])), default=None)


def setup(cluster):
    leader = cluster.leader()
    cluster.sql(leader, 'CREATE EXTENSION queue')
    cluster.sql(leader, f"SELECT queue_create('{QUEUE}', visibility_timeout => '{LEASE} s', "
                        'max_dequeue_count => NULL)')
    cluster.sql(leader, f"SELECT queue_create('{HELD}')")
    cluster.sql(leader, f"SELECT count(*) FROM queue_put_batch('{HELD}', array_fill('h'::text, ARRAY[8]))")
    cluster.sql(leader, f"SELECT queue_create('{TICKS}', max_dequeue_count => NULL)")
    cluster.sql(leader, f"SELECT queue_schedule('tick', '{TICKS}', '* * * * *', 'tick')")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--bindir', required=True)
    parser.add_argument('--node-client', required=True, help='the Node client package, installed')
    parser.add_argument('--gateway', required=True, help='the gateway, its dependencies installed')
    parser.add_argument('--base-port', type=int, default=25440)
    parser.add_argument('--keep', action='store_true', help='leave the work directory')
    parser.add_argument('--events', default='switchover,kill,freeze,restart',
                        help='which events, in order, of switchover, kill, freeze, restart')
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix='queue-ha.')
    # Counters written in each transaction: a failover then loses none of
    # them, and the check that they never go back holds by design, not by
    # the timing of the last sweep (docs/operations.md, "Counters")
    cluster = Cluster(os.path.join(work, 'cluster'), args.bindir, base_port=args.base_port,
                      settings={'queue.durable_counters': 'on'})
    traffic = Traffic(cluster, work, args.node_client, args.gateway)
    sampler = Sampler(cluster)
    events = []
    try:
        started = time.time()
        cluster.start()
        tap(True, f'a Patroni cluster of three nodes, synchronous, led by {cluster.leader()} '
                  f'({time.time() - started:.0f} s)')
        setup(cluster)
        traffic.start()
        sampler.start()
        time.sleep(5)

        chosen = {
            'switchover': ('switchover', cluster.switchover),
            'kill': ('kill -9 of the leader (its postmaster and its Patroni)', cluster.kill_leader),
            'freeze': ('the leader frozen (SIGSTOP)', cluster.freeze_leader),
            'restart': ('a restart of the whole cluster', cluster.restart_all),
        }
        for name, event in (chosen[key] for key in args.events.split(',')):
            held = hold(cluster)
            before = cluster.leader()
            start = time.time()
            event()
            end = time.time()
            after = cluster.leader()
            problem = delete_held(cluster, held)
            tap(problem is None, f'{name}: {before} -> {after}; the message leased before it '
                                 f'is deleted with its receipt after it' + ('' if problem is None else f' ({problem})'))
            events.append((name, start, end))
            cluster.wait_rejoined()
            time.sleep(5)

        traffic.stop_producers()
        # the consumers drain what is left: lost leases come back after LEASE
        left = None
        deadline = time.time() + 60
        while time.time() < deadline:
            [(left,)] = cluster.sql(cluster.leader(), 'SELECT total FROM queue_stats(%s)', (QUEUE,))
            if left == 0:
                break
            time.sleep(0.5)
        traffic.stop_consumers()
        sampler.stopping.set()
        sampler.join(10)
        check(cluster, traffic, sampler, events, left)
    finally:
        traffic.kill()
        cluster.stop()
        if args.keep or failures:
            print(f'# logs kept in {work}')
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f'1..{tests}')
    return 1 if failures else 0


def check(cluster, traffic, sampler, events, left):
    puts = traffic.puts()
    deliveries = traffic.deliveries()
    leader = cluster.leader()
    # (queue_peek shows at most 1,000; the storage shows every one)
    remaining = {row[0] for row in cluster.sql(
        leader, 'SELECT m.body FROM queue_storage.messages m JOIN queue_storage.queues q USING (queue_id) '
                'WHERE q.name = %s', (QUEUE,))}
    delivered = {d['body'] for d in deliveries}
    acknowledged = [p['body'] for p in puts if p['result'] == 'ok']
    lost = [b for b in acknowledged if b not in delivered and b not in remaining]
    tap(len(acknowledged) > 0 and not lost,
        f'no acknowledged put lost: {len(acknowledged)} acknowledged, '
        f'{sum(p["result"] == "unknown" for p in puts)} unknown, '
        f'{sum(p["result"] == "failed" for p in puts)} refused, {len(lost)} lost')
    if lost:
        diag(f'lost: {lost[:20]}')
    tap(left == 0, f'the consumers drained the queue ({left} left)')

    by_message = {}     # by body: each is put once, and the SQS ids are not the others'
    for d in deliveries:
        by_message.setdefault(d['body'], []).append(d)
    inside = []
    for mid, ds in by_message.items():
        ds.sort(key=lambda d: d['at'])
        for a, b in zip(ds, ds[1:]):
            if b['at'] < a['visible_at'] - EPSILON or b['dequeue_count'] <= a['dequeue_count']:
                inside.append((mid, a, b))
    redelivered = sum(len(ds) - 1 for ds in by_message.values())
    tap(not inside, f'no message handed out inside another lease on it: {len(deliveries)} deliveries, '
                    f'{redelivered} after a lease ran out, {len(inside)} inside one')
    for mid, a, b in inside[:5]:
        diag(f'message {mid}: {a} then {b}')
    by = {}
    for d in deliveries:
        by[d['by']] = by.get(d['by'], 0) + 1
    tap(all(by.get(k, 0) > 0 for k in ('py', 'node', 'sqs')),
        f'every consumer consumed: the Python Worker {by.get("py", 0)}, the Node Worker {by.get("node", 0)}, '
        f'SQS through the gateway {by.get("sqs", 0)}')
    sources = {}
    for p in puts:
        if p['result'] == 'ok':
            kind = p['body'].split('-')[0]
            sources[kind] = sources.get(kind, 0) + 1
    tap(all(sources.get(k, 0) > 0 for k in ('sql', 'client', 'sqs')),
        f'every producer put: SQL through HAProxy {sources.get("sql", 0)}, the Python client '
        f'{sources.get("client", 0)}, SQS through the gateway {sources.get("sqs", 0)}')

    backwards = [(a, b) for a, b in zip(sampler.counters, sampler.counters[1:])
                 if any(y < x for x, y in zip(a[1:], b[1:]))]
    tap(len(sampler.counters) > 10 and not backwards,
        f"queue_stats' counters never went back: {len(sampler.counters)} samples, {len(backwards)} back")
    for a, b in backwards[:5]:
        diag(f'(time, puts, gets, deletes) {a} then {b}')

    # A worker never runs on a standby.  Two primaries with a worker each
    # happen only while a frozen leader, thawed, waits for its Patroni to
    # demote it: its commits wait for the synchronous standby it no longer
    # has, so its worker changes nothing (the schedule check below sees
    # what a second worker would put).
    on_standby = [(t, w) for t, w in sampler.workers if any(r for r, _ in w.values())]
    tap(sampler.workers and not on_standby,
        f'no background worker on a standby: {len(sampler.workers)} samples, {len(on_standby)} with one')
    frozen = [(start, end + 15) for name, start, end in events if 'frozen' in name]
    two = [(t, w) for t, w in sampler.workers if len(w) > 1]
    unexplained = [(t, w) for t, w in two if not any(a <= t <= b for a, b in frozen)]
    tap(not unexplained, f'a worker on one primary at a time: {len(two)} samples with two, all while '
                         f'a thawed leader awaited its demotion' if not unexplained else
                         f'a worker on one primary at a time: {len(unexplained)} samples with two')
    for t, w in unexplained[:5]:
        diag(f'{t - events[0][1]:.1f} s after the first event: {w}')
    final = cluster.workers_running()
    tap(list(final) == [leader], f'at the end a worker runs on the leader {leader} only: {final}')

    # two due times at least: the run may not have spanned them yet
    deadline = time.time() + 75
    while (cluster.sql(leader, 'SELECT total FROM queue_stats(%s)', (TICKS,))[0][0] < 2
           and time.time() < deadline):
        time.sleep(1)
    diag(f'schedules: {cluster.sql(leader, "SELECT * FROM queue_schedules()")}')
    ticks = cluster.sql(leader, "SELECT (headers ->> 'scheduled_for')::timestamptz FROM queue_peek(%s, 1000)",
                        (TICKS,))
    due = sorted(row[0] for row in ticks)
    minutes = [round((b - a).total_seconds() / 60) for a, b in zip(due, due[1:])]
    tap(len(due) >= 2 and len(set(due)) == len(due) and all(m == 1 for m in minutes),
        f'the schedule put one message per due time: {len(due)} messages for {len(set(due))} due times, '
        f'a minute apart: {minutes}')

    for name, start, end in events:
        gap = longest_gap(puts, start, end)
        print(f'# measured: {name}: {end - start:.1f} s until a new leader answered; '
              f'the longest time without an acknowledged put through HAProxy: '
              f'{"none" if gap is None else f"{gap:.1f} s"}', flush=True)


if __name__ == '__main__':
    sys.exit(main())
