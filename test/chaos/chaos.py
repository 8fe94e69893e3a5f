#!/usr/bin/env python3
"""Chaos test of the queue extension.

Starts a throwaway primary and a streaming standby (durable: fsync and
synchronous_commit on, synchronous_standby_names naming the standby, so an
acknowledged commit is on both) with the extension preloaded on both, runs
producers and consumers as separate client processes (psycopg2) for a
while, and injects faults every few seconds:

  terminate   pg_terminate_backend of a consumer's backend
  sigkill     SIGKILL of a consumer process that holds messages (between get
              and delete); a new consumer takes its place
  sigstop     SIGSTOP of a consumer that holds messages until its lease has
              run out, then SIGCONT: it deletes with its stale receipt
  kill9       kill -9 of a client's backend: the primary restarts after a crash
  restart     an immediate restart of the primary (pg_ctl restart -m immediate)
  failover    the primary stopped (by turns -m immediate, a failover, and -m
              fast, a switchover) and the standby promoted; the old primary
              is made the new standby (pg_basebackup) and in sync again before
              the next fault.  The first fault is always one.

Clients connect to whichever node is the primary (both ports,
target_session_attrs=read-write).  Every operation is logged (started, then
ok, failed or unknown: the connection broke, so it may or may not have
committed).  At the end amcheck checks every index of the messages table
against the rows it holds, on both nodes; the queue and its poison queue are
drained (big gets, batch deletes, for as long as the count left goes down),
and a checker counts what must never happen; each count is printed as a TAP
line ("ok N - lost: 0") and the run fails if any is not 0.  An acknowledged
put never delivered is lost only if it is not in the queue at the end: one
still there is the drain's failure, counted on its own line.  The counters
of queue_stats may lose what was counted since the last sweep (a crash, a
failover) but must never exceed what the clients may have done.  It also
reports puts, deliveries, redeliveries, poisoned and expired messages, the
faults by kind, and the most frequent warnings and errors of the server logs.

Runs as an unprivileged user (initdb refuses root):
  python3 test/chaos/chaos.py --bindir /usr/lib/postgresql/15/bin --seconds 600
"""
import argparse
import glob
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import psycopg2

QUEUE = 'chaos'
POISON = 'chaos-poison'
MAX_DEQUEUE = 5
GROUPS = 8              # message groups the producers put into
EPSILON = 0.01          # seconds of slack between client and server clocks


# ---------------------------------------------------------------- servers

