'use strict';
// The worker: leases kept for slow handlers, failures and poison messages,
// a graceful stop.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Worker, InvalidArgument } = require('..');
const { DSN, freshQueue, stats, sleep, until, quietLogger } = require('./helpers');

// Runs workers until done() is true (at most `seconds`), then stops them.
async function runUntil(workers, done, seconds) {
  const runs = workers.map((w) => w.start());
  const finished = await until(done, seconds);
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(runs);
  return finished;
}

const sum = (workers, key) => workers.reduce((n, w) => n + w.metrics[key], 0);

test('worker', async (t) => {
  const client = new Client(DSN);
  t.after(() => client.close());

  await t.test('options are checked', () => {
    assert.throws(() => new Worker(client, 'node-x', () => {}, { batchSize: 0 }), InvalidArgument);
    assert.throws(() => new Worker(client, 'node-x', () => {}, { batch_size: 4 }), InvalidArgument);
    assert.throws(() => new Worker(client, 'node-x', 'not a function'), InvalidArgument);
  });

  await t.test('two workers, handlers longer than the lease: each message handled once', async () => {
    const q = await freshQueue('node-worker-lease');
    const ids = (await client.putBatch(q, ['s1', 's2', 's3', 's4', 's5', 's6'])).map((r) => r.messageId);
    const other = new Client(DSN);
    const handled = [];
    const handler = async (message) => {
      handled.push(message.messageId);
      await sleep(4);
    };
    const options = { visibilityTimeout: 2, extensionThreshold: 1, heartbeatInterval: 0.25, batchSize: 4, logger: quietLogger() };
    const workers = [new Worker(client, q, handler, options), new Worker(other, q, handler, options)];
    const finished = await runUntil(workers, async () => (await stats(q)).total === 0, 30);
    await other.close();
    assert.ok(finished, `left: ${JSON.stringify(await stats(q))}`);
    assert.deepEqual([...handled].sort(), [...ids].sort(), 'every message handled exactly once');
    assert.ok(sum(workers, 'extensions') > 0, 'leases were extended');
    assert.equal(sum(workers, 'lostLeases'), 0);
    assert.equal(sum(workers, 'processed'), 6);
    assert.equal(sum(workers, 'fetched'), 6);
  });

  await t.test('a failed message comes back after failureDelay', async () => {
    const q = await freshQueue('node-worker-retry');
    await client.put(q, 'fails once');
    const deliveries = [];
    const worker = new Worker(client, q, (message) => {   // a plain (not async) handler
      deliveries.push({ count: message.dequeueCount, at: Date.now() });
      if (message.dequeueCount === 1) throw new Error('first delivery fails');
    }, { failureDelay: 1, heartbeatInterval: 0.25, logger: quietLogger() });
    assert.ok(await runUntil([worker], () => worker.metrics.processed === 1, 15));
    assert.deepEqual(deliveries.map((d) => d.count), [1, 2]);
    const gap = deliveries[1].at - deliveries[0].at;
    assert.ok(gap >= 900 && gap < 8000, `second delivery ${gap} ms after the failure`);
    assert.equal(worker.metrics.failed, 1);
    assert.equal(worker.metrics.released, 0, "a failure is no release at stop");
    assert.equal((await stats(q)).total, 0);
  });

  await t.test('a message failing max_dequeue_count times goes to the poison queue', async () => {
    const q = await freshQueue('node-worker-poison', { max_dequeue_count: 3 });
    await client.put(q, 'always fails');
    const counts = [];
    const logger = quietLogger();
    const worker = new Worker(client, q, async (message) => {
      counts.push(message.dequeueCount);
      throw new Error('always');
    }, { heartbeatInterval: 0.25, logger });
    assert.ok(await runUntil([worker], async () => (await stats(`${q}-poison`)).total === 1, 15));
    assert.deepEqual(counts, [1, 2, 3]);
    assert.equal(worker.metrics.failed, 3);
    assert.equal(worker.metrics.processed, 0);
    assert.equal((await stats(q)).total, 0);
    assert.ok(logger.lines.some((line) => line.includes('always')), 'the failures were logged');
  });

  await t.test('a lease lost to another consumer is logged and counted', async () => {
    const q = await freshQueue('node-worker-lost');
    await client.put(q, 'taken over');
    let started = false;
    let stolen = null;
    const logger = quietLogger();
    // a 1 s lease that is never extended (no heartbeat before the handler
    // ends), and no second get while the message is in process
    const worker = new Worker(client, q, async () => {
      started = true;
      await until(() => stolen !== null, 10);
    }, { batchSize: 1, newBatchThreshold: 0, visibilityTimeout: 1, extensionThreshold: 0, heartbeatInterval: 30, logger });
    const run = worker.start();
    assert.ok(await until(() => started, 10));
    [stolen] = await client.get(q, { wait: 10, visibilityTimeout: 60 });
    assert.ok(await until(() => worker.metrics.lostLeases === 1, 10), JSON.stringify(worker.metrics));
    await worker.stop();
    await run;
    assert.equal(stolen.dequeueCount, 2);
    assert.equal(worker.metrics.processed, 0);
    assert.ok(logger.lines.some((line) => line.includes('lost the lease')), logger.lines.join('\n'));
    await client.delete(stolen);   // the new holder's receipt still works
  });

  await t.test('stop: running handlers finish and are deleted, the others are released', async () => {
    const q = await freshQueue('node-worker-stop');
    await client.putBatch(q, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    let started = 0;
    let finished = 0;
    const worker = new Worker(client, q, async () => {
      started += 1;
      await sleep(1);
      finished += 1;
    }, { batchSize: 10, concurrency: 2, heartbeatInterval: 0.25, logger: quietLogger() });
    const run = worker.start();
    assert.ok(await until(() => started === 2, 10));
    const begin = Date.now();
    await worker.stop();
    await run;
    assert.ok(Date.now() - begin >= 500, 'stop waited for the running handlers');
    assert.equal(started, 2);
    assert.equal(finished, 2);
    assert.equal(worker.metrics.processed, 2);
    assert.equal(worker.metrics.released, 8);
    assert.equal(worker.metrics.fetched, 10, 'the get cut by the stop took nothing');
    assert.deepEqual(await stats(q), { visible: 8, inFlight: 0, delayed: 0, total: 8 });
    assert.deepEqual((await client.inspect(q)).map((row) => row.dequeueCount), [1, 1, 1, 1, 1, 1, 1, 1]);
  });

  await t.test('stop from a plain handler', async () => {
    const q = await freshQueue('node-worker-stop-sync');
    await client.putBatch(q, ['a', 'b', 'c', 'd', 'e']);
    const handled = [];
    const worker = new Worker(client, q, (message) => {
      handled.push(message.body);
      worker.stop();
    }, { concurrency: 1, heartbeatInterval: 0.25, logger: quietLogger() });
    await worker.start();
    assert.deepEqual(handled, ['a']);
    assert.equal(worker.metrics.processed, 1);
    assert.equal(worker.metrics.released, 4);
    assert.equal(worker.metrics.fetched, 5, 'the get cut by the stop took nothing');
    assert.deepEqual(await stats(q), { visible: 4, inFlight: 0, delayed: 0, total: 4 });
    assert.deepEqual((await client.inspect(q)).map((row) => row.dequeueCount), [1, 1, 1, 1]);
  });

  await t.test('stop(timeout) releases the handlers still running', async () => {
    const q = await freshQueue('node-worker-stop-timeout');
    await client.put(q, 'long');
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    let started = false;
    const worker = new Worker(client, q, async () => {
      started = true;
      await gate;
    }, { heartbeatInterval: 0.25, logger: quietLogger() });
    const run = worker.start();
    assert.ok(await until(() => started, 10));
    const begin = Date.now();
    await worker.stop(0.5);
    await run;
    const took = Date.now() - begin;
    assert.ok(took >= 400 && took < 5000, `stop took ${took} ms`);
    assert.equal(worker.metrics.released, 1);
    assert.deepEqual(await stats(q), { visible: 1, inFlight: 0, delayed: 0, total: 1 });
    open();   // the handler returns now: its outcome is dropped
    await sleep(0.3);
    assert.equal(worker.metrics.processed, 0);
    assert.equal((await stats(q)).total, 1);
  });

  await t.test('a worker on one pg.Client polls no longer than a heartbeat', async () => {
    const pg = require('pg');
    const q = await freshQueue('node-worker-one-connection');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    const handled = [];
    const worker = new Worker(own, q, async (message) => {
      handled.push(message.body);
      await sleep(3);
    }, { visibilityTimeout: 2, extensionThreshold: 1, heartbeatInterval: 0.25, logger: quietLogger() });
    await client.put(q, 'slow');
    const finished = await runUntil([worker], async () => (await stats(q)).total === 0, 15);
    await connection.end();
    assert.ok(finished);
    assert.deepEqual(handled, ['slow']);
    assert.ok(worker.metrics.extensions > 0);
    assert.equal(worker.metrics.lostLeases, 0);
  });
});
