'use strict';
// One timed run of a side of a throughput benchmark (gateway_throughput,
// azure_throughput) and what it cost.  The CPU time is per message: of
// the driver (this process), of a side's server process (a gateway,
// Azurite) and of
// PostgreSQL (the postmaster, POSTMASTER_PID, and its children: backends,
// WAL writer and the others; a process that ends within a run leaves that
// run's share of it out), and the share of the machine's cores other
// processes kept busy meanwhile (the machine's busy time less those).
// Read from /proc, so Linux only.
const fs = require('node:fs');
const os = require('node:os');
const { performance } = require('node:perf_hooks');

// The CPU time (user and system, in ms) of process pid so far; 0 for a
// process that is gone.
const TICK_MS = 10;   // USER_HZ is 100 on Linux
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

// The CPU time in ms of PostgreSQL's processes so far, by process id: the
// postmaster (POSTMASTER_PID) and its children.
function serverCpu() {
  const postmaster = Number(process.env.POSTMASTER_PID);
  const pids = [postmaster];
  for (const task of fs.readdirSync(`/proc/${postmaster}/task`)) {
    pids.push(...fs.readFileSync(`/proc/${postmaster}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number));
  }
  return new Map(pids.map((pid) => [pid, cpuMs(pid)]));
}

// The busy CPU time in ms of the whole machine so far (/proc/stat: user,
// nice, system, irq and softirq of all cores).
function machineCpu() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) * TICK_MS;
}

// The CPU time in ms of the driver, the side's process, PostgreSQL and the
// whole machine so far.
function cpuNow(side) {
  const { user, system } = process.cpuUsage();
  return { driver: (user + system) / 1000, process: side.pid ? cpuMs(side.pid) : 0, server: serverCpu(), machine: machineCpu() };
}

// The CPU time in µs per message of each since before (cpuNow), and the
// share of the machine's cores other processes kept busy meanwhile, in %.
function cpuSince(before, side, messages, elapsed) {
  const now = cpuNow(side);
  let server = 0;
  for (const [pid, ms] of now.server) server += ms - (before.server.get(pid) || 0);
  const driver = now.driver - before.driver;
  const proc = now.process - before.process;
  const others = now.machine - before.machine - driver - proc - server;
  const per = (ms) => Math.round(ms * 1000 / messages);
  return { driver: per(driver), process: side.pid ? per(proc) : null, server: per(server),
    others: Math.max(0, Math.round(100 * others / (elapsed * 1000 * os.cpus().length))) };
}

/*
 * One run of side: clients loops of side.cycle(client, n), each adding the
 * messages it deleted, for seconds; n grows by batch a cycle.  Gives the
 * messages/s, and the CPU time per message of the driver, the side's
 * process (side.pid) and PostgreSQL.
 */
async function timedRun(side, { seconds, clients, batch }) {
  const before = cpuNow(side);
  const start = performance.now();
  const deadline = start + seconds * 1000;
  const counts = await Promise.all(Array.from({ length: clients }, async (_, i) => {
    let deleted = 0;
    let n = 0;
    while (performance.now() < deadline) {
      deleted += await side.cycle(i, n);
      n += batch;
    }
    return deleted;
  }));
  const elapsed = (performance.now() - start) / 1000;
  const messages = counts.reduce((a, b) => a + b, 0);
  return { rate: Math.round(messages / elapsed), cpu: cpuSince(before, side, messages, elapsed) };
}

// A body of bytes characters that names its client and number.
function body(client, n, bytes) {
  const head = `client ${client} message ${n} `;
  return head + 'x'.repeat(bytes - head.length);
}

/*
 * The side through the Node client directly: clients Client objects on
 * dsn (Client is the Node client's class), each cycle a putBatch of batch
 * bodies, a get of as many and a deleteBatch of what came, on queue (made
 * by another side).  Gives the messages deleted.
 */
function directSide({ Client, dsn, clients, queue, batch, bodyOf }) {
  const queues = Array.from({ length: clients }, () => new Client(dsn));
  return {
    name: 'direct',
    pid: null,
    async open() {},
    async clear() {
      await queues[0].clear(queue);
    },
    async cycle(i, n) {
      const client = queues[i];
      await client.putBatch(queue, Array.from({ length: batch }, (_, k) => bodyOf(i, n + k)));
      const messages = await client.get(queue, { maxMessages: batch });
      if (messages.length === 0) return 0;
      const results = await client.deleteBatch(messages);
      return results.filter((r) => r.status === 'deleted').length;
    },
    close() {
      return Promise.all(queues.map((q) => q.close()));
    },
  };
}

module.exports = { timedRun, body, directSide };