class Server:
    """A primary and a streaming standby with synchronous replication: a
    commit is acknowledged only once the standby has flushed it.  Both
    nodes share one socket directory; node i listens on port + i.  Clients
    connect with both ports and target_session_attrs=read-write, so they
    reach whichever node is the primary now.  Each node's own settings (port,
    primary_conninfo) live in node.conf in its data directory, which the
    common postgresql.conf includes; synchronous_standby_names is set on the
    primary with ALTER SYSTEM."""

    def __init__(self, bindir, workdir):
        self.bindir = bindir
        self.workdir = workdir
        self.socket = workdir
        port = 5400 + os.getpid() % 500 * 2
        self.nodes = [{'name': f'node{i}', 'port': port + i, 'data': None, 'generation': 0}
                      for i in range(2)]
        self.primary = 0            # index of the primary in nodes; the other is the standby
        self.failovers = {'immediate': 0, 'fast': 0}     # by pg_ctl stop mode
        self.failover_seconds = []  # from the stop until the new pair is in sync
        self.harness_log = os.path.join(workdir, 'harness.log')

    @property
    def standby(self):
        return 1 - self.primary

    def pg(self, *args, check=True):
        with open(self.harness_log, 'a') as log:
            log.write(f'{time.strftime("%H:%M:%S")} {" ".join(args)}\n')
            log.flush()
            return subprocess.run([os.path.join(self.bindir, args[0])] + list(args[1:]),
                                  stdout=log, stderr=log, check=check)

    def new_data_dir(self, node):
        node['generation'] += 1
        node['data'] = os.path.join(self.workdir, f"{node['name']}.{node['generation']}")

    def write_node_conf(self, node, primary=None):
        with open(os.path.join(node['data'], 'node.conf'), 'w') as conf:
            conf.write(f"port = {node['port']}\ncluster_name = '{node['name']}'\n")
            if primary is not None:
                conf.write(f"primary_conninfo = 'host={self.socket} port={primary['port']}"
                           f" user=postgres application_name={node['name']}'\n")

    def init(self):
        node = self.nodes[self.primary]
        self.new_data_dir(node)
        self.pg('initdb', '-D', node['data'], '-A', 'trust', '-U', 'postgres')
        with open(os.path.join(node['data'], 'postgresql.conf'), 'a') as conf:
            conf.write(f"""
shared_preload_libraries = 'queue'
listen_addresses = ''
unix_socket_directories = '{self.socket}'
fsync = on
synchronous_commit = on
restart_after_crash = on
queue.maintenance_interval = 500ms
log_min_messages = warning
wal_level = replica
hot_standby = on
wal_keep_size = '1GB'
wal_retrieve_retry_interval = '200ms'
include 'node.conf'
""")
        self.write_node_conf(node)
        self.start(node)

    def start(self, node):
        self.pg('pg_ctl', '-D', node['data'], '-l', os.path.join(self.workdir, f"server-{node['name']}.log"),
                '-w', '-t', '120', 'start')

    def build_standby(self):
        """Makes the standby node a fresh copy of the primary (pg_basebackup
        into a new data directory), starts it streaming, names it in the
        primary's synchronous_standby_names, and waits until it is in sync."""
        primary, node = self.nodes[self.primary], self.nodes[self.standby]
        old = node['data']
        self.new_data_dir(node)
        self.pg('pg_basebackup', '-D', node['data'], '-h', self.socket, '-p', str(primary['port']),
                '-U', 'postgres', '-c', 'fast', '-X', 'stream')
        if old:
            shutil.rmtree(old, ignore_errors=True)
        # The copy has the primary's synchronous_standby_names: without it,
        # once promoted, it commits without waiting for a standby it does not
        # have yet.  The harness never stops a primary that has no standby in
        # sync, so the commits made meanwhile are safe.
        auto_conf = os.path.join(node['data'], 'postgresql.auto.conf')
        if os.path.exists(auto_conf):
            os.unlink(auto_conf)
        open(os.path.join(node['data'], 'standby.signal'), 'w').close()
        self.write_node_conf(node, primary)
        self.start(node)
        conn = self.connect('chaos-harness', retry_until=time.time() + 60)
        cur = conn.cursor()
        cur.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{node['name']}'")
        cur.execute("SELECT pg_reload_conf()")
        conn.close()
        self.wait_in_sync()

    def wait_in_sync(self, timeout=120):
        """Waits until the standby streams as the synchronous standby and has
        flushed everything the primary had written when the wait began."""
        deadline = time.time() + timeout
        conn = self.connect('chaos-harness', retry_until=deadline)
        cur = conn.cursor()
        cur.execute("SELECT pg_current_wal_lsn()")
        lsn = cur.fetchone()[0]
        try:
            while True:
                cur.execute("SELECT count(*) FROM pg_stat_replication WHERE application_name = %s"
                            " AND state = 'streaming' AND sync_state = 'sync' AND flush_lsn >= %s::pg_lsn",
                            (self.nodes[self.standby]['name'], lsn))
                if cur.fetchone()[0] == 1:
                    return
                if time.time() > deadline:
                    raise RuntimeError('the standby did not get in sync')
                time.sleep(0.05)
        finally:
            conn.close()

    def failover(self, mode):
        """Stops the primary (mode immediate: a failover; fast: a switchover),
        promotes the standby, and makes the old primary the new standby."""
        self.wait_in_sync()
        started = time.time()
        old = self.nodes[self.primary]
        self.pg('pg_ctl', '-D', old['data'], '-m', mode, '-w', 'stop')
        self.pg('pg_ctl', '-D', self.nodes[self.standby]['data'], '-w', '-t', '120', 'promote')
        self.primary = self.standby
        self.build_standby()
        self.failovers[mode] += 1
        self.failover_seconds.append(time.time() - started)

    def restart_immediate(self):
        node = self.nodes[self.primary]
        self.pg('pg_ctl', '-D', node['data'], '-m', 'immediate', '-w', 'stop', check=False)
        self.start(node)

    def stop(self):
        # the primary first: without its standby, a commit under way would
        # wait for it (and the queue worker's sweep does not give up that
        # wait on a fast shutdown)
        for node in (self.nodes[self.primary], self.nodes[self.standby]):
            if node['data']:
                self.pg('pg_ctl', '-D', node['data'], '-m', 'fast', '-w', 'stop', check=False)

    def connect(self, name, retry_until=None, standby=False):
        """A connection in autocommit mode to the primary (or the standby);
        retries while no node is the primary (a restart, a promotion)."""
        if standby:
            ports, attrs = str(self.nodes[self.standby]['port']), 'any'
        else:
            ports, attrs = ','.join(str(n['port']) for n in self.nodes), 'read-write'
        hosts = ','.join([self.socket] * len(ports.split(',')))
        while True:
            try:
                conn = psycopg2.connect(host=hosts, port=ports, target_session_attrs=attrs,
                                        dbname='postgres', user='postgres',
                                        application_name=name, connect_timeout=5)
                conn.autocommit = True
                return conn
            except psycopg2.OperationalError:
                if retry_until is not None and time.time() > retry_until:
                    raise
                time.sleep(0.2)

    def log_summary(self, top=12):
        """The most frequent WARNING, ERROR, FATAL and PANIC messages of both
        nodes' logs, numbers masked: (count, message) pairs."""
        counts = {}
        for path in glob.glob(os.path.join(self.workdir, 'server-*.log')):
            with open(path, errors='replace') as f:
                for line in f:
                    match = re.search(r'\b(WARNING|ERROR|FATAL|PANIC):\s+(.*)', line)
                    if match:
                        text = re.sub(r'\d+', 'N', f'{match.group(1)}: {match.group(2)}')[:160]
                        counts[text] = counts.get(text, 0) + 1
        return sorted(((n, text) for text, n in counts.items()), reverse=True)[:top]


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
    # a message waiting for its group's turn: visible_at infinity, no delay
    visible_at = float(visible_at)
    record.update(id=mid, visible_at=visible_at if visible_at != float('inf') else None,
                  expires_at=float(expires_at) if expires_at is not None else None)


