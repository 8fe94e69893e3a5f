'use strict';
/*-------------------------------------------------------------------------
 *
 * celery.test.js
 *		A Celery worker on kombu's SQS transport, unchanged, against the
 *		gateway.
 *
 * Debian 12's Celery and kombu (python3-celery, python3-kombu; kombu's
 * worker receives through pycurl, python3-pycurl) with the app in
 * celery_tasks.py: broker sqs://KEY:SECRET@127.0.0.1:PORT, transport
 * options is_secure False and region us-east-1.  A throwaway PostgreSQL
 * and the gateway are started as in gateway.test.js (end_to_end.js).
 *
 * A prefork worker of two processes runs; a producer sends a third of the
 * tasks; once they have run and the queue is empty, the gateway is
 * killed (SIGKILL) and started again on the same port while the worker
 * keeps running, long polling; a new producer sends the second third.
 * Once those have run, PostgreSQL is restarted (fast) while the worker's
 * receive waits in the gateway, and a producer sends the last third.
 * Every task must have run exactly once, and the extension's counters
 * must show each message put, received and deleted once.  The worker is
 * then stopped with SIGTERM (warm shutdown) and must exit cleanly.
 *
 * The restarts come with the queue empty: a task whose acknowledgement
 * (its DeleteMessage) cannot reach the gateway runs again after the
 * visibility timeout, as on SQS, so exactly once holds only where every
 * acknowledgement gets through.  (A long poll the kill cuts off takes no
 * message sent after it: its transaction is never committed.  One the
 * restart of PostgreSQL cuts off waits on, and gets a message sent once
 * the server is back.)
 *
 *-------------------------------------------------------------------------
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { KEY, SECRET, run, startDatabase, startGateway, getSleeping, queueStats, describeQueue } = require('./end_to_end');

// Debian's interpreter, isolated (-I): a queue.so in the current folder
// would otherwise shadow Python's queue module.
const PYTHON = '/usr/bin/python3';
const APP = path.join(__dirname, 'celery_tasks.py');
const QUEUE = 'celery-tasks';
const TASKS = 60;
const WAIT_MS = 90000;
const POLL_MS = 200;

function celeryMissing() {
  const probe = spawnSync(PYTHON, ['-I', '-c', 'import celery, kombu.transport.SQS, boto3, pycurl'], { cwd: os.tmpdir(), encoding: 'utf8' });
  if (probe.status === 0) return false;
  return `Debian's Celery, kombu, boto3 or pycurl is missing (apt-get install -y python3-celery python3-boto3 python3-pycurl): ${probe.stderr.trim().split('\n').pop()}`;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Waits until check() gives a true value and returns it; after WAIT_MS
// fails with what was waited for and what describe() says of the state.
async function waitFor(what, check, describe = () => '') {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`gave up after ${WAIT_MS / 1000} s waiting for ${what}\n${describe()}`);
    await sleep(POLL_MS);
  }
}

// The promise's value; fails as waitFor does if it takes longer.
async function within(what, promise, describe = () => '') {
  let timer;
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up after ${WAIT_MS / 1000} s waiting for ${what}\n${describe()}`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function brokerUrl(port) {
  return `sqs://${KEY}:${encodeURIComponent(SECRET)}@127.0.0.1:${port}`;
}

// The tasks' record: n -> the task ids that ran with it.
function readRecord(file) {
  const runs = new Map();
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  for (const line of text.split('\n').filter(Boolean)) {
    const [n, id] = line.split(' ');
    runs.set(Number(n), [...(runs.get(Number(n)) || []), id]);
  }
  return runs;
}

function runCount(runs) {
  return [...runs.values()].reduce((sum, ids) => sum + ids.length, 0);
}

// The worker in its own process group, its output in a log file.
function startWorker(dir, env) {
  const logFile = path.join(dir, 'worker.log');
  const log = fs.openSync(logFile, 'a');
  const child = spawn(PYTHON, ['-I', '-m', 'celery', '-A', 'celery_tasks', 'worker',
    '--pool', 'prefork', '--concurrency', '2', '--loglevel', 'INFO', '--hostname', 'gateway-test@%h'], {
    cwd: __dirname, env, stdio: ['ignore', log, log], detached: true,
  });
  fs.closeSync(log);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, log: () => fs.readFileSync(logFile, 'utf8') };
}

function produce(env, first, last) {
  run(PYTHON, ['-I', APP, 'send', String(first), String(last)], { cwd: os.tmpdir(), env, timeout: WAIT_MS });
}

function tail(text, lines = 40) {
  return text.split('\n').slice(-lines).join('\n');
}

test('a Celery worker on kombu\'s SQS transport runs every task exactly once', { skip: celeryMissing() }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-celery-'));
  const database = startDatabase(dir, 55542);
  let gateway = null;
  let worker = null;
  t.after(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) process.kill(-worker.child.pid, 'SIGKILL');
    if (gateway) await gateway.stop();
    database.stop();
  });
  gateway = await startGateway(dir, database.dsn);
  const record = path.join(dir, 'record.txt');
  const env = {
    ...process.env,
    CELERY_GATEWAY_URL: brokerUrl(gateway.port),
    CELERY_GATEWAY_QUEUE: QUEUE,
    CELERY_RECORD_FILE: record,
  };
  worker = startWorker(dir, env);
  const state = () => `record: ${runCount(readRecord(record))} runs; queue: ${describeQueue(database, QUEUE)}\n` +
    `worker's log, last lines:\n${tail(worker.log())}`;
  const allRan = (count) => waitFor(`${count} tasks to have run and the queue to be empty`, () => {
    const stats = queueStats(database, QUEUE);
    return runCount(readRecord(record)) >= count && stats.deletes >= count && stats.visible + stats.inFlight === 0;
  }, state);

  await waitFor('the worker to be ready', () => /ready\./.test(worker.log()), state);
  const third = TASKS / 3;
  produce(env, 0, third);
  await allRan(third);

  // killed, not stopped: the gateway keeps no state, and the worker keeps
  // running and finds the new one on its own
  await within('the gateway to die of SIGKILL', gateway.stop('SIGKILL'), state);
  gateway = await startGateway(dir, database.dsn, { port: gateway.port });
  produce(env, third, 2 * third);
  await allRan(2 * third);

  // while the worker's receive waits in the server
  await within('a receive of the worker to wait in the server', getSleeping(database), state);
  await within('PostgreSQL to restart', database.pgCtl('restart'), state);
  produce(env, 2 * third, TASKS);
  await allRan(TASKS);

  worker.child.kill('SIGTERM');
  const exit = await within('the worker to exit after SIGTERM (warm shutdown)', worker.exited, state);
  const log = worker.log();
  assert.deepEqual(exit, { code: 0, signal: null }, tail(log));
  assert.match(log, /Warm shutdown/);
  t.diagnostic(/Connection to broker lost/.test(log) ? 'the worker lost the gateway while it or PostgreSQL restarted, and connected again'
    : 'the worker\'s calls while the gateway and PostgreSQL restarted were retried without losing the connection');

  const runs = readRecord(record);
  const twice = [...runs].filter(([, ids]) => ids.length > 1).map(([n]) => n);
  const never = Array.from({ length: TASKS }, (_, n) => n).filter((n) => !runs.has(n));
  assert.deepEqual({ twice, never }, { twice: [], never: [] }, 'every task runs exactly once');
  assert.equal(new Set([...runs.values()].flat()).size, TASKS);
  // each message put, received and deleted once; none left or put back
  assert.deepEqual(queueStats(database, QUEUE), { visible: 0, inFlight: 0, delayed: 0, puts: TASKS, gets: TASKS, deletes: TASKS });
  assert.doesNotMatch(log, /UnsupportedOperation/);
});
