'use strict';
// The worker: leases kept for slow handlers, failures and poison messages,
// a graceful stop.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Worker, InvalidArgument, QueueError, ArgumentTypeError, ArgumentRangeError } = require('..');
const { DSN, dsnWith, sql, freshQueue, stats, sleep, until, within, quietLogger } = require('./helpers');

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
    // a TypeError or RangeError of the client's own, still an InvalidArgument (22023)
    const refused = (Native, Own, make) => assert.throws(make, (err) => {
      assert.ok(err instanceof Native, `${err.name} is not a ${Native.name}: ${err.message}`);
      assert.equal(Object.getPrototypeOf(err), Own.prototype, `${err.name}: ${err.message}`);
      assert.ok(err instanceof InvalidArgument && err instanceof QueueError);
      assert.equal(err.code, '22023');
      return true;
    });
    const wrongType = (make) => refused(TypeError, ArgumentTypeError, make);
    const outOfRange = (make) => refused(RangeError, ArgumentRangeError, make);
    const handler = () => {};
    wrongType(() => new Worker({ query: async () => ({ rows: [] }) }, 'node-x', handler));
    wrongType(() => new Worker(client, 42, handler));
    wrongType(() => new Worker(client, 'node-x', 'not a function'));
    wrongType(() => new Worker(client, 'node-x', handler, 'not options'));
    wrongType(() => new Worker(client, 'node-x', handler, { batch_size: 4 }));
    wrongType(() => new Worker(client, 'node-x', handler, { batchSize: '4' }));
    wrongType(() => new Worker(client, 'node-x', handler, { failureDelay: '1' }));
    outOfRange(() => new Worker(client, 'node-x', handler, { batchSize: 0 }));
    outOfRange(() => new Worker(client, 'node-x', handler, { batchSize: 1001 }));
    outOfRange(() => new Worker(client, 'node-x', handler, { batchSize: 2.5 }));
    outOfRange(() => new Worker(client, 'node-x', handler, { concurrency: 0 }));
    outOfRange(() => new Worker(client, 'node-x', handler, { heartbeatInterval: NaN }));
    outOfRange(() => new Worker(client, 'node-x', handler, { maxPollingInterval: Infinity }));
    outOfRange(() => new Worker(client, 'node-x', handler, { failureDelay: -1 }));
    // the lease is extended when less than extensionThreshold is left: it must be less than the lease
    for (const options of [{ visibilityTimeout: 5, extensionThreshold: 5 }, { visibilityTimeout: 2 }]) {
      outOfRange(() => new Worker(client, 'node-x', handler, options));
      assert.throws(() => new Worker(client, 'node-x', handler, options), /extensionThreshold/);
    }
    new Worker(client, 'node-x', handler, { visibilityTimeout: 2, extensionThreshold: 1.5 });
    new Worker(client, 'node-x', handler, { batchSize: 1000, newBatchThreshold: 0, concurrency: 1 });
  });

  await t.test('the next fetch deletes what was done, in its own call: one transaction per batch', async () => {
    const q = await freshQueue('node-worker-one-call');
    const count = 200;
    await client.putBatch(q, Array.from({ length: count }, (_, i) => String(i)));
    // the worker's sessions count the calls of each function
    const url = new URL(dsnWith({ applicationName: 'node-worker-one-call' }));
    url.searchParams.set('options', '-c track_functions=all');
    const counted = new Client(url.toString());
    const seen = new Set();
    const worker = new Worker(counted, q, (m) => { seen.add(m.messageId); }, { batchSize: 16 });
    const calls = async () => Object.fromEntries((await sql(`SELECT funcname, calls::int FROM pg_stat_user_functions
      WHERE funcname IN ('queue_delete_and_get', 'queue_delete_batch', 'queue_get')`)).map((r) => [r.funcname, r.calls]));
    await sql('SELECT pg_stat_reset()');
    assert.ok(await runUntil([worker], async () => (await stats(q)).total === 0, 30), 'every message deleted');
    await counted.close();
    assert.equal(seen.size, count);
    assert.equal(worker.metrics.processed, count);
    // the sessions' counts reach the statistics when they end
    let n = {};
    await until(async () => {
      await sql('SELECT pg_stat_clear_snapshot()');
      n = await calls();
      return (n.queue_delete_and_get || 0) >= Math.ceil(count / 16);
    }, 10);
    assert.ok(n.queue_delete_and_get >= Math.ceil(count / 16), JSON.stringify(n));
    assert.ok((n.queue_delete_and_get || 0) <= 4 * Math.ceil(count / 16), JSON.stringify(n));
    assert.ok((n.queue_delete_batch || 0) <= 1, `deletes went by queue_delete_and_get: ${JSON.stringify(n)}`);
    assert.equal(n.queue_get || 0, 0, JSON.stringify(n));
  });

  await t.test('four workers on one fresh Client(dsn): every lease kept, stop returns', async (t) => {
    // The client's pool has 4 connections: the long polls must not take
    // them (each worker polls on a connection of its own), nor may a
    // worker hold one while it looks up the schema (the client is new).
    const q = await freshQueue('node-worker-four');
    const ids = (await client.putBatch(q, ['1', '2', '3', '4', '5', '6', '7', '8'])).map((r) => r.messageId);
    const applicationName = 'node-worker-four';
    const shared = new Client(dsnWith({ applicationName }));
    const handled = [];
    const handler = async (message) => {
      handled.push(message.messageId);
      await sleep(4);
    };
    const logger = quietLogger();
    const options = { visibilityTimeout: 2, extensionThreshold: 1, heartbeatInterval: 0.25, batchSize: 2, logger };
    const workers = [1, 2, 3, 4].map(() => new Worker(shared, q, handler, options));
    const runs = workers.map((w) => w.start());
    let finished;
    let took;
    try {
      // the client's own calls get through while the four poll
      finished = await until(async () => (await within(shared.stats(q), 5, 'stats')).total === 0, 30);
    } finally {
      const begin = Date.now();
      await within(Promise.all(workers.map((w) => w.stop())), 10, 'stop of the four workers');
      await Promise.all(runs);
      took = Date.now() - begin;
      await shared.close();
    }
    t.diagnostic(`stop took ${took} ms; metrics ${JSON.stringify(workers.map((w) => w.metrics))}`);
    assert.ok(finished, `left: ${JSON.stringify(await stats(q))}; log: ${logger.lines.join(' | ')}`);
    assert.deepEqual([...handled].sort(), [...ids].sort(), 'every message handled exactly once');
    assert.ok(sum(workers, 'extensions') > 0, 'leases were extended');
    assert.equal(sum(workers, 'lostLeases'), 0);
    assert.equal(sum(workers, 'processed'), 8);
    assert.ok(took < 3000, `stop took ${took} ms: the waiting gets were cancelled`);
    // the connections of the long polls were closed at the stop, the pool's by close()
    assert.ok(await until(async () => (await sql(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]))[0].n === 0, 5),
    'no connection left');
  });

  await t.test('a get that claims messages just as the stop comes: they are released, never lost', async (t) => {
    const q = await freshQueue('node-worker-stop-race');
    const own = new Client(DSN);
    const outcomes = { processed: 0, released: 0, left: 0 };
    const ROUNDS = 18;
    try {
      for (let i = 0; i < ROUNDS; i += 1) {
        const worker = new Worker(own, q, () => {}, { heartbeatInterval: 0.25, logger: quietLogger() });
        const run = worker.start();
        await sleep(0.1);   // the get waits
        const put = client.put(q, `m${i}`);
        await sleep((i % 6) * 0.001);   // the stop as the put is sent, or a little after
        await within(worker.stop(), 10, 'stop');
        await run;
        await put;
        const s = await stats(q);
        assert.equal(s.inFlight, 0, `round ${i}: ${JSON.stringify(s)}, metrics ${JSON.stringify(worker.metrics)}`);
        assert.equal(worker.metrics.fetched, worker.metrics.processed + worker.metrics.released);
        outcomes.processed += worker.metrics.processed;
        outcomes.released += worker.metrics.released;
        outcomes.left += 1 - worker.metrics.fetched;
        await client.clear(q);
      }
    } finally {
      await own.close();
    }
    t.diagnostic(`of ${ROUNDS} messages: ${JSON.stringify(outcomes)} (left: the stop came before the get took it)`);
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

  await t.test('without failureDelay a failed message follows the queue\'s retry curve', async () => {
    const q = await freshQueue('node-worker-curve', { max_dequeue_count: 4, retry_delay: '0.4 s', retry_backoff: true });
    await client.put(q, 'always fails');
    const deliveries = [];
    const worker = new Worker(client, q, (message) => {
      deliveries.push({ count: message.dequeueCount, at: Date.now() });
      throw new Error('always');
    }, { heartbeatInterval: 0.05, maxPollingInterval: 0.05, logger: quietLogger() });
    assert.ok(await runUntil([worker], async () => (await stats(`${q}-poison`)).total === 1, 30));
    assert.deepEqual(deliveries.map((d) => d.count), [1, 2, 3, 4]);
    [400, 800, 1600].forEach((delay, i) => {
      const gap = deliveries[i + 1].at - deliveries[i].at;
      assert.ok(gap >= 0.9 * delay - 50 && gap < 1.1 * delay + 1000, `delivery ${i + 2} came ${gap} ms after the one before`);
    });
    assert.equal(worker.metrics.failed, 4);
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

  // A worker whose handler (3 s) outlives its lease (2 s): only extensions keep it.
  const slowWorker = (own, q, handled) => new Worker(own, q, async (message) => {
    handled.push(message.body);
    await sleep(3);
  }, { visibilityTimeout: 2, extensionThreshold: 1, heartbeatInterval: 0.25, logger: quietLogger() });

  await t.test('a worker on a pg.Pool of two: one for the long poll, one for the leases', async () => {
    const pg = require('pg');
    const q = await freshQueue('node-worker-pool');
    const pool = new pg.Pool({ connectionString: DSN, max: 2 });
    const own = new Client(pool);   // the schema not known yet
    const handled = [];
    const worker = slowWorker(own, q, handled);
    await client.put(q, 'slow');
    const run = worker.start();
    let took;
    try {
      assert.ok(await until(async () => (await stats(q)).total === 0, 15), JSON.stringify(await stats(q)));
    } finally {
      const begin = Date.now();
      await within(worker.stop(), 10, 'stop');   // cancels the waiting get
      await run;
      took = Date.now() - begin;
      await pool.end();
    }
    assert.deepEqual(handled, ['slow']);
    assert.ok(worker.metrics.extensions > 0);
    assert.equal(worker.metrics.lostLeases, 0);
    assert.ok(took < 3000, `stop took ${took} ms`);
  });

  await t.test('a worker on one pg.Client polls no longer than a heartbeat', async () => {
    const pg = require('pg');
    const q = await freshQueue('node-worker-one-connection');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    const handled = [];
    const worker = slowWorker(own, q, handled);
    await client.put(q, 'slow');
    const finished = await runUntil([worker], async () => (await stats(q)).total === 0, 15);
    await connection.end();
    assert.ok(finished);
    assert.deepEqual(handled, ['slow']);
    assert.ok(worker.metrics.extensions > 0);
    assert.equal(worker.metrics.lostLeases, 0);
  });
});