def get_result(record, rows):
    record['messages'] = messages_of(rows)


def release_result(record, rows):
    record.update(new_receipt=rows[0][0], visible_at=float(rows[0][1]))


PUT_SQL = ("SELECT message_id, extract(epoch FROM visible_at), extract(epoch FROM expires_at)"
           " FROM queue_put(%s, %s, make_interval(secs => %s),"
           " CASE WHEN %s::float8 IS NULL THEN NULL ELSE make_interval(secs => %s) END,"
           " NULL, %s, %s)")


def producer(server, logdir, number, stop, pace):
    """Puts messages; one in ten delayed by up to 3 s, one in ten with a
    ttl of 5 to 15 s.  One in three is of one of GROUPS groups (never
    delayed: a group's messages cannot be), one in three carries a
    deduplication_id; such a put is repeated, as a producer retries, when
    its outcome is unknown and one time in five anyway."""
    random.seed(os.getpid())
    client = Client(server, logdir, f'chaos-producer-{number}')
    seq = 0
    while not stop.is_set():
        seq += 1
        token = f'p{number}-{os.getpid()}-{seq}'
        group = f'g{random.randrange(GROUPS)}' if random.random() < 1 / 3 else None
        dedup = token if random.random() < 1 / 3 else None
        delay = random.uniform(0.2, 3) if random.random() < 0.1 and group is None else 0
        ttl = random.uniform(5, 15) if random.random() < 0.1 else None
        for attempt in range(3):
            record = {'op': 'put', 'token': token, 'ttl': ttl, 'group': group, 'dedup': dedup}
            client.run(record, PUT_SQL, (QUEUE, token, delay, ttl, ttl, group, dedup), put_result)
            if dedup is None or not (record['status'] == 'unknown' or random.random() < 0.2):
                break
        time.sleep(random.uniform(0, pace))


def consumer(server, logdir, number, stop, holding, lease_end):
    """Gets up to 5 messages with a lease of 1 to 5 s; mostly deletes them,
    sometimes releases them or lets the lease run out.  One message in 50
    always fails (a poison pill): it ends in the poison queue."""
    random.seed(os.getpid())
    client = Client(server, logdir, f'chaos-consumer-{number}')
    while not stop.is_set():
        vt = random.uniform(1, 5)
        record = {'op': 'get', 'queue': QUEUE, 'vt': vt, 'max': 5, 'messages': []}
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


