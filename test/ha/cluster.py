"""A throwaway Patroni cluster on loopback, for the high-availability test
(test/ha/ha.py) and its benchmark (bench/failover.sh).

One etcd, three Patroni nodes of PostgreSQL with the queue extension
preloaded, in synchronous mode (or not), and HAProxy in front, sending
connections to the node whose Patroni REST API answers GET /primary with
200.  Everything runs as the calling user in one work directory, on ports
from a base port up (25440 unless told: below the ephemeral ports, 32768
up, that other suites' clients take side by side), and is stopped when the
cluster is.

The events of the test: a switchover (patronictl), a kill -9 of the
leader's postmaster, a leader frozen with SIGSTOP (the postmaster and its
children) until another node leads, and a stop and start of every node.
"""
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request

import psycopg
import yaml

# Patroni's defaults, and settings for a fast failover (the test's): Patroni
# asks loop_wait + 2 * retry_timeout <= ttl.
TIMINGS = {
    'default': {'ttl': 30, 'loop_wait': 10, 'retry_timeout': 10},
    'fast': {'ttl': 8, 'loop_wait': 1, 'retry_timeout': 3},
}


def _write(path, text):
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


class Cluster:
    def __init__(self, work, bindir, base_port=25440, nodes=3, timings='fast',
                 synchronous=True, settings=None):
        self.work = work
        self.bindir = bindir
        self.names = [f'node{i + 1}' for i in range(nodes)]
        self.haproxy_port = base_port
        self.pg_ports = {name: base_port + 1 + i for i, name in enumerate(self.names)}
        self.api_ports = {name: base_port + 11 + i for i, name in enumerate(self.names)}
        self.etcd_port = base_port + 21
        self.etcd_peer_port = base_port + 22
        self.haproxy_stats_port = base_port + 23
        self.timings = TIMINGS[timings]
        self.synchronous = synchronous
        self.settings = {
            'shared_preload_libraries': 'queue',
            'wal_log_hints': 'on',
            'queue.maintenance_interval': '200ms',
            **(settings or {}),
        }
        self.processes = {}     # name -> Popen: etcd, haproxy, patroni of each node
        self.user = os.environ.get('USER') or subprocess.run(
            ['id', '-un'], capture_output=True, text=True, check=True).stdout.strip()

    # ---- connection strings ----------------------------------------------

    def dsn(self, name, dbname='postgres'):
        """A node directly."""
        return f'postgresql://{self.user}@127.0.0.1:{self.pg_ports[name]}/{dbname}'

    def haproxy_dsn(self, dbname='postgres'):
        """The leader, through HAProxy."""
        return f'postgresql://{self.user}@127.0.0.1:{self.haproxy_port}/{dbname}'

    def multi_host_dsn(self, dbname='postgres'):
        """Every node, the one that takes writes chosen by the client."""
        hosts = ','.join(f'127.0.0.1:{port}' for port in self.pg_ports.values())
        return (f'postgresql://{self.user}@{hosts}/{dbname}'
                '?target_session_attrs=read-write&connect_timeout=2')

    # ---- starting and stopping -----------------------------------------------

    def _spawn(self, key, argv, log):
        out = open(os.path.join(self.work, log), 'ab')
        self.processes[key] = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                               start_new_session=True)

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        self._start_etcd()
        for name in self.names:
            self._write_patroni_config(name)
        # the first node bootstraps; the others clone it once it leads
        self.start_node(self.names[0])
        self.wait_for_leader(120)
        for name in self.names[1:]:
            self.start_node(name)
        self._start_haproxy()
        self.wait_until_replicating(len(self.names) - 1, 180)

    def _start_etcd(self):
        data = os.path.join(self.work, 'etcd')
        client = f'http://127.0.0.1:{self.etcd_port}'
        peer = f'http://127.0.0.1:{self.etcd_peer_port}'
        self._spawn('etcd', [
            'etcd', '--name', 'etcd', '--data-dir', data,
            '--listen-client-urls', client, '--advertise-client-urls', client,
            '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
            '--initial-cluster', f'etcd={peer}', '--initial-cluster-state', 'new',
            '--enable-v2=true', '--log-level', 'warn'], 'etcd.log')
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(f'{client}/health', timeout=1) as r:
                    if json.load(r).get('health') == 'true':
                        return
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError('etcd did not start: see etcd.log')
            time.sleep(0.2)

    def _write_patroni_config(self, name):
        home = os.path.join(self.work, name)
        os.makedirs(home, exist_ok=True)
        config = {
            'scope': 'queue-ha',
            'name': name,
            'restapi': {
                'listen': f'127.0.0.1:{self.api_ports[name]}',
                'connect_address': f'127.0.0.1:{self.api_ports[name]}',
            },
            # etcd's v2 API: Debian 12's Patroni (3.0.2) can keep reading a
            # stale cache over the v3 one and fail every update of the
            # synchronous standby key after a node's loss
            'etcd': {'hosts': f'127.0.0.1:{self.etcd_port}'},
            'bootstrap': {
                'dcs': {
                    **self.timings,
                    'maximum_lag_on_failover': 1048576,
                    'synchronous_mode': self.synchronous,
                    'postgresql': {
                        'use_pg_rewind': True,
                        'parameters': self.settings,
                    },
                },
                'initdb': ['data-checksums', {'encoding': 'UTF8'}],
                'pg_hba': [
                    'local all all trust',
                    'host all all 127.0.0.1/32 trust',
                    'host replication all 127.0.0.1/32 trust',
                ],
            },
            'postgresql': {
                'listen': f'127.0.0.1:{self.pg_ports[name]}',
                'connect_address': f'127.0.0.1:{self.pg_ports[name]}',
                'data_dir': os.path.join(home, 'data'),
                'bin_dir': self.bindir,
                'pgpass': os.path.join(home, 'pgpass'),
                'authentication': {
                    'superuser': {'username': self.user},
                    'replication': {'username': self.user},
                    'rewind': {'username': self.user},
                },
                'parameters': {'unix_socket_directories': home},
            },
        }
        # PyYAML: Patroni's own dependency, there wherever Patroni is
        _write(os.path.join(home, 'patroni.yml'), yaml.safe_dump(config, sort_keys=False))

    def start_node(self, name):
        self._spawn(name, ['patroni', os.path.join(self.work, name, 'patroni.yml')],
                    f'{name}/patroni.log')

    def _start_haproxy(self):
        servers = '\n'.join(
            f'    server {name} 127.0.0.1:{self.pg_ports[name]} maxconn 100 check port {self.api_ports[name]}'
            for name in self.names)
        _write(os.path.join(self.work, 'haproxy.cfg'), f"""global
    maxconn 300

defaults
    mode tcp
    timeout connect 2s
    timeout client 30m
    timeout server 30m
    timeout check 1s

listen stats
    mode http
    bind 127.0.0.1:{self.haproxy_stats_port}
    stats enable
    stats uri /

listen primary
    bind 127.0.0.1:{self.haproxy_port}
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
{servers}
""")
        # Debian installs it in /usr/sbin, outside an unprivileged PATH
        haproxy = shutil.which('haproxy', path=os.environ.get('PATH', '') + ':/usr/sbin:/sbin') or 'haproxy'
        self._spawn('haproxy', [haproxy, '-db', '-f', os.path.join(self.work, 'haproxy.cfg')],
                    'haproxy.log')

    def stop(self):
        # the nodes first (Patroni stops its PostgreSQL before it exits,
        # and needs etcd to do so cleanly), then HAProxy and etcd
        nodes = [self.processes.pop(name) for name in self.names if name in self.processes]
        for process in nodes:
            if process.poll() is None:
                process.terminate()
        for process in nodes:
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
        deadline = time.time() + 30
        for name in self.names:
            self._wait_postgres_gone(name, deadline)
        for key in list(self.processes):
            process = self.processes.pop(key)
            if process.poll() is None:
                process.terminate()
                process.wait(30)

    def _wait_postgres_gone(self, name, deadline):
        pid_file = os.path.join(self.work, name, 'data', 'postmaster.pid')
        while os.path.exists(pid_file) and time.time() < deadline:
            pid = self._postmaster_pid(name)
            if pid is None:
                return
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
        pid = self._postmaster_pid(name)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGCONT)
                os.kill(pid, signal.SIGQUIT)
            except ProcessLookupError:
                pass

    # ---- what the cluster looks like ---------------------------------------

    def api(self, name, path='/patroni'):
        """(status, JSON) of a node's REST API, or (None, None) if it does not answer."""
        try:
            with urllib.request.urlopen(f'http://127.0.0.1:{self.api_ports[name]}{path}', timeout=2) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as e:
            try:
                return e.code, json.load(e)
            except ValueError:
                return e.code, None
        except (OSError, ValueError):
            return None, None

    def members(self):
        """The cluster's members as the DCS has them: name -> (role, state)."""
        for name in self.names:
            status, body = self.api(name, '/cluster')
            if status == 200 and body:
                return {m['name']: (m['role'], m.get('state')) for m in body['members']}
        return {}

    def leader(self):
        for name, (role, state) in self.members().items():
            if role == 'leader' and state == 'running':
                return name
        return None

    def wait_for_leader(self, seconds, other_than=None):
        deadline = time.time() + seconds
        while time.time() < deadline:
            name = self.leader()
            if name is not None and name != other_than:
                status, _ = self.api(name, '/primary')
                if status == 200:
                    return name
            time.sleep(0.2)
        raise RuntimeError(f'no leader{" other than " + other_than if other_than else ""} '
                           f'after {seconds} s: {self.members()}')

    def wait_until_replicating(self, replicas, seconds):
        """Until `replicas` nodes stream from the leader (one of them
        synchronous, in synchronous mode), as the leader's
        pg_stat_replication has them: Patroni 3.0 reports a replica
        "running" as soon as its PostgreSQL accepts connections, before it
        streams (a new leader has no slot for it yet, and it tries again
        5 s later) and before a pg_rewind it still has to run."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            members = self.members()
            leader = self.leader()
            try:
                streaming = [n for (n,) in self.sql(
                    leader, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming'")
                    if n in self.names] if leader else []
            except psycopg.Error:
                streaming = []
            synchronous = [n for n, (role, _) in members.items() if role == 'sync_standby']
            if len(streaming) >= replicas and (not self.synchronous or synchronous):
                return
            time.sleep(0.5)
        raise RuntimeError(f'replicas not streaming after {seconds} s: {self.members()}')

    def _postmaster_pid(self, name):
        try:
            with open(os.path.join(self.work, name, 'data', 'postmaster.pid'), encoding='utf-8') as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def sql(self, name, statement, params=None):
        with psycopg.connect(self.dsn(name), autocommit=True, connect_timeout=3) as conn:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description is not None else []

    def workers_running(self):
        """Nodes that answer and have a queue background worker:
        name -> (in recovery, workers)."""
        found = {}
        for name in self.names:
            try:
                [(recovery, n)] = self.sql(name, "SELECT pg_is_in_recovery(), count(*) FROM pg_stat_activity "
                                                 "WHERE backend_type = 'queue worker'")
            except psycopg.Error:
                continue
            if n > 0:
                found[name] = (recovery, n)
        return found

    # ---- the events ------------------------------------------------------------

    def switchover(self):
        """A planned switchover to a synchronous standby; returns the new leader."""
        old = self.leader()
        config = os.path.join(self.work, old, 'patroni.yml')
        subprocess.run(['patronictl', '-c', config, 'switchover', '--force', '--leader', old],
                       check=True, capture_output=True, text=True)
        return self.wait_for_leader(120, other_than=old)

    def kill_leader(self):
        """kill -9 of the leader's postmaster and of its Patroni, as when its
        machine dies (Patroni alive would start the postmaster again in
        place, still the leader); once another node leads, the old one's
        Patroni is started again and rejoins as a replica.  Returns (old,
        new) leaders."""
        old = self.leader()
        patroni = self.processes.pop(old)
        patroni.kill()
        os.kill(self._postmaster_pid(old), signal.SIGKILL)
        patroni.wait(10)
        new = self.wait_for_leader(120, other_than=old)
        self.start_node(old)
        return old, new

    def freeze_leader(self):
        """SIGSTOP of the leader's postmaster and every process of it until
        another node leads, then SIGCONT: its Patroni demotes it.  Returns
        (old, new) leaders."""
        old = self.leader()
        pids = self._instance_pids(old)
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        try:
            new = self.wait_for_leader(120, other_than=old)
        finally:
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass
        return old, new

    def _instance_pids(self, name):
        """The postmaster of a node and its children (from /proc: no procps)."""
        postmaster = self._postmaster_pid(name)
        children = []
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open(f'/proc/{entry}/stat', encoding='utf-8') as f:
                    # pid (comm) state ppid ...: comm may hold spaces
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == postmaster:
                children.append(int(entry))
        return [postmaster] + children

    def restart_all(self):
        """Every node stopped (Patroni stops its PostgreSQL) and started again;
        returns the leader after."""
        stopping = [self.processes.pop(name) for name in self.names]
        for process in stopping:
            process.terminate()
        for process in stopping:
            process.wait(60)
        deadline = time.time() + 60
        for name in self.names:
            self._wait_postgres_gone(name, deadline)
        for name in self.names:
            self.start_node(name)
        leader = self.wait_for_leader(180)
        self.wait_until_replicating(len(self.names) - 1, 180)
        return leader

    def wait_rejoined(self, seconds=180):
        """Until every node is back as a streaming replica of the leader."""
        self.wait_until_replicating(len(self.names) - 1, seconds)

    def remove(self):
        shutil.rmtree(self.work, ignore_errors=True)
