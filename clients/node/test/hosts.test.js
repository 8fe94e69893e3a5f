'use strict';
// Connection strings that list several servers (lib/hosts.js): each new
// connection tries them in turn and keeps the first that connects and,
// with target_session_attrs=read-write, takes writes. The failover of a
// real cluster is test/ha's; here one server stands for the one that
// answers, a missing socket for one that is down, and a database whose
// sessions are read-only for a standby.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Worker, openPool } = require('..');
const { hostsOf } = require('../lib/hosts');
const { DSN, dsnWith, sql, freshQueue, stats, until, quietLogger } = require('./helpers');

// DSN with a host that is down listed before its own
const DOWN = '%2Fno-such-directory:5432';
const withDownFirst = (dsn) => dsn.replace('@', `@${DOWN},`);
const withParams = (dsn, params) => dsn + (dsn.includes('?') ? '&' : '?') + params;

test('hostsOf reads the hosts of a libpq URI', () => {
  assert.deepEqual(hostsOf('postgresql://app:pw@db1:5432,db2,[::1]:5433/app?target_session_attrs=read-write&application_name=x'), {
    dsns: [
      'postgresql://app:pw@db1:5432/app?application_name=x',
      'postgresql://app:pw@db2/app?application_name=x',
      'postgresql://app:pw@[::1]:5433/app?application_name=x',
    ],
    target: 'read-write',
    timeout: 0,
  });
  assert.deepEqual(hostsOf('postgres://db/app'), { dsns: ['postgres://db/app'], target: 'any', timeout: 0 });
  assert.deepEqual(hostsOf('postgresql:///app?host=/run/postgresql&connect_timeout=1'),
    { dsns: ['postgresql:///app?host=/run/postgresql&connect_timeout=1'], target: 'any', timeout: 2000 });
  assert.deepEqual(hostsOf('postgresql://a,b/app?connect_timeout=5&target_session_attrs=primary').timeout, 5000);
  assert.throws(() => hostsOf('postgresql://a,b/app?target_session_attrs=standby'), /standby is not supported/);
  assert.throws(() => hostsOf('postgresql://a,,b/app'), /empty host/);
  assert.throws(() => hostsOf('postgresql://a,b/app?connect_timeout=soon'), /connect_timeout must be a number/);
});

test('a listed host that is down is passed over, by the client and by the worker', async () => {
  const q = await freshQueue('node-hosts');
  const client = new Client(withParams(withDownFirst(dsnWith({ applicationName: 'node-hosts' })), 'target_session_attrs=read-write'));
  try {
    const { messageId } = await client.put(q, 'through the second host');
    const [m] = await client.get(q);
    assert.equal(m.messageId, messageId);
    await client.delete(m);
    // the worker's own connection for its long poll finds it too
    await client.put(q, 'for the worker');
    const done = [];
    const worker = new Worker(client, q, async (message) => { done.push(message.body); },
      { logger: quietLogger() });
    const run = worker.start();
    assert.ok(await until(async () => (await stats(q)).total === 0, 10), 'the worker emptied the queue');
    await worker.stop(5);
    await run;
    assert.deepEqual(done, ['for the worker']);
    assert.equal(worker.metrics.errors, 0);
  } finally {
    await client.close();
  }
});

test('target_session_attrs=read-write refuses a server whose sessions cannot write', async () => {
  const database = 'node_hosts_read_only';
  await sql(`DROP DATABASE IF EXISTS ${database}`);
  await sql(`CREATE DATABASE ${database}`);
  await sql(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
  try {
    const readOnly = dsnWith({ database });
    const refused = new Client(withParams(readOnly, 'target_session_attrs=read-write'));
    await assert.rejects(refused.put('anything', 'x'), (err) => {
      assert.equal(err.code, '08000');
      assert.match(err.message, /does not accept read-write sessions/);
      assert.doesNotMatch(err.message, /@/, 'the message names no user');
      return true;
    });
    await refused.close();
    // without the target the same server is taken: the call reaches it
    // (and finds no extension there)
    const taken = new Client(readOnly);
    await assert.rejects(taken.put('anything', 'x'), (err) => err.code === '55000');
    await taken.close();
    // the pool alone, over a host that is down and one that cannot write:
    // the last refusal is the error
    const pool = openPool(withParams(withDownFirst(readOnly), 'target_session_attrs=read-write'));
    await assert.rejects(pool.query('SELECT 1'), (err) => err.code === '08000');
    await pool.end();
  } finally {
    await sql(`DROP DATABASE ${database}`);
  }
});