def indexes_checked(server, standby=False):
    """amcheck over every index of the messages table, what the heap holds
    included (heapallindexed), on the primary or the standby: the names of
    the indexes it passed, or the error it raised."""
    conn = server.connect('chaos-amcheck', retry_until=time.time() + 60, standby=standby)
    cur = conn.cursor()
    try:
        if not standby:
            cur.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        cur.execute("SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid,"
                    " LATERAL bt_index_check(c.oid, true)"
                    " WHERE i.indrelid = 'queue_storage.messages'::regclass ORDER BY 1")
        return True, [name for (name,) in cur.fetchall()]
    except psycopg2.Error as e:
        return False, str(e).strip()
    finally:
        conn.close()


def batch_result(record, rows):
    statuses = dict(rows)
    record['statuses'] = [statuses.get(mid) for mid in record['ids']]


def left_in_queues(cur):
    """The tokens (bodies) of the messages still in the queue and its poison
    queue, but for the expired ones the sweep has not deleted yet."""
    cur.execute("SELECT m.body FROM queue_storage.messages m JOIN queue_storage.queues q"
                " USING (queue_id) WHERE q.name IN (%s, %s)"
                " AND (m.expires_at IS NULL OR m.expires_at > clock_timestamp())", (QUEUE, POISON))
    return [body for (body,) in cur.fetchall()]


def drain(server, logdir, batch=1000, patience=120):
    """Gets and deletes everything left in the queue and its poison queue,
    a batch at a time and without pausing while gets find messages; when
    they find none, what is left is leased (up to 5 s, or 60 s by a drain
    get whose delete was lost) or delayed (up to 3 s): it waits a little.
    Gives up only when the count left has not gone down for patience
    seconds.  Returns True when nothing is left."""
    client = Client(server, logdir, 'chaos-drain')
    conn = server.connect('chaos-drain-count', retry_until=time.time() + 60)
    cur = conn.cursor()
    fewest, progress_at = None, time.time()
    try:
        while True:
            left = len(left_in_queues(cur))
            if left == 0:
                return True
            if fewest is None or left < fewest:
                fewest, progress_at = left, time.time()
            elif time.time() - progress_at > patience:
                return False
            got = 0
            for queue in (QUEUE, POISON):
                record = {'op': 'get', 'queue': queue, 'vt': 60, 'max': batch, 'messages': []}
                client.run(record, GET_SQL, (queue, batch, 60), get_result)
                if record['messages']:
                    got += len(record['messages'])
                    ids = [m['id'] for m in record['messages']]
                    receipts = [m['receipt'] for m in record['messages']]
                    client.run({'op': 'delete_batch', 'queue': queue, 'ids': ids, 'receipts': receipts},
                               "SELECT message_id, status FROM queue_delete_batch(%s, %s, %s::uuid[])",
                               (queue, ids, receipts), batch_result)
            if got == 0:
                time.sleep(0.2)
    finally:
        conn.close()


# ---------------------------------------------------------------- faults

FAULTS = ['terminate', 'sigkill', 'sigstop', 'kill9', 'restart', 'failover']


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
    if kind == 'failover':
        # a failover (the primary dies) and a switchover (it shuts down
        # cleanly, its standby has all of its WAL) by turns
        server.failover('immediate' if sum(server.failovers.values()) % 2 == 0 else 'fast')
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

