#!/usr/bin/env python3
"""Chaos test of the queue extension.

Starts a throwaway PostgreSQL (durable: fsync and synchronous_commit on)
with the extension preloaded, runs producers and consumers as separate
client processes (psycopg2) for a while, and injects faults every few
seconds:

  terminate   pg_terminate_backend of a consumer's backend
  sigkill     SIGKILL of a consumer process that holds messages (between get
              and delete); a new consumer takes its place
  sigstop     SIGSTOP of a consumer that holds messages until its lease has
              run out, then SIGCONT: it deletes with its stale receipt
  kill9       kill -9 of a client's backend: the server restarts after a crash
  restart     an immediate restart of the server (pg_ctl restart -m immediate)

Every operation is logged (started, then ok, failed or unknown: the
connection broke, so it may or may not have committed).  At the end the
queue and its poison queue are drained and a checker counts what must never
happen (before the drain, amcheck checks every index of the messages table
against the rows it holds); each count is printed as a TAP line ("ok N - lost: 0") and the run
fails if any is not 0.  It also reports puts, deliveries, redeliveries,
poisoned and expired messages, and the faults by kind.

Runs as an unprivileged user (initdb refuses root):
  python3 test/chaos/chaos.py --bindir /usr/lib/postgresql/15/bin --seconds 600
"""
import argparse
import glob
import json
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import psycopg2

QUEUE = 'chaos'
POISON = 'chaos-poison'
MAX_DEQUEUE = 5
EPSILON = 0.01          # seconds of slack between client and server clocks


# ---------------------------------------------------------------- server

