'use strict';
// The worker across lost connections: a server restart and
// pg_terminate_backend while handlers hold messages. Receipts survive
// both, so every message is done once, after the connection is back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Worker } = require('..');
const {
  DSN, dsnWith, sql, freshQueue, stats, until, sleep, within, stopServer, startServer, restartServer, quietLogger,
} = require('./helpers');

// Puts six messages, runs a worker (with the options) whose handlers take
// seconds(message), calls disrupt() once all six handlers run, and waits
// until the queue is empty.
async function sixMessagesThrough(name, options, seconds, disrupt) {
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
  }, { ...options, logger });
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
    // Down for 5 s, many heartbeats: three handlers end meanwhile (their
    // deletes fail and are tried again), three run on after it. Their leases
    // of 8 s, extended when less than 6 s is left, have 6 to 8 s left when
    // the server goes, so the extensions fail meanwhile and must be tried
    // again as soon as the server is back, with the receipts from before,
    // before the worker's own get (after its pauses of 1, 2, 4 s) takes the
    // messages again.
    const options = { visibilityTimeout: 8, extensionThreshold: 6, heartbeatInterval: 0.25 };
    const seconds = (message) => (Number(message.body) % 2 === 1 ? 1.5 : 10);
    const { ids, handled, metrics, logger } = await sixMessagesThrough('node-worker-restart', options, seconds,
      () => restartServer(5));
    t.diagnostic(`metrics ${JSON.stringify(metrics)}`);
    assert.deepEqual([...handled].sort(), [...ids].sort(), 'each message handled once');
    assert.equal(metrics.processed, 6, 'deleted after the restart');
    assert.ok(metrics.extensions > 0, 'leases extended');
    assert.ok(metrics.errors >= 1, 'the calls that failed while the server was down were counted');
    assert.ok(logger.lines.some((line) => line.includes('lease call failed')), 'a lease call failed during the outage');
    assert.equal(metrics.lostLeases, 0, logger.lines.join(' | '));
  });

  await t.test('pg_terminate_backend of the worker\'s connections', async (t) => {
    let killed = 0;
    const options = { visibilityTimeout: 10, extensionThreshold: 9, heartbeatInterval: 0.5 };
    const { ids, handled, metrics } = await sixMessagesThrough('node-worker-terminate', options, () => 3, async (applicationName) => {
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

  await t.test('stop(1) while the server is down returns after about 1 s', async (t) => {
    // Short leases, so that the extensions fail while the server is down;
    // the stop comes after three of them failed, when a pause doubling
    // after each (1, 2, 4 s) would have slept past the deadline.
    const q = await freshQueue('node-worker-stop-down');
    await sql("SELECT queue.queue_put_batch($1, ARRAY['a', 'b'])", [q]);
    const client = new Client(DSN);
    const logger = quietLogger();
    let running = 0;
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const worker = new Worker(client, q, async () => {
      running += 1;
      await gate;
    }, { visibilityTimeout: 3, extensionThreshold: 2.5, heartbeatInterval: 0.25, concurrency: 1, logger });
    const run = worker.start();
    let took;
    try {
      assert.ok(await until(() => running === 1, 10), 'the handler started');
      await stopServer();
      try {
        const failed = () => logger.lines.filter((line) => line.includes('lease call failed')).length;
        assert.ok(await until(() => failed() >= 3, 15), logger.lines.join(' | '));
        const begin = Date.now();
        await within(worker.stop(1), 20, 'stop(1)');
        await run;
        took = Date.now() - begin;
      } finally {
        await startServer();
      }
    } finally {
      open();
      await within(worker.stop(), 10, 'stop');
      await client.close();
    }
    t.diagnostic(`stop(1) took ${took} ms; metrics ${JSON.stringify(worker.metrics)}`);
    assert.ok(took >= 900 && took < 3000, `stop(1) took ${took} ms`);
    assert.ok(worker.metrics.errors >= 1, 'the calls while the server was down failed');
    assert.ok(logger.lines.some((line) => line.includes('left to their leases')), logger.lines.join(' | '));
    assert.equal(worker.metrics.processed, 0);
    assert.equal(worker.metrics.released, 0, 'nothing could be released');
    // the leases ran out by themselves: both messages are visible again
    assert.ok(await until(async () => (await stats(q)).visible === 2, 10), JSON.stringify(await stats(q)));
  });
});