def check(logdir, end_time, left=()):
    """Reads the clients' logs; left holds the tokens of the messages still
    in the queue or its poison queue at the end (not drained, not lost).
    Returns the anomaly counts, an example of each, and figures."""
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
    # one that only started (its client was killed) is unknown.  (A put's
    # id is known only when it is done: it is no part of the key.)
    finished = {(r['op'], r.get('token'), r.get('receipt'), r['t0'])
                for r in records if r.get('status') != 'started'}
    for r in records:
        if r.get('status') == 'started' and \
                (r['op'], r.get('token'), r.get('receipt'), r['t0']) not in finished:
            r['status'] = 'unknown'
    records = [r for r in records if r.get('status') != 'started']

    puts = {}                    # token -> put record (an ok one if any)
    stored = {}                  # token -> message ids its ok puts returned
    for r in records:
        if r['op'] == 'put' and r['status'] != 'failed':
            if puts.get(r['token'], {}).get('status') != 'ok':
                puts[r['token']] = r
            if r['status'] == 'ok':
                stored.setdefault(r['token'], set()).add(r['id'])
    deliveries = {}              # message id -> list of deliveries
    token_of = {}
    for r in records:
        if r['op'] == 'get' and r['status'] == 'ok':
            for m in r['messages']:
                d = dict(m, t0=r['t0'], t1=r['t1'], vt=r['vt'], queue=r['queue'])
                deliveries.setdefault(m['id'], []).append(d)
                token_of[m['id']] = m['token']
    # A batch delete (the drain's) acknowledges each of its entries: those
    # it reports deleted, or all of them when its outcome is unknown.
    for r in [r for r in records if r['op'] == 'delete_batch']:
        statuses = r.get('statuses') or [None] * len(r['ids'])
        for mid, receipt, status in zip(r['ids'], r['receipts'], statuses):
            records.append({'op': 'delete', 'id': mid, 'receipt': receipt, 't0': r['t0'], 't1': r['t1'],
                            'status': r['status'] if r['status'] != 'ok' else
                            'ok' if status == 'deleted' else 'failed'})
    acks = {}                    # message id -> list of deletes and releases
    for r in records:
        if r['op'] in ('delete', 'release'):
            acks.setdefault(r['id'], []).append(r)

    counts = {name: 0 for name in (
        'lost', 'unexpected', 'duplicated within a lease', 'stale receipt succeeded',
        'acknowledged twice', 'handed out after its delete', 'handed out before its delay',
        'handed out after its ttl', 'live and poisoned at once',
        'two messages of one group in flight at once', 'a deduplicated put stored twice')}
    examples = {}

    def flag(name, detail):
        counts[name] += 1
        examples.setdefault(name, detail)

    delivered_tokens = set(token_of.values())
    left = set(left)
    not_drained = 0
    for token, put in puts.items():
        if put['status'] != 'ok' or token in delivered_tokens:
            continue
        expires = put.get('expires_at')
        if token in left:
            not_drained += 1     # still there: the drain's line fails, not this one
        elif expires is None or expires > end_time:
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

    # A put repeated with its deduplication_id stores one message: every
    # put of the token returned it, and no other message carries the token.
    ids_of_token = {}
    for mid, token in token_of.items():
        ids_of_token.setdefault(token, set()).add(mid)
    for token, put in puts.items():
        if put.get('dedup') is not None and \
                len(ids_of_token.get(token, set()) | stored.get(token, set())) > 1:
            flag('a deduplicated put stored twice', token)

    # Two messages of one group never in flight at once: a delivery of a
    # message of a group (in the queue) must be claimed after every other
    # message of the group handed out by another get was done with (its
    # lease ended, or it was deleted or released).  One get may take
    # several messages of a group.
    group_of = {token: put.get('group') for token, put in puts.items()}
    by_group = {}
    for mid, ds in deliveries.items():
        group = group_of.get(token_of[mid])
        if group is not None:
            for d in ds:
                if d['queue'] == QUEUE:
                    by_group.setdefault(group, []).append((mid, d))
    for group, held in by_group.items():
        spans = []
        for mid, d in held:
            end = d['visible_at']
            for a in acks.get(mid, []):
                if a['receipt'] == d['receipt'] and a['status'] != 'failed':
                    end = min(end, a['t0'])
            clamped = d['expires_at'] is not None and abs(d['visible_at'] - d['expires_at']) < 1e-6
            claimed = d['t1'] if clamped else d['visible_at'] - d['vt']
            spans.append((claimed, end, mid, d['t0']))
        spans.sort()
        for i, (claimed, end, mid, get_t0) in enumerate(spans):
            for later, _, other, other_t0 in spans[i + 1:]:
                if later >= end - EPSILON:
                    break
                if other != mid and other_t0 != get_t0:
                    flag('two messages of one group in flight at once', (group, mid, other))

    stats = {
        'puts acknowledged': sum(1 for p in puts.values() if p['status'] == 'ok'),
        'puts unknown': sum(1 for p in puts.values() if p['status'] == 'unknown'),
        'deliveries': sum(len(ds) for ds in deliveries.values()),
        'redeliveries': sum(1 for ds in deliveries.values() for d in ds if d['count'] > 1),
        'poisoned': len({mid for mid, ds in deliveries.items() if any(d['queue'] == POISON for d in ds)}),
        'stale acks refused': sum(1 for r in records if r['op'] in ('delete', 'release')
                                  and r.get('sqlstate') in ('QU404', 'QU409')),
        'not drained': not_drained,
        'grouped puts': sum(1 for p in puts.values() if p.get('group') is not None),
        'repeated puts': sum(1 for r in records if r['op'] == 'put' and r.get('dedup') is not None)
        - sum(1 for p in puts.values() if p.get('dedup') is not None),
    }
    # The most each counter of queue_stats may show (the counts of operations
    # that may have committed: ok or unknown): a crash or failover may lose
    # the counts made since the last sweep, but none may be counted twice.
    may = [r for r in records if r['status'] != 'failed']
    stats['counter bounds'] = {
        'puts': sum(1 for r in may if r['op'] == 'put'),
        'gets': sum(len(r['messages']) if r['status'] == 'ok' else r.get('max', 5)
                    for r in may if r['op'] == 'get'),
        'deletes': sum(1 for r in may if r['op'] == 'delete'),
        'expired': sum(1 for r in may if r['op'] == 'put' and r.get('ttl') is not None),
    }
    return counts, examples, stats