class Server:
    def __init__(self, bindir, workdir):
        self.bindir = bindir
        self.data = os.path.join(workdir, 'data')
        self.socket = workdir
        self.port = 5400 + os.getpid() % 500

    def pg(self, *args, check=True):
        return subprocess.run([os.path.join(self.bindir, args[0])] + list(args[1:]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=check)

    def init(self):
        self.pg('initdb', '-D', self.data, '-A', 'trust', '-U', 'postgres')
        with open(os.path.join(self.data, 'postgresql.conf'), 'a') as conf:
            conf.write(f"""
shared_preload_libraries = 'queue'
listen_addresses = ''
unix_socket_directories = '{self.socket}'
port = {self.port}
fsync = on
synchronous_commit = on
restart_after_crash = on
queue.maintenance_interval = 500ms
log_min_messages = warning
""")
        self.start()

    def start(self):
        self.pg('pg_ctl', '-D', self.data, '-l', os.path.join(self.socket, 'server.log'),
                '-w', '-t', '60', 'start')

    def restart_immediate(self):
        self.pg('pg_ctl', '-D', self.data, '-m', 'immediate', '-w', 'stop', check=False)
        self.start()

    def stop(self):
        self.pg('pg_ctl', '-D', self.data, '-m', 'fast', '-w', 'stop', check=False)

    def connect(self, name, retry_until=None):
        """A connection in autocommit mode; retries while the server restarts."""
        while True:
            try:
                conn = psycopg2.connect(host=self.socket, port=self.port, dbname='postgres',
                                        user='postgres', application_name=name, connect_timeout=5)
                conn.autocommit = True
                return conn
            except psycopg2.OperationalError:
                if retry_until is not None and time.time() > retry_until:
                    raise
                time.sleep(0.2)


# ---------------------------------------------------------------- clients

GET_SQL = ("SELECT message_id, pop_receipt, dequeue_count, body,"
           " extract(epoch FROM visible_at), extract(epoch FROM expires_at)"
           " FROM queue_get(%s, %s, make_interval(secs => %s))")


def outcome(error):
    """ok / failed (the server refused: nothing committed) / unknown."""
    if error is None:
        return 'ok', None
    if getattr(error, 'pgcode', None):
        return 'failed', error.pgcode
    return 'unknown', None


def messages_of(rows):
    """The messages of a get, as the log keeps them."""
    return [{'id': mid, 'receipt': receipt, 'count': count, 'token': body,
             'visible_at': float(visible_at),
             'expires_at': float(expires_at) if expires_at is not None else None}
            for mid, receipt, count, body, visible_at, expires_at in rows or []]


class Client:
    """A client process's connection and its log of operations."""

    def __init__(self, server, logdir, name):
        self.server = server
        self.name = name
        self.conn = None
        self.log = open(os.path.join(logdir, f'{name}-{os.getpid()}.jsonl'), 'a', buffering=1)

    def run(self, record, sql, args, parse=None):
        """Logs record as started, runs sql, lets parse(record, rows) add
        what came back, and logs the outcome.  Reconnects after a broken
        connection."""
        record['t0'] = time.time()
        record['status'] = 'started'
        self.log.write(json.dumps(record) + '\n')
        rows, error = None, None
        try:
            if self.conn is None or self.conn.closed:
                self.conn = self.server.connect(self.name)
            cur = self.conn.cursor()
            cur.execute(sql, args)
            rows = cur.fetchall()
            if parse:
                parse(record, rows)
        except psycopg2.Error as e:
            error = e
            if getattr(e, 'pgcode', None) is None:
                self.conn = None
        record['t1'] = time.time()
        record['status'], record['sqlstate'] = outcome(error)
        self.log.write(json.dumps(record) + '\n')


def put_result(record, rows):
    mid, visible_at, expires_at = rows[0]
    record.update(id=mid, visible_at=float(visible_at),
                  expires_at=float(expires_at) if expires_at is not None else None)


def get_result(record, rows):
    record['messages'] = messages_of(rows)


def release_result(record, rows):
    record.update(new_receipt=rows[0][0], visible_at=float(rows[0][1]))


def producer(server, logdir, number, stop, pace):
    """Puts messages; one in ten delayed by up to 3 s, one in ten with a
    ttl of 5 to 15 s."""
    random.seed(os.getpid())
    client = Client(server, logdir, f'chaos-producer-{number}')
    seq = 0
    while not stop.is_set():
        seq += 1
        token = f'p{number}-{os.getpid()}-{seq}'
        delay = random.uniform(0.2, 3) if random.random() < 0.1 else 0
        ttl = random.uniform(5, 15) if random.random() < 0.1 else None
        client.run({'op': 'put', 'token': token},
                   "SELECT message_id, extract(epoch FROM visible_at), extract(epoch FROM expires_at)"
                   " FROM queue_put(%s, %s, make_interval(secs => %s),"
                   " CASE WHEN %s::float8 IS NULL THEN NULL ELSE make_interval(secs => %s) END)",
                   (QUEUE, token, delay, ttl, ttl), put_result)
        time.sleep(random.uniform(0, pace))


def consumer(server, logdir, number, stop, holding, lease_end):
    """Gets up to 5 messages with a lease of 1 to 5 s; mostly deletes them,
    sometimes releases them or lets the lease run out.  One message in 50
    always fails (a poison pill): it ends in the poison queue."""
    random.seed(os.getpid())
    client = Client(server, logdir, f'chaos-consumer-{number}')
    while not stop.is_set():
        vt = random.uniform(1, 5)
        record = {'op': 'get', 'queue': QUEUE, 'vt': vt, 'messages': []}
        client.run(record, GET_SQL, (QUEUE, 5, vt), get_result)
        messages = record['messages']
        if not messages:
            time.sleep(0.05)
            continue

        holding.value = 1
        lease_end.value = min(m['visible_at'] for m in messages)
        if random.random() < 0.03:
            time.sleep(vt + 0.3)                 # too slow: the leases run out
        for m in messages:
            if stop.is_set():
                break
            pill = int(m['token'].rsplit('-', 1)[1]) % 50 == 7
            roll = random.random()
            time.sleep(random.uniform(0, 0.01))
            ack = {'id': m['id'], 'receipt': m['receipt']}
            if pill or 0.85 <= roll < 0.93:
                ack['op'] = 'release'
                client.run(ack, "SELECT pop_receipt, extract(epoch FROM visible_at)"
                           " FROM queue_update(%s, %s, %s, '0')", (QUEUE, m['id'], m['receipt']),
                           release_result)
            elif roll < 0.93:
                ack['op'] = 'delete'
                client.run(ack, "SELECT queue_delete(%s, %s, %s)", (QUEUE, m['id'], m['receipt']))
            # else: failed silently, no ack: the lease runs out
        holding.value = 0


def indexes_checked(server):
    """amcheck over every index of the messages table, what the heap holds
    included (heapallindexed): the names of the indexes it passed, or the
    error it raised."""
    conn = server.connect('chaos-amcheck', retry_until=time.time() + 60)
    conn.autocommit = True
    cur = conn.cursor()
    try:
        cur.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        cur.execute("SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid,"
                    " LATERAL bt_index_check(c.oid, true)"
                    " WHERE i.indrelid = 'queue_storage.messages'::regclass ORDER BY 1")
        return True, [name for (name,) in cur.fetchall()]
    except psycopg2.Error as e:
        return False, str(e).strip()
    finally:
        conn.close()


def drain(server, logdir):
    """Gets and deletes everything left in the queue and its poison queue."""
    client = Client(server, logdir, 'chaos-drain')
    conn = server.connect('chaos-drain-count', retry_until=time.time() + 60)
    cur = conn.cursor()
    deadline = time.time() + 300
    while time.time() < deadline:
        cur.execute("SELECT count(*) FROM queue_storage.messages m JOIN queue_storage.queues q"
                    " USING (queue_id) WHERE q.name IN (%s, %s)"
                    " AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())", (QUEUE, POISON))
        if cur.fetchone()[0] == 0:
            return True
        for queue in (QUEUE, POISON):
            record = {'op': 'get', 'queue': queue, 'vt': 60, 'messages': []}
            client.run(record, GET_SQL, (queue, 100, 60), get_result)
            for m in record['messages']:
                client.run({'op': 'delete', 'id': m['id'], 'receipt': m['receipt']},
                           "SELECT queue_delete(%s, %s, %s)", (queue, m['id'], m['receipt']))
        time.sleep(0.5)
    return False


# ---------------------------------------------------------------- faults

FAULTS = ['terminate', 'sigkill', 'sigstop', 'kill9', 'restart']


def inject(kind, server, consumers, spawn):
    """Injects one fault; returns False if there was nothing to hit."""
    if kind in ('terminate', 'kill9'):
        conn = server.connect('chaos-injector', retry_until=time.time() + 60)
        cur = conn.cursor()
        pattern = 'chaos-consumer-%' if kind == 'terminate' else 'chaos-%'
        cur.execute("SELECT pid FROM pg_stat_activity WHERE application_name LIKE %s"
                    " AND application_name NOT LIKE 'chaos-injector%%'", (pattern,))
        pids = [r[0] for r in cur.fetchall()]
        if not pids:
            conn.close()
            return False
        pid = random.choice(pids)
        if kind == 'terminate':
            cur.execute("SELECT pg_terminate_backend(%s)", (pid,))
            conn.close()
        else:
            conn.close()
            os.kill(pid, signal.SIGKILL)
        return True
    if kind == 'restart':
        server.restart_immediate()
        return True

    # sigkill and sigstop hit a consumer that holds messages
    deadline = time.time() + 3
    while time.time() < deadline:
        held = [i for i, c in enumerate(consumers) if c['holding'].value == 1 and c['process'].is_alive()]
        if held:
            i = random.choice(held)
            process = consumers[i]['process']
            if kind == 'sigkill':
                os.kill(process.pid, signal.SIGKILL)
                process.join()
                consumers[i] = spawn(i)
            else:
                os.kill(process.pid, signal.SIGSTOP)
                wait = max(0, consumers[i]['lease_end'].value - time.time()) + 0.5
                time.sleep(min(wait, 6))
                os.kill(process.pid, signal.SIGCONT)
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------- checker

def check(logdir, end_time):
    records = []
    for path in glob.glob(os.path.join(logdir, '*.jsonl')):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        records.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass    # the last line of a client killed while writing

    # Every operation is logged when it starts and again with its outcome;
    # one that only started (its client was killed) is unknown.
    finished = {(r['op'], r.get('token'), r.get('id'), r.get('receipt'), r['t0'])
                for r in records if r.get('status') != 'started'}
    for r in records:
        if r.get('status') == 'started' and \
                (r['op'], r.get('token'), r.get('id'), r.get('receipt'), r['t0']) not in finished:
            r['status'] = 'unknown'
    records = [r for r in records if r.get('status') != 'started']

    puts = {}                    # token -> put record
    for r in records:
        if r['op'] == 'put' and r['status'] != 'failed':
            puts[r['token']] = r
    deliveries = {}              # message id -> list of deliveries
    token_of = {}
    for r in records:
        if r['op'] == 'get' and r['status'] == 'ok':
            for m in r['messages']:
                d = dict(m, t0=r['t0'], t1=r['t1'], vt=r['vt'], queue=r['queue'])
                deliveries.setdefault(m['id'], []).append(d)
                token_of[m['id']] = m['token']
    acks = {}                    # message id -> list of deletes and releases
    for r in records:
        if r['op'] in ('delete', 'release'):
            acks.setdefault(r['id'], []).append(r)

    counts = {name: 0 for name in (
        'lost', 'unexpected', 'duplicated within a lease', 'stale receipt succeeded',
        'acknowledged twice', 'handed out after its delete', 'handed out before its delay',
        'handed out after its ttl', 'live and poisoned at once')}
    examples = {}

    def flag(name, detail):
        counts[name] += 1
        examples.setdefault(name, detail)

    delivered_tokens = set(token_of.values())
    for token, put in puts.items():
        if put['status'] != 'ok' or token in delivered_tokens:
            continue
        expires = put.get('expires_at')
        if expires is None or expires > end_time:
            flag('lost', token)
    for mid, token in token_of.items():
        if token not in puts:
            flag('unexpected', token)

    for mid, ds in deliveries.items():
        ds.sort(key=lambda d: d['t1'])
        put = puts.get(token_of[mid], {})
        oks = [a for a in acks.get(mid, []) if a['op'] == 'delete' and a['status'] == 'ok']
        if len(oks) > 1:
            flag('acknowledged twice', mid)
        for d in ds:
            if oks and d['t0'] > min(a['t1'] for a in oks) + EPSILON:
                flag('handed out after its delete', mid)
            if put.get('visible_at') and d['t1'] < put['visible_at'] - EPSILON:
                flag('handed out before its delay', mid)
            if put.get('expires_at') and d['queue'] == QUEUE and d['t0'] > put['expires_at'] + EPSILON:
                flag('handed out after its ttl', mid)
            if d['queue'] == QUEUE and d['count'] > MAX_DEQUEUE:
                flag('live and poisoned at once', mid)
        first_poison = min((d['t1'] for d in ds if d['queue'] == POISON), default=None)
        if first_poison is not None and any(d['queue'] == QUEUE and d['t0'] > first_poison for d in ds):
            flag('live and poisoned at once', mid)

        for earlier, later in zip(ds, ds[1:]):
            # when the earlier lease ended: its end, or a release by its holder
            end = earlier['visible_at']
            for a in acks.get(mid, []):
                if a['op'] == 'release' and a['receipt'] == earlier['receipt'] and a['status'] != 'failed':
                    end = min(end, a.get('visible_at', a['t0']) if a['status'] == 'ok' else a['t0'])
            clamped = later['expires_at'] is not None and abs(later['visible_at'] - later['expires_at']) < 1e-6
            claimed = later['t1'] if clamped else later['visible_at'] - later['vt']
            if claimed < end - EPSILON:
                flag('duplicated within a lease', (mid, earlier['receipt'], later['receipt']))
            # an ack with the earlier receipt after the later claim committed
            for a in acks.get(mid, []):
                if a['receipt'] == earlier['receipt'] and a['status'] == 'ok' and a['t0'] > later['t1'] + EPSILON:
                    flag('stale receipt succeeded', (mid, a['op']))

    stats = {
        'puts acknowledged': sum(1 for p in puts.values() if p['status'] == 'ok'),
        'puts unknown': sum(1 for p in puts.values() if p['status'] == 'unknown'),
        'deliveries': sum(len(ds) for ds in deliveries.values()),
        'redeliveries': sum(1 for ds in deliveries.values() for d in ds if d['count'] > 1),
        'poisoned': len({mid for mid, ds in deliveries.items() if any(d['queue'] == POISON for d in ds)}),
        'stale acks refused': sum(1 for r in records if r['op'] in ('delete', 'release')
                                  and r.get('sqlstate') in ('QU404', 'QU409')),
    }
    return counts, examples, stats


# ---------------------------------------------------------------- self-test

def self_test():
    """The checker finds each anomaly in a log made to hold it, and nothing
    in a clean one.  Returns TAP lines (name, passed)."""
    def put(token, mid, t, visible=None, expires=None):
        return {'op': 'put', 'token': token, 'id': mid, 't0': t, 't1': t + 0.001, 'status': 'ok',
                'visible_at': visible if visible is not None else t, 'expires_at': expires}

    def get(mid, token, t, receipt, count=1, vt=2.0, queue=QUEUE, expires=None):
        return {'op': 'get', 'queue': queue, 'vt': vt, 't0': t, 't1': t + 0.001, 'status': 'ok',
                'messages': [{'id': mid, 'receipt': receipt, 'count': count, 'token': token,
                              'visible_at': t + vt, 'expires_at': expires}]}

    def ack(mid, t, receipt, status='ok', op='delete'):
        return {'op': op, 'id': mid, 'receipt': receipt, 't0': t, 't1': t + 0.001, 'status': status}

    clean = [put('a', 1, 100), get(1, 'a', 101, 'r1'), ack(1, 101.5, 'r1')]
    cases = {
        'lost': [put('a', 1, 100)],
        'unexpected': [get(9, 'z', 101, 'r1')],
        'duplicated within a lease': [put('a', 1, 100), get(1, 'a', 101, 'r1'), get(1, 'a', 102, 'r2', 2)],
        'stale receipt succeeded': [put('a', 1, 100), get(1, 'a', 101, 'r1'), get(1, 'a', 104, 'r2', 2),
                                    ack(1, 105, 'r1')],
        'acknowledged twice': [put('a', 1, 100), get(1, 'a', 101, 'r1'), ack(1, 102, 'r1'), ack(1, 102.5, 'r1')],
        'handed out after its delete': [put('a', 1, 100), get(1, 'a', 101, 'r1'), ack(1, 101.5, 'r1'),
                                        get(1, 'a', 104, 'r2', 2)],
        'handed out before its delay': [put('a', 1, 100, visible=110), get(1, 'a', 101, 'r1')],
        'handed out after its ttl': [put('a', 1, 100, expires=105), get(1, 'a', 106, 'r1', expires=105)],
        'live and poisoned at once': [put('a', 1, 100), get(1, 'a', 101, 'r1', count=6)],
    }
    results = []
    with tempfile.TemporaryDirectory() as d:
        def run(records):
            for f in glob.glob(os.path.join(d, '*.jsonl')):
                os.unlink(f)
            with open(os.path.join(d, 'x.jsonl'), 'w') as f:
                for r in records:
                    f.write(json.dumps(r) + '\n')
            return check(d, 1000)[0]
        counts = run(clean)
        results.append(('self-test: a clean log shows no anomaly', sum(counts.values()) == 0))
        for name, records in cases.items():
            counts = run(records)
            results.append((f'self-test: the checker finds "{name}"',
                            counts[name] > 0 and sum(counts.values()) == counts[name]))
    return results


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--bindir', default='/usr/lib/postgresql/15/bin')
    parser.add_argument('--seconds', type=float, default=30)
    parser.add_argument('--producers', type=int, default=2)
    parser.add_argument('--consumers', type=int, default=3)
    parser.add_argument('--fault-every', type=float, default=2)
    parser.add_argument('--pace', type=float, default=0.05,
                        help='a producer sleeps up to this many seconds between puts')
    parser.add_argument('--workdir', default=None)
    args = parser.parse_args()

    workdir = args.workdir or tempfile.mkdtemp(prefix='queue-chaos-')
    os.makedirs(workdir, exist_ok=True)
    logdir = os.path.join(workdir, 'ops')
    os.makedirs(logdir, exist_ok=True)
    server = Server(args.bindir, workdir)
    server.init()
    conn = server.connect('chaos-setup')
    conn.cursor().execute("CREATE EXTENSION queue;"
                          " SELECT queue_create(%s, max_dequeue_count => %s)", (QUEUE, MAX_DEQUEUE))
    conn.close()

    stop = multiprocessing.Event()
    producers = [multiprocessing.Process(target=producer, args=(server, logdir, i, stop, args.pace))
                 for i in range(args.producers)]

    def spawn(i):
        holding = multiprocessing.Value('i', 0)
        lease_end = multiprocessing.Value('d', 0.0)
        p = multiprocessing.Process(target=consumer, args=(server, logdir, i, stop, holding, lease_end))
        p.start()
        return {'process': p, 'holding': holding, 'lease_end': lease_end}

    for p in producers:
        p.start()
    consumers = [spawn(i) for i in range(args.consumers)]

    faults = {kind: 0 for kind in FAULTS}
    start = time.time()
    plan = []
    while time.time() - start < args.seconds:
        time.sleep(random.uniform(0.5, 1.5) * args.fault_every)
        if time.time() - start >= args.seconds:
            break
        if not plan:
            plan = random.sample(FAULTS, len(FAULTS))
        kind = plan.pop()
        if inject(kind, server, consumers, spawn):
            faults[kind] += 1
        else:
            plan.append(kind)            # nothing to hit now: try it again next

    stop.set()
    for c in consumers:
        os.kill(c['process'].pid, signal.SIGCONT)
    for p in producers + [c['process'] for c in consumers]:
        p.join(30)
        if p.is_alive():
            p.kill()
    checked, indexes = indexes_checked(server)
    drained = drain(server, logdir)
    end_time = time.time()
    conn = server.connect('chaos-report')
    cur = conn.cursor()
    cur.execute("SELECT coalesce(sum(expired), 0), coalesce(sum(poisoned), 0) FROM queue_stats()")
    expired, poisoned_counter = cur.fetchone()
    conn.close()
    server.stop()

    counts, examples, stats = check(logdir, end_time)
    tests = [(f'amcheck passes every index of the messages table: {indexes}',
              checked and len(indexes) >= 5), ('drained', drained)] + [(f'{name}: {n}', n == 0) for name, n in counts.items()]
    tests.append((f'every kind of fault was injected: {faults}', all(n > 0 for n in faults.values())))
    tests += self_test()
    print(f'1..{len(tests)}')
    for i, (name, passed) in enumerate(tests, 1):
        print(f"{'ok' if passed else 'not ok'} {i} - {name}")
    for name, example in examples.items():
        print(f'# {name}, for example: {example}')
    print(f"# measured: chaos {args.seconds:.0f} s, {args.producers} producers, {args.consumers} consumers:"
          f" {stats['puts acknowledged']} puts acknowledged ({stats['puts unknown']} unknown),"
          f" {stats['deliveries']} deliveries, {stats['redeliveries']} redeliveries,"
          f" {stats['poisoned']} poisoned (counter {poisoned_counter}), {expired} expired,"
          f" {stats['stale acks refused']} stale acks refused (QU404 or QU409);"
          f" faults: {', '.join(f'{k} {v}' for k, v in faults.items())};"
          f" anomalies: {sum(counts.values())}")
    sys.exit(0 if all(passed for _, passed in tests) else 1)


if __name__ == '__main__':
    main()
