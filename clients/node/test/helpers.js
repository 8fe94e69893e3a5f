'use strict';
// What the tests share: the server of the suite (PGQUEUE_TEST_DSN, with
// the extension in schema "queue"), a connection for setting up and
// looking, fresh queues, and a restart of the server.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');

const DSN = process.env.PGQUEUE_TEST_DSN;
if (!DSN) throw new Error('PGQUEUE_TEST_DSN is not set: the tests need a server with the queue extension');

// The DSN with another user, another database or more parameters.
function dsnWith({ user, database, applicationName } = {}) {
  const url = new URL(DSN);
  if (user) url.username = user;
  if (database) url.pathname = `/${encodeURIComponent(database)}`;
  if (applicationName) url.searchParams.set('application_name', applicationName);
  return url.toString();
}

// Plain SQL beside the client under test; it survives a server restart,
// and lets the process exit when idle.
const admin = new pg.Pool({ connectionString: DSN, max: 2, allowExitOnIdle: true });
admin.on('error', () => {});
const sql = async (text, params) => (await admin.query(text, params)).rows;

// A queue of that name, new and empty (its poison queue too).
async function freshQueue(name, settings = {}) {
  for (const q of [name, `${name}-poison`]) {
    const [{ exists }] = await sql('SELECT count(*) > 0 AS exists FROM queue.queue_list() WHERE queue = $1', [q]);
    if (exists) await sql('SELECT queue.queue_drop($1)', [q]);
  }
  const args = ['$1'];
  const params = [name];
  for (const [key, value] of Object.entries(settings)) {
    params.push(value);
    args.push(`${key} => $${params.length}`);
  }
  await sql(`SELECT queue.queue_create(${args.join(', ')})`, params);
  return name;
}

async function stats(queue) {
  const [row] = await sql('SELECT visible, in_flight, delayed, total FROM queue.queue_stats($1)', [queue]);
  return { visible: Number(row.visible), inFlight: Number(row.in_flight), delayed: Number(row.delayed), total: Number(row.total) };
}

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

// Waits until check() is true, at most `seconds`; returns whether it was.
async function until(check, seconds) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > end) return false;
    await sleep(0.05);
  }
}

function pgCtl(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(process.env.PGQUEUE_TEST_BINDIR, 'pg_ctl'), args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args.join(' ')} exited with ${code}`))));
  });
}

function pgdata() {
  const dir = process.env.PGQUEUE_TEST_PGDATA;
  if (!dir || !process.env.PGQUEUE_TEST_BINDIR) {
    throw new Error('PGQUEUE_TEST_PGDATA and PGQUEUE_TEST_BINDIR are needed to stop and start the server');
  }
  return dir;
}

// Stops the suite's server (fast: its connections are cut at once).
async function stopServer() {
  await pgCtl(['-D', pgdata(), '-w', '-m', 'fast', 'stop']);
}

// Starts the suite's server again. Its log goes to a file of its own
// (without -l the server would keep pg_ctl's output open); the start takes
// the options of the last one from postmaster.opts, as pg_ctl restart does.
async function startServer() {
  const dir = pgdata();
  const log = path.join(dir, 'restart.log');   // goes with the throwaway server
  // the postgres program, then its arguments each in double quotes
  const opts = fs.readFileSync(path.join(dir, 'postmaster.opts'), 'utf8').trim();
  const args = opts.indexOf(' "') === -1 ? '' : opts.slice(opts.indexOf(' "') + 1);
  await pgCtl(['-D', dir, '-l', log, '-w', '-o', args, 'start']);
}

// Restarts the suite's server, down for `downSeconds` between the stop and
// the start.
async function restartServer(downSeconds = 0) {
  await stopServer();
  await sleep(downSeconds);
  await startServer();
}

// The promise, or a rejection naming `what` if it has not settled within
// `seconds` (so that a call that hangs fails the test instead of the suite).
async function within(promise, seconds, what) {
  let timer;
  const late = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${seconds} s`)), seconds * 1000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

// A logger that keeps the warnings for the test to look at.
function quietLogger() {
  const lines = [];
  return { lines, warn: (message) => lines.push(message) };
}

module.exports = {
  DSN, dsnWith, admin, sql, freshQueue, stats, sleep, until, within,
  stopServer, startServer, restartServer, quietLogger,
};