# ---------------------------------------------------------------- self-test

def self_test():
    """The checker finds each anomaly in a log made to hold it, and nothing
    in a clean one.  Returns TAP lines (name, passed)."""
    def put(token, mid, t, visible=None, expires=None, group=None, dedup=None):
        return {'op': 'put', 'token': token, 'id': mid, 't0': t, 't1': t + 0.001, 'status': 'ok',
                'visible_at': visible if visible is not None else t, 'expires_at': expires,
                'group': group, 'dedup': dedup}

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
        'two messages of one group in flight at once': [
            put('a', 1, 100, group='g'), put('b', 2, 100.1, group='g'),
            get(1, 'a', 101, 'r1'), get(2, 'b', 101.5, 'r2'), ack(1, 102, 'r1'), ack(2, 102, 'r2')],
        'a deduplicated put stored twice': [
            put('a', 1, 100, dedup='a'), put('a', 2, 100.5, dedup='a'),
            get(1, 'a', 101, 'r1'), ack(1, 101.5, 'r1'), get(2, 'a', 102, 'r2'), ack(2, 102.5, 'r2')],
    }
    batch_delete = {'op': 'delete_batch', 'queue': QUEUE, 'ids': [1], 'receipts': ['r1'],
                    'statuses': ['deleted'], 't0': 101.5, 't1': 101.501, 'status': 'ok'}
    results = []
    with tempfile.TemporaryDirectory() as d:
        def run(records, left=()):
            for f in glob.glob(os.path.join(d, '*.jsonl')):
                os.unlink(f)
            with open(os.path.join(d, 'x.jsonl'), 'w') as f:
                for r in records:
                    f.write(json.dumps(r) + '\n')
            return check(d, 1000, left)[0]
        counts = run(clean)
        results.append(('self-test: a clean log shows no anomaly', sum(counts.values()) == 0))
        counts = run([put('a', 1, 100, group='g', dedup='a'), put('a', 1, 100.2, group='g', dedup='a'),
                      put('b', 2, 100.1, group='g'), get(1, 'a', 101, 'r1'), ack(1, 101.5, 'r1'),
                      get(2, 'b', 101.6, 'r2'), ack(2, 102, 'r2')])
        results.append(('self-test: a group handed out in turn, a repeated put stored once: no anomaly',
                        sum(counts.values()) == 0))
        for name, records in cases.items():
            counts = run(records)
            results.append((f'self-test: the checker finds "{name}"',
                            counts[name] > 0 and sum(counts.values()) == counts[name]))
        counts = run([put('a', 1, 100)], left={'a'})
        results.append(('self-test: a message still in the queue is not lost', sum(counts.values()) == 0))
        counts = run([put('a', 1, 100), get(1, 'a', 101, 'r1'), batch_delete, get(1, 'a', 104, 'r2', 2)])
        results.append(('self-test: a batch delete acknowledges its entries',
                        counts['handed out after its delete'] == 1 and sum(counts.values()) == 1))
    return results


# ---------------------------------------------------------------- main

