'use strict';
// The worker across lost connections: a server restart and
// pg_terminate_backend while handlers hold messages. Receipts survive
// both, so every message is done once, after the connection is back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Worker } = require('..');
const { dsnWith, sql, freshQueue, stats, until, sleep, restartServer, quietLogger } = require('./helpers');

// Puts six messages, runs a worker whose handlers take seconds(message), calls
// disrupt() once all six handlers run, and waits until the queue is empty.
// The leases (10 s) are extended at every heartbeat after the first second,
// so that extensions are under way when the connections go.
async function sixMessagesThrough(name, seconds, disrupt) {
  const q = await freshQueue(name);
  const ids = (await sql('SELECT message_id FROM queue.queue_put_batch($1, $2::text[])',
    [q, ['1', '2', '3', '4', '5', '6']])).map((row) => row.message_id);
  const applicationName = `${name}-worker`;
  const client = new Client(dsnWith({ applicationName }));
  const handled = [];
  let running = 0;
  const logger = quietLogger();
  const worker = new Worker(client, q, async (message) => {
    handled.push(message.messageId);
    running += 1;
    await sleep(seconds(message));
  }, { visibilityTimeout: 10, extensionThreshold: 9, heartbeatInterval: 0.5, logger });
  const run = worker.start();
  try {
    assert.ok(await until(() => running === 6, 10), 'the six handlers started');
    await disrupt(applicationName);
    const emptied = await until(async () => (await stats(q)).total === 0, 40);
    assert.ok(emptied, `left: ${JSON.stringify(await stats(q))}; log: ${logger.lines.join(' | ')}`);
  } finally {
    await worker.stop(5);
    await run;
    await client.close();
  }
  return { ids, handled, metrics: worker.metrics, logger };
}

test('worker across lost connections', async (t) => {
  await t.test('a server restart while handlers hold messages', async (t) => {
    // Down for 2.5 s: three handlers end meanwhile (their deletes fail and
    // are tried again), three run on after it (their leases are extended
    // with the receipts from before).
    const seconds = (message) => (Number(message.body) % 2 === 1 ? 1.5 : 5);
    const { ids, handled, metrics } = await sixMessagesThrough('node-worker-restart', seconds, () => restartServer(2.5));
    t.diagnostic(`metrics ${JSON.stringify(metrics)}`);
    assert.deepEqual([...handled].sort(), [...ids].sort(), 'each message handled once');
    assert.equal(metrics.processed, 6, 'deleted after the restart');
    assert.ok(metrics.extensions > 0, 'leases extended');
    assert.ok(metrics.errors >= 2, 'the calls that failed while the server was down were counted');
    assert.equal(metrics.lostLeases, 0);
  });

  await t.test('pg_terminate_backend of the worker\'s connections', async (t) => {
    let killed = 0;
    const { ids, handled, metrics } = await sixMessagesThrough('node-worker-terminate', () => 3, async (applicationName) => {
      const rows = await sql(
        'SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
      killed = rows.filter((row) => row.ok).length;
    });
    t.diagnostic(`${killed} backends terminated; metrics ${JSON.stringify(metrics)}`);
    assert.ok(killed >= 1, 'found the worker\'s backends by application_name');
    assert.deepEqual([...handled].sort(), [...ids].sort(), 'each message handled once');
    assert.equal(metrics.processed, 6);
    assert.ok(metrics.errors >= 1, 'the waiting get that was cut was counted');
    assert.equal(metrics.lostLeases, 0);
  });
});