def inject_faults(args, server, consumers, spawn, faults):
    """Injects a fault every fault_every seconds (give or take half) until
    the time is up: every kind once in a random order, then again."""
    start = time.time()
    plan = []
    while time.time() - start < args.seconds:
        time.sleep(random.uniform(0.5, 1.5) * args.fault_every)
        if time.time() - start >= args.seconds:
            break
        if not plan:
            plan = random.sample(FAULTS, len(FAULTS))
            if not any(faults.values()):
                # the first fault is a failover: it takes a few seconds, and
                # a short run must still see every kind
                plan.remove('failover')
                plan.append('failover')
        kind = plan.pop()
        if inject(kind, server, consumers, spawn):
            faults[kind] += 1
        else:
            plan.append(kind)            # nothing to hit now: try it again next


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
    try:
        server.init()
        conn = server.connect('chaos-setup', retry_until=time.time() + 60)
        conn.cursor().execute("CREATE EXTENSION queue;"
                              " SELECT queue_create(%s, max_dequeue_count => %s)", (QUEUE, MAX_DEQUEUE))
        conn.close()
        server.build_standby()
    except BaseException:
        server.stop()
        raise

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
    try:
        inject_faults(args, server, consumers, spawn, faults)
    except BaseException:
        # else the clients and the servers would run on
        stop.set()
        for p in producers + [c['process'] for c in consumers]:
            p.kill()
        server.stop()
        raise
    stop.set()
    for c in consumers:
        os.kill(c['process'].pid, signal.SIGCONT)
    for p in producers + [c['process'] for c in consumers]:
        p.join(30)
        if p.is_alive():
            p.kill()
    try:
        server.wait_in_sync()
        checked, indexes = indexes_checked(server)
        checked_standby, standby_indexes = indexes_checked(server, standby=True)
        drain_started = time.time()
        drained = drain(server, logdir)
        drain_seconds = time.time() - drain_started
        conn = server.connect('chaos-report')
        cur = conn.cursor()
        # what is left and not expired is not lost; end_time after it, so
        # that what expired meanwhile is not lost either
        left = left_in_queues(cur)
        end_time = time.time()
        cur.execute("SELECT coalesce(sum(puts) FILTER (WHERE queue = %s), 0), coalesce(sum(gets), 0),"
                    " coalesce(sum(deletes), 0), coalesce(sum(expired), 0), coalesce(sum(poisoned), 0)"
                    " FROM queue_stats() WHERE queue IN (%s, %s)", (QUEUE, QUEUE, POISON))
        counters = dict(zip(('puts', 'gets', 'deletes', 'expired', 'poisoned'), cur.fetchone()))
        conn.close()
    finally:
        server.stop()

    counts, examples, stats = check(logdir, end_time, left)
    bounds = stats['counter bounds']
    tests = [(f'amcheck passes every index of the messages table on the primary: {indexes}',
              checked and len(indexes) >= 5),
             (f'amcheck passes every index of the messages table on the standby: {standby_indexes}',
              checked_standby and len(standby_indexes) >= 5),
             (f'drained: {len(left)} messages left in the queue and its poison queue'
              f' ({stats["not drained"]} acknowledged puts never delivered among them)',
              drained and not left)]
    tests += [(f'{name}: {n}', n == 0) for name, n in counts.items()]
    tests.append(('counters of queue_stats within what may have committed: ' +
                  ', '.join(f'{k} {counters[k]} <= {bounds[k]}' for k in bounds),
                  all(counters[k] <= bounds[k] for k in bounds)))
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
          f" {stats['poisoned']} poisoned (counter {counters['poisoned']}), {counters['expired']} expired,"
          f" {stats['stale acks refused']} stale acks refused (QU404 or QU409);"
          f" {stats['grouped puts']} puts into {GROUPS} groups, {stats['repeated puts']} repeated puts"
          f" with a deduplication_id;"
          f" faults: {', '.join(f'{k} {v}' for k, v in faults.items())}"
          f" ({server.failovers['immediate']} failovers, {server.failovers['fast']} switchovers,"
          f" {max(server.failover_seconds, default=0):.1f} s the longest until in sync again);"
          f" drain {drain_seconds:.0f} s; anomalies: {sum(counts.values())}")
    for n, text in server.log_summary():
        print(f'# server logs: {n} x {text}')
    sys.exit(0 if all(passed for _, passed in tests) else 1)


if __name__ == '__main__':
    main()
