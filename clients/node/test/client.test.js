'use strict';
// Every call of the client against the server, and every error type.
const test = require('node:test');
const assert = require('node:assert/strict');
const pg = require('pg');
const queue = require('..');
const { DSN, dsnWith, sql, freshQueue, stats, sleep, until } = require('./helpers');

const { Client, Message, Receipt, QueueError, ArgumentTypeError, ArgumentRangeError } = queue;

const near = (date, ms, tolerance = 2000) => Math.abs(date.getTime() - ms) <= tolerance;

// Asserts that fn rejects with the error type and SQLSTATE, and a cause.
async function rejectsWith(fn, Type, code) {
  await assert.rejects(fn, (err) => {
    assert.ok(err instanceof Type, `${err.name} is not ${Type.name}: ${err.message}`);
    assert.ok(err instanceof QueueError);
    assert.equal(err.code, code);
    return true;
  });
}

// Asserts that an error is one the client raised itself: Own (a subclass of
// Native, TypeError or RangeError), still an InvalidArgument and a
// QueueError to instanceof, with 22023 and no driver's error as its cause.
function clientSide(err, Native, Own) {
  assert.ok(err instanceof Native, `${err.name} is not a ${Native.name}: ${err.message}`);
  assert.equal(Object.getPrototypeOf(err), Own.prototype, `${err.name} is not ${Own.name}`);
  assert.equal(err.name, Own.name);
  assert.ok(err instanceof queue.InvalidArgument);
  assert.ok(err instanceof QueueError);
  assert.ok(!(err instanceof queue.MessageNotFound) && !(err instanceof queue.QueueNotFound));
  assert.equal(err.code, '22023');
  assert.equal(err.cause, undefined);
  return true;
}

async function rejectsClientSide(fn, Native, Own) {
  await assert.rejects(fn, (err) => clientSide(err, Native, Own));
}

test('client', async (t) => {
  const client = new Client(DSN);
  t.after(() => client.close());

  await t.test('put with every option', async () => {
    const q = await freshQueue('node-put');
    const before = Date.now();
    const r = await client.put(q, { order: 42 }, {
      delay: 30, ttl: 3600, headers: { kind: 'order' }, deduplicationId: 'order-42', priority: 7,
    });
    assert.ok(r instanceof Receipt);
    assert.equal(typeof r.messageId, 'string');
    assert.match(r.popReceipt, /^[0-9a-f-]{36}$/);
    assert.ok(near(r.visibleAt, before + 30000), `visible at ${r.visibleAt.toISOString()}`);
    assert.ok(near(r.expiresAt, before + 3600000), `expires at ${r.expiresAt.toISOString()}`);
    assert.equal(r.priority, 7);
    assert.equal(r.groupId, null);
    // the same deduplication id stores nothing and gives the first receipt
    const again = await client.put(q, { order: 42 }, { deduplicationId: 'order-42' });
    assert.equal(again.messageId, r.messageId);

    const grouped = await client.put(q, 'in a group', { groupId: 'customer-7', ttl: -1 });
    assert.equal(grouped.groupId, 'customer-7');
    assert.equal(grouped.expiresAt, null, 'ttl -1: never expires');

    const rows = await client.inspect(q);
    const stored = rows.find((row) => row.messageId === r.messageId);
    assert.equal(stored.body, '{"order":42}', 'a body that is no string is stored as JSON');
    assert.deepEqual(stored.headers, { kind: 'order' });
    assert.equal(stored.state, 'delayed');
    assert.equal(stored.priority, 7);
    assert.equal(rows.length, 2);
    const [got] = await client.get(q);
    assert.equal(got.body, 'in a group');
  });

  await t.test('putBatch with every array', async () => {
    const q = await freshQueue('node-put-batch');
    const receipts = await client.putBatch(q, ['a', { b: 2 }, 'c'], {
      ttl: 600,
      headers: [{ n: 1 }, null, { n: 3 }],
      groupIds: ['g1', null, 'g1'],
      deduplicationIds: ['d1', 'd2', null],
      priorities: [1, 2, 3],
    });
    assert.equal(receipts.length, 3);
    assert.ok(receipts.every((r) => r instanceof Receipt));
    assert.deepEqual(receipts.map((r) => r.priority), [1, 2, 3]);
    assert.deepEqual(receipts.map((r) => r.groupId), ['g1', null, 'g1']);
    const rows = await client.inspect(q);
    const byId = new Map(rows.map((row) => [row.messageId, row]));
    assert.deepEqual(receipts.map((r) => byId.get(r.messageId).body), ['a', '{"b":2}', 'c']);
    assert.deepEqual(receipts.map((r) => byId.get(r.messageId).headers), [{ n: 1 }, null, { n: 3 }]);
    assert.equal(byId.get(receipts[2].messageId).state, 'waiting', 'behind the first of its group');
    // a repeated deduplication id gives the first put's receipt
    const [repeat] = await client.putBatch(q, ['a again'], { deduplicationIds: ['d1'] });
    assert.equal(repeat.messageId, receipts[0].messageId);

    const before = Date.now();
    const delayed = await client.putBatch(q, ['x', 'y'], { delay: 60 });
    assert.ok(delayed.every((r) => near(r.visibleAt, before + 60000)));
    assert.deepEqual(await stats(q), { visible: 2, inFlight: 0, delayed: 3, total: 5 });
  });

  await t.test('a put without delay waits the queue\'s delay; a delay given, 0 too, is the put\'s own', async () => {
    const q = await freshQueue('node-queue-delay');
    await client.alterQueue(q, { delay: 60 });
    const span = (r) => r.visibleAt.getTime() - r.insertedAt.getTime();
    const held = await client.put(q, 'held');
    assert.equal(span(held), 60000);
    const atOnce = await client.put(q, 'at once', { delay: 0 });
    assert.equal(span(atOnce), 0);
    const own = await client.put(q, 'own', { delay: 5, ttl: 600 });
    assert.equal(span(own), 5000);
    const nulled = await client.put(q, 'null delay', { delay: null });
    assert.equal(span(nulled), 60000, 'delay null: the queue\'s');
    const batch = await client.putBatch(q, ['b1', 'b2'], { ttl: 600 });
    assert.deepEqual(batch.map(span), [60000, 60000]);
    assert.deepEqual(batch.map((r) => r.expiresAt.getTime() - r.insertedAt.getTime()), [600000, 600000]);
    const batchAtOnce = await client.putBatch(q, ['b3'], { delay: 0 });
    assert.deepEqual(batchAtOnce.map(span), [0]);
    // a message of a group waits for its turn, not for the queue's delay
    const grouped = await client.put(q, 'grouped', { groupId: 'g' });
    assert.equal(span(grouped), 0);
    const states = Object.fromEntries((await client.inspect(q)).map((row) => [row.body, row.state]));
    assert.deepEqual(states, {
      held: 'delayed', 'at once': 'visible', own: 'delayed', 'null delay': 'delayed', b1: 'delayed', b2: 'delayed',
      b3: 'visible', grouped: 'visible',
    });
    assert.deepEqual((await client.get(q, { maxMessages: 10 })).map((m) => m.body).sort(), ['at once', 'b3', 'grouped']);
    await client.alterQueue(q, { delay: 0 });
    assert.equal(span(await client.put(q, 'plain')), 0);
    assert.deepEqual((await client.putBatch(q, ['plain batch'])).map(span), [0]);
  });

  await t.test('a put or updateBatch names only what it is given (extension 1.3 to 1.5 have no more)', async () => {
    const calls = [];
    // a statement comes as a prepared statement's { name, text, values }
    const recorder = new Client({
      query: async ({ text, values }) => {
        calls.push({ text, values });
        return { rows: [{ message_id: '1', pop_receipt: null, status: 'updated' }], fields: [] };
      },
    }, { schema: 'queue' });
    const message = { queue: 'node-a', messageId: '1', popReceipt: null };
    await recorder.put('node-a', 'x');
    await recorder.putBatch('node-a', ['x']);
    await recorder.updateBatch([message], 10);
    await recorder.updateBatch([message], 10, { keepPopReceipts: false });
    await recorder.alterQueue('node-a', { messageTtl: 5 });
    for (const { text } of calls) {
      assert.doesNotMatch(text, /visibility_timeout|keep|true|delay|poison_queue|attributes|tags/, text);
    }
    assert.deepEqual(calls.map(({ values }) => values.length), [7, 7, 4, 4, 2]);
    calls.length = 0;
    await recorder.put('node-a', 'x', { delay: 0 });
    await recorder.updateBatch([message], 10, { keepPopReceipts: true });
    assert.deepEqual(calls.map(({ values }) => values.length), [8, 4]);
    assert.match(calls[1].text, /, true\)$/);
  });

  await t.test('get with maxMessages, visibilityTimeout and wait', async () => {
    const q = await freshQueue('node-get');
    await client.putBatch(q, ['1', '2', '3', '4']);
    const before = Date.now();
    const got = await client.get(q, { maxMessages: 3, visibilityTimeout: 120 });
    assert.equal(got.length, 3);
    for (const m of got) {
      assert.ok(m instanceof Message);
      assert.equal(m.queue, q);
      assert.equal(m.dequeueCount, 1);
      assert.ok(near(m.visibleAt, before + 120000), `lease until ${m.visibleAt.toISOString()}`);
    }
    assert.deepEqual((await client.get(q, { maxMessages: 10 })).map((m) => m.body), ['4']);

    // nothing visible: the wait ends empty ...
    let start = Date.now();
    assert.deepEqual(await client.get(q, { wait: 0.5 }), []);
    assert.ok(Date.now() - start >= 400, `waited ${Date.now() - start} ms`);
    // ... or with a message put meanwhile
    start = Date.now();
    const waiting = client.get(q, { wait: 10 });
    await sleep(0.3);
    await sql('SELECT queue.queue_put($1, $2)', [q, 'late']);
    const [late] = await waiting;
    assert.equal(late.body, 'late');
    assert.ok(Date.now() - start < 5000, `woke after ${Date.now() - start} ms`);
  });

  await t.test('get with releaseOnDisconnect: the lease ends with the connection', async () => {
    const q = await freshQueue('node-get-release');
    await client.put(q, 'held');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    const [m] = await own.get(q, { releaseOnDisconnect: true, visibilityTimeout: 600 });
    assert.equal(m.body, 'held');
    await connection.end();
    assert.ok(await until(async () => (await stats(q)).visible === 1, 10),
      'visible again after the disconnect');
  });

  await t.test('firstDequeuedAt: null until the first get, then kept', async () => {
    const q = await freshQueue('node-first-dequeued');
    await client.put(q, 'once');
    const [peeked] = await client.peek(q);
    assert.equal(peeked.firstDequeuedAt, null);
    const [first] = await client.get(q);
    assert.ok(first.firstDequeuedAt instanceof Date);
    assert.ok(first.firstDequeuedAt >= first.insertedAt);
    await client.update(first, 0);
    const [again] = await client.get(q);
    assert.equal(again.dequeueCount, 2);
    assert.equal(again.firstDequeuedAt.getTime(), first.firstDequeuedAt.getTime());
  });

  await t.test('json() parses the body', async () => {
    const q = await freshQueue('node-json');
    await client.put(q, { a: [1, 2], b: 'x' });
    const [m] = await client.get(q);
    assert.deepEqual(m.json(), { a: [1, 2], b: 'x' });
  });

  await t.test('update refreshes the receipt; the old one gives ReceiptMismatch', async () => {
    const q = await freshQueue('node-update');
    await client.put(q, 'v1', { headers: { v: 1 } });
    const [m] = await client.get(q, { visibilityTimeout: 30 });
    const old = { ...m };
    const before = Date.now();
    const same = await client.update(m, 300, { body: { v: 2 }, headers: { v: 2 } });
    assert.equal(same, m, 'returns the message it refreshed');
    assert.notEqual(m.popReceipt, old.popReceipt);
    assert.ok(near(m.visibleAt, before + 300000));
    assert.equal(m.body, '{"v":2}');
    assert.deepEqual(m.headers, { v: 2 });
    const [row] = await client.inspect(q);
    assert.equal(row.body, '{"v":2}');
    assert.deepEqual(row.headers, { v: 2 });
    await rejectsWith(() => client.update(old, 10), queue.ReceiptMismatch, 'QU409');
    await rejectsWith(() => client.delete(old), queue.ReceiptMismatch, 'QU409');
    // 0 releases it, dequeue count kept
    await client.update(m, 0);
    const [back] = await client.get(q);
    assert.equal(back.messageId, m.messageId);
    assert.equal(back.dequeueCount, 2);
  });

  await t.test('delete, and MessageNotFound after it', async () => {
    const q = await freshQueue('node-delete');
    await client.put(q, 'x');
    const [m] = await client.get(q);
    await client.delete(m);
    assert.equal((await stats(q)).total, 0);
    await rejectsWith(() => client.delete(m), queue.MessageNotFound, 'QU404');
    // an id given as a number works too
    const r = await client.put(q, 'y');
    await client.delete({ queue: q, messageId: Number(r.messageId), popReceipt: r.popReceipt });
    assert.equal((await stats(q)).total, 0);
  });

  await t.test('deleteBatch and updateBatch give a status per message', async () => {
    const q = await freshQueue('node-batch');
    await client.putBatch(q, ['a', 'b', 'c', 'd']);
    const [a, b, c, d] = await client.get(q, { maxMessages: 4, visibilityTimeout: 60 });
    const staleB = { ...b };
    await client.update(b, 60);
    await client.delete(c);

    const before = Date.now();
    const oldD = d.popReceipt;
    const updated = await client.updateBatch([a, staleB, c, d], 200);
    assert.deepEqual(updated.map((r) => r.status), ['updated', 'pop_receipt_mismatch', 'not_found', 'updated']);
    assert.deepEqual(updated.map((r) => r.messageId), [a, b, c, d].map((m) => m.messageId));
    assert.notEqual(d.popReceipt, oldD, 'the receipt of an updated message is refreshed');
    assert.ok(near(d.visibleAt, before + 200000));

    const deleted = await client.deleteBatch([a, staleB, c, d]);
    assert.deepEqual(deleted.map((r) => r.status), ['deleted', 'pop_receipt_mismatch', 'not_found', 'deleted']);
    assert.deepEqual(await stats(q), { visible: 0, inFlight: 1, delayed: 0, total: 1 });
    assert.deepEqual(await client.deleteBatch([]), []);
  });

  await t.test('release and releaseBatch follow the queue\'s retry policy; createQueue and alterQueue set it', async () => {
    const q = 'node-release';
    for (const name of [q, `${q}-poison`]) if ((await client.listQueues()).some((r) => r.queue === name)) await client.dropQueue(name);
    await client.createQueue(q, { maxDequeueCount: 2, retryDelay: 60 });
    await client.alterQueue(q, { retryDelay: 30, retryBackoff: true, retryDelayMax: 100 });
    const info = (await client.listQueues()).find((r) => r.queue === q);
    assert.deepEqual([info.retryDelay, info.retryBackoff, info.retryDelayMax, info.paused], [30, true, 100, false]);
    await client.putBatch(q, ['a', 'b']);
    const [a, b] = await client.get(q, { maxMessages: 2 });
    const staleA = { ...a };
    const before = Date.now();
    await client.release(a);
    assert.notEqual(a.popReceipt, staleA.popReceipt);
    assert.ok(a.visibleAt - before > 20000, 'visible again after the retry delay');
    await rejectsWith(() => client.release(staleA), queue.ReceiptMismatch, 'QU409');
    assert.deepEqual((await client.releaseBatch([b, staleA])).map((r) => r.status), ['released', 'pop_receipt_mismatch']);
    assert.deepEqual(await client.get(q), []);
    await client.updateBatch([a, b], 0);
    const again = await client.get(q, { maxMessages: 2 });
    assert.deepEqual((await client.releaseBatch(again)).map((r) => r.status), ['poisoned', 'poisoned']);
    assert.deepEqual(again.map((m) => m.popReceipt), [null, null]);
    assert.equal((await stats(`${q}-poison`)).visible, 2);
  });

  await t.test('pause and resume', async () => {
    const q = await freshQueue('node-pause');
    await client.put(q, 'held back');
    await client.pause(q);
    assert.equal((await client.listQueues()).find((r) => r.queue === q).paused, true);
    assert.deepEqual(await client.get(q, { wait: 0.2 }), []);
    assert.equal((await client.peek(q)).length, 1);
    await client.resume(q);
    assert.deepEqual((await client.get(q)).map((m) => m.body), ['held back']);
  });

  // extension 1.9: retention and replay
  const listed = async (q) => (await client.listQueues()).find((row) => row.queue === q);
  const states = async (q) => (await client.inspect(q)).map((row) => [row.messageId, row.state, row.deletedAt instanceof Date]);

  await t.test('a queue with retention keeps a deleted message: inspect shows it deleted, get and peek do not; replay by id', async () => {
    const q = await freshQueue('node-retention', { retention: '1 hour' });
    assert.equal((await listed(q)).retention, 3600);
    const [kept, live] = await client.putBatch(q, ['kept', 'live'], { headers: [{ h: 1 }, null] });
    const [got] = await client.get(q);
    assert.equal(got.messageId, kept.messageId);
    await client.delete(got);
    const rows = await client.inspect(q);
    assert.deepEqual(await states(q), [[kept.messageId, 'deleted', true], [live.messageId, 'visible', false]]);
    assert.equal(rows[1].deletedAt, null);
    assert.deepEqual([rows[0].body, rows[0].headers], ['kept', { h: 1 }]);
    // never handed out, peeked or counted
    assert.deepEqual((await client.peek(q, { maxMessages: 10 })).map((m) => m.body), ['live']);
    assert.equal((await client.stats(q)).total, 1);
    assert.deepEqual((await client.get(q, { maxMessages: 10 })).map((m) => m.body), ['live']);
    assert.deepEqual(await client.get(q, { maxMessages: 10 }), []);

    assert.equal(await client.replay(q, { messageIds: [kept.messageId] }), 1);
    assert.deepEqual((await states(q))[0], [kept.messageId, 'visible', false]);
    assert.equal(await client.replay(q, { messageIds: [Number(kept.messageId)] }), 0, 'no longer kept');
    const [back] = await client.get(q);
    assert.deepEqual([back.messageId, back.body, back.headers, back.dequeueCount], [kept.messageId, 'kept', { h: 1 }, 1]);
    assert.ok(back.expiresAt instanceof Date, 'a new expiry from the queue\'s message_ttl');
  });

  await t.test('replay by time range: since included, until not, the oldest deletion first; deleteBatch and deleteAndGet keep too', async () => {
    const q = await freshQueue('node-retention-range', { retention: '1 hour' });
    const receipts = await client.putBatch(q, ['a', 'b', 'c', 'd']);
    const [a, b, c, d] = await client.get(q, { maxMessages: 4 });
    // apart by more than the millisecond a Date keeps of a timestamp
    await client.delete(a);
    await sleep(0.02);
    await client.deleteBatch([b]);
    await sleep(0.02);
    await client.delete(c);
    assert.deepEqual((await client.deleteAndGet(q, [d])).deleted.map((r) => r.status), ['deleted']);
    const deletedAt = Object.fromEntries((await client.inspect(q)).map((row) => [row.body, row.deletedAt]));
    assert.deepEqual((await states(q)).map(([, state]) => state), ['deleted', 'deleted', 'deleted', 'deleted']);
    assert.ok(deletedAt.a < deletedAt.b && deletedAt.b < deletedAt.c, JSON.stringify(deletedAt));
    assert.equal((await stats(q)).total, 0);

    assert.equal(await client.replay(q, { since: deletedAt.b, until: deletedAt.c }), 1);
    assert.deepEqual((await client.peek(q, { maxMessages: 10 })).map((m) => m.body), ['b']);
    assert.equal(await client.replay(q, { since: deletedAt.a, maxMessages: 1 }), 1);
    assert.deepEqual((await client.peek(q, { maxMessages: 10 })).map((m) => m.body).sort(), ['a', 'b']);
    assert.equal(await client.replay(q, { until: deletedAt.a }), 0, 'nothing deleted before a');
    assert.equal(await client.replay(q), 2);
    const got = (await client.get(q, { maxMessages: 10 })).sort((x, y) => Number(x.messageId) - Number(y.messageId));
    assert.deepEqual(got.map((m) => [m.messageId, m.dequeueCount]), receipts.map((r) => [r.messageId, 1]), 'the same ids, handed out anew');
  });

  await t.test('a queue without retention keeps nothing', async () => {
    const q = await freshQueue('node-no-retention');
    assert.equal((await listed(q)).retention, null);
    await client.put(q, 'gone');
    const [m] = await client.get(q);
    await client.delete(m);
    assert.deepEqual(await client.inspect(q), []);
    assert.equal(await client.replay(q), 0);
    assert.equal(await client.replay(q, { messageIds: [m.messageId] }), 0);
    assert.deepEqual(await client.get(q), []);
    const zero = await freshQueue('node-zero-retention');
    await client.alterQueue(zero, { retention: 0 });
    assert.equal((await listed(zero)).retention, null, '0: not kept');
  });

  await t.test('createQueue and alterQueue set the retention; null leaves it, 0 stops it', async () => {
    const q = 'node-alter-retention';
    await sql("SELECT queue.queue_drop(queue) FROM queue.queue_list() WHERE queue IN ('node-alter-retention', 'node-alter-retention-poison')");
    await client.createQueue(q, { retention: 90 });
    assert.equal((await listed(q)).retention, 90);
    await client.alterQueue(q, { retention: 120 });
    await client.alterQueue(q, { visibilityTimeout: 10, retention: null });
    assert.equal((await listed(q)).retention, 120, 'null leaves it');
    await client.put(q, 'x');
    await client.delete((await client.get(q))[0]);
    assert.deepEqual((await states(q)).map(([, state]) => state), ['deleted']);
    // 0 keeps no more; the background worker removes what was kept
    await client.alterQueue(q, { retention: 0 });
    assert.equal((await listed(q)).retention, null);
    assert.ok(await until(async () => (await client.inspect(q)).length === 0, 30), 'removed by the background worker');
    assert.equal(await client.replay(q), 0);
  });

  await t.test('what replay and the retention refuse', async () => {
    const q = await freshQueue('node-retention-errors', { retention: '1 hour' });
    const now = new Date();
    for (const call of [
      () => client.replay(q, { maxMessages: 0 }),
      () => client.replay(q, { since: now, until: now }),
      () => client.replay(q, { since: now, until: new Date(now.getTime() - 1000) }),
      () => client.alterQueue(q, { retention: 366 * 86400 }),
      () => client.alterQueue(q, { retention: -1 }),
      () => client.createQueue('node-retention-too-long', { retention: 366 * 86400 }),
    ]) {
      await rejectsWith(call, queue.InvalidArgument, '22023');
    }
    await client.alterQueue(q, { retention: 365 * 86400 });
    assert.equal((await listed(q)).retention, 365 * 86400, 'at most 365 days');
    await rejectsWith(() => client.replay('node-no-such-queue'), queue.QueueNotFound, '42704');
    // checked by the client
    await rejectsClientSide(() => client.replay(q, { since: '2024-01-01' }), TypeError, ArgumentTypeError);
    await rejectsClientSide(() => client.replay(q, { messageIds: '1' }), TypeError, ArgumentTypeError);
    await rejectsClientSide(() => client.replay(q, { max: 1 }), TypeError, ArgumentTypeError);
    // replay needs manage: send, process and read are not enough
    await sql('DROP ROLE IF EXISTS node_replayer');
    await sql('CREATE ROLE node_replayer LOGIN');
    const replayer = new Client(dsnWith({ user: 'node_replayer' }));
    try {
      await sql('GRANT USAGE ON SCHEMA queue TO node_replayer');
      for (const permission of ['send', 'process', 'read']) await sql('SELECT queue.queue_grant($1, $2, $3)', [q, 'node_replayer', permission]);
      await replayer.put(q, 'y');
      await rejectsWith(() => replayer.replay(q), queue.PermissionDenied, '42501');
    } finally {
      await replayer.close();
      await sql('DROP OWNED BY node_replayer');
      await sql('DROP ROLE node_replayer');
    }
  });

  await t.test('updateBatch with keepPopReceipts keeps the receipts; a delete with them works', async () => {
    const q = await freshQueue('node-batch-keep');
    await client.putBatch(q, ['k1', 'k2', 'k3']);
    const got = await client.get(q, { maxMessages: 3, visibilityTimeout: 30 });
    const held = got.map((m) => ({ ...m }));
    const before = Date.now();
    const updated = await client.updateBatch(got, 300, { keepPopReceipts: true });
    assert.deepEqual(updated.map((r) => r.status), ['updated', 'updated', 'updated']);
    assert.deepEqual(got.map((m) => m.popReceipt), held.map((m) => m.popReceipt), 'the receipts stay');
    assert.ok(got.every((m) => near(m.visibleAt, before + 300000)), 'the leases are extended');
    await client.delete(held[0]);
    // once more with the copies, releasing them: still their receipts
    const released = await client.updateBatch(held.slice(1), 0, { keepPopReceipts: true });
    assert.deepEqual(released.map((r) => r.status), ['updated', 'updated']);
    assert.deepEqual(held.slice(1).map((m) => m.popReceipt), got.slice(1).map((m) => m.popReceipt));
    assert.deepEqual((await client.deleteBatch(held.slice(1))).map((r) => r.status), ['deleted', 'deleted']);
    assert.equal((await stats(q)).total, 0);
    // without it, a new receipt, and the old one is refused
    await client.put(q, 'k4');
    const [m] = await client.get(q);
    const old = { ...m };
    assert.equal((await client.updateBatch([m], 60, { keepPopReceipts: false }))[0].status, 'updated');
    assert.notEqual(m.popReceipt, old.popReceipt);
    await rejectsWith(() => client.delete(old), queue.ReceiptMismatch, 'QU409');
    await client.delete(m);
  });

  await t.test('batches of messages of different queues are refused without a call', async () => {
    let calls = 0;
    const offline = new Client({ query: async () => { calls += 1; throw new Error('no server here'); } }, { schema: 'queue' });
    const mixed = [{ queue: 'node-a', messageId: '1', popReceipt: null }, { queue: 'node-b', messageId: '2', popReceipt: null }];
    await rejectsClientSide(() => offline.deleteBatch(mixed), RangeError, ArgumentRangeError);
    await rejectsClientSide(() => offline.updateBatch(mixed, 10), RangeError, ArgumentRangeError);
    assert.equal(calls, 0);
  });

  await t.test('arguments of the wrong type are TypeErrors, refused without a call', async () => {
    let calls = 0;
    const offline = new Client({ query: async () => { calls += 1; throw new Error('no server here'); } }, { schema: 'queue' });
    const message = { queue: 'node-a', messageId: '1', popReceipt: null };
    const wrong = [
      () => offline.put('node-a', 'x', { delay: '5' }),
      () => offline.put('node-a', 'x', { ttl: true }),
      () => offline.put('node-a', 'x', { group_id: 'g' }),
      () => offline.put('node-a', 'x', 'not options'),
      () => offline.putBatch('node-a', 'not an array'),
      () => offline.putBatch('node-a', ['x'], { groupIds: 'g' }),
      () => offline.get('node-a', { wait: '1' }),
      () => offline.get('node-a', [1]),
      () => offline.update(message, '30'),
      () => offline.updateBatch([message], { seconds: 30 }),
      () => offline.deleteBatch('not an array'),
      () => offline.createQueue('node-a', { messageTtl: '60' }),
      () => offline.alterQueue('node-a', { colour: 'red' }),
    ];
    for (const call of wrong) await rejectsClientSide(call, TypeError, ArgumentTypeError);
    assert.equal(calls, 0);
    assert.throws(() => new Client(42), (err) => clientSide(err, TypeError, ArgumentTypeError));
    assert.throws(() => new Client(DSN, 'queue'), (err) => clientSide(err, TypeError, ArgumentTypeError));
  });

  await t.test('peek shows messages without a receipt and changes nothing', async () => {
    const q = await freshQueue('node-peek');
    await client.putBatch(q, ['p1', 'p2']);
    const seen = await client.peek(q, { maxMessages: 5 });
    assert.deepEqual(seen.map((m) => m.body), ['p1', 'p2']);
    assert.ok(seen.every((m) => m instanceof Message && m.popReceipt === null && m.dequeueCount === 0));
    assert.deepEqual(await stats(q), { visible: 2, inFlight: 0, delayed: 0, total: 2 });
  });

  await t.test('inspect shows every state', async () => {
    const q = await freshQueue('node-inspect');
    await client.putBatch(q, ['one', 'two']);
    await client.put(q, 'later', { delay: 60 });
    await client.get(q);
    const rows = await client.inspect(q, { maxMessages: 10 });
    assert.deepEqual(rows.map((row) => row.state).sort(), ['delayed', 'in_flight', 'visible']);
    assert.ok(rows.every((row) => typeof row.messageId === 'string' && !('popReceipt' in row)));
    assert.equal((await client.inspect(q, { maxMessages: 1 })).length, 1);
  });

  await t.test('inspect pages with afterMessageId, passed only when given', async () => {
    const q = await freshQueue('node-inspect-pages');
    const ids = (await client.putBatch(q, ['1', '2', '3', '4', '5'])).map((r) => r.messageId);
    const first = await client.inspect(q, { maxMessages: 2 });
    assert.deepEqual(first.map((row) => row.messageId), ids.slice(0, 2));
    const second = await client.inspect(q, { maxMessages: 2, afterMessageId: first[1].messageId });
    assert.deepEqual(second.map((row) => row.messageId), ids.slice(2, 4));
    const rest = await client.inspect(q, { afterMessageId: Number(second[1].messageId) });
    assert.deepEqual(rest.map((row) => row.messageId), ids.slice(4));
    assert.deepEqual(await client.inspect(q, { afterMessageId: ids[4] }), []);

    // without the option the call has two arguments, as before 1.4
    const calls = [];
    const recorder = new Client({ query: async ({ values }) => { calls.push(values); return { rows: [], fields: [] }; } },
      { schema: 'queue' });
    await recorder.inspect(q, { maxMessages: 5 });
    await recorder.inspect(q, { afterMessageId: null });
    await recorder.inspect(q, { afterMessageId: '7' });
    assert.deepEqual(calls, [[q, 5], [q, null], [q, null, '7']]);
  });

  await t.test('stats of one queue and of all', async () => {
    const q = await freshQueue('node-stats');
    await client.putBatch(q, ['1', '2', '3']);
    await client.get(q);
    const s = await client.stats(q);
    assert.equal(s.queue, q);
    assert.equal(s.visible, 2);
    assert.equal(s.inFlight, 1);
    assert.equal(s.total, 3);
    assert.equal(typeof s.oldestVisibleAge, 'number');
    // the counters can lag for a moment while the server's sweep saves them
    assert.ok(await until(async () => {
      const { puts, gets } = await client.stats(q);
      return puts === 3 && gets === 1;
    }, 5), JSON.stringify(await client.stats(q)));
    const all = await client.stats();
    assert.ok(Array.isArray(all));
    assert.equal(all.find((row) => row.queue === q).total, 3);
  });

  await t.test('createQueue, listQueues, alterQueue, dropQueue', async () => {
    const q = 'node-settings';
    await sql("SELECT queue.queue_drop(queue) FROM queue.queue_list() WHERE queue IN ('node-settings', 'node-settings-poison')");
    await client.createQueue(q, {
      visibilityTimeout: 45, messageTtl: 7200, maxDequeueCount: 3, maxMessageSize: 2048, deduplicationWindow: 120,
    });
    let info = (await client.listQueues()).find((row) => row.queue === q);
    assert.deepEqual({ ...info, createdAt: null }, {
      queue: q, visibilityTimeout: 45, messageTtl: 7200, maxDequeueCount: 3, maxMessageSize: 2048,
      poisonQueue: `${q}-poison`, createdAt: null, delay: 0, attributes: {}, tags: {},
      retryDelay: 0, retryBackoff: false, retryDelayMax: null, paused: false, retention: null,
    });
    assert.ok(info.createdAt instanceof Date);
    // queue_list does not show it: read from the storage (the tests run as its owner)
    const [{ window }] = await sql(
      'SELECT extract(epoch FROM deduplication_window)::int AS window FROM queue_storage.queues WHERE name = $1', [q]);
    assert.equal(window, 120);

    await client.alterQueue(q, { visibilityTimeout: 5, messageTtl: -1 });
    info = (await client.listQueues()).find((row) => row.queue === q);
    assert.equal(info.visibilityTimeout, 5);
    assert.equal(info.messageTtl, null, 'messageTtl -1: never expires');
    assert.equal(info.maxDequeueCount, 3, 'a setting left out stays');

    await client.dropQueue(q);
    await client.dropQueue(`${q}-poison`);
    assert.equal((await client.listQueues()).some((row) => row.queue.startsWith(q)), false);

    // defaults, and maxDequeueCount null: no poison queue
    await client.createQueue(q, { maxDequeueCount: null });
    info = (await client.listQueues()).find((row) => row.queue === q);
    assert.equal(info.visibilityTimeout, 30);
    assert.equal(info.maxDequeueCount, null);
    assert.equal(info.poisonQueue, null);
    await client.dropQueue(q);

    await rejectsClientSide(() => client.createQueue(q, { visibility_timeout: 5 }), TypeError, ArgumentTypeError);
    await rejectsClientSide(() => client.alterQueue(q, { color: 'red' }), TypeError, ArgumentTypeError);
    await rejectsClientSide(() => client.put(q, 'x', { visibilityTimeout: 5 }), TypeError, ArgumentTypeError);
    assert.equal((await client.listQueues()).some((row) => row.queue === q), false, 'the refused create made nothing');
  });

  await t.test('alterQueue sets delay, poisonQueue, attributes and tags, shown by listQueues; createQueue refuses them', async () => {
    const q = await freshQueue('node-alter-16');
    const dlq = await freshQueue('node-alter-16-dlq', { max_dequeue_count: null });
    const listed = async () => (await client.listQueues()).find((row) => row.queue === q);
    let info = await listed();
    assert.deepEqual([info.delay, info.attributes, info.tags], [0, {}, {}]);
    await client.alterQueue(q, {
      delay: 45, poisonQueue: dlq, attributes: { Policy: '{"a": 1}', kept: 'yes' }, tags: { team: 'billing', env: 'test' },
    });
    info = await listed();
    assert.equal(info.delay, 45);
    assert.equal(info.poisonQueue, dlq);
    assert.deepEqual(info.attributes, { Policy: '{"a": 1}', kept: 'yes' });
    assert.deepEqual(info.tags, { team: 'billing', env: 'test' });
    // merged in, a key set to null removed; a setting left out or null stays
    await client.alterQueue(q, { attributes: { kept: null, added: '1' }, tags: { env: null }, delay: null, poisonQueue: null });
    info = await listed();
    assert.deepEqual(info.attributes, { Policy: '{"a": 1}', added: '1' });
    assert.deepEqual(info.tags, { team: 'billing' });
    assert.deepEqual([info.delay, info.poisonQueue, info.visibilityTimeout, info.maxDequeueCount], [45, dlq, 30, 5]);
    // the poison queue named takes a message at its last delivery
    await client.alterQueue(q, { maxDequeueCount: 1, delay: 0 });
    await client.put(q, 'poisoned');
    const [m] = await client.get(q);
    await client.update(m, 0);
    assert.deepEqual((await client.inspect(dlq)).map((row) => row.body), ['poisoned']);
    assert.equal((await stats(q)).total, 0);
    // what the server refuses
    await rejectsWith(() => client.alterQueue(q, { tags: { n: 1 } }), queue.InvalidArgument, '22023');
    await rejectsWith(() => client.alterQueue(q, { poisonQueue: 'node-no-such-queue' }), queue.QueueNotFound, '42704');
    assert.deepEqual((await listed()).tags, { team: 'billing' });
    // queue_create has none of them: refused before any call
    const name = 'node-create-16';
    for (const settings of [{ delay: 5 }, { poisonQueue: dlq }, { attributes: { a: '1' } }, { tags: { t: '1' } }]) {
      await rejectsClientSide(() => client.createQueue(name, settings), TypeError, ArgumentTypeError);
    }
    assert.equal((await client.listQueues()).some((row) => row.queue === name), false, 'no queue was made');
  });

  await t.test('on extension 1.5: the calls that name nothing of 1.6 work, and the worker without queue_delete_and_get', async () => {
    const database = `node_old_${process.pid}_${Date.now()}`;
    await sql(`CREATE DATABASE "${database}"`);
    const setup = new pg.Client({ connectionString: dsnWith({ database }) });
    setup.on('error', () => {});
    const old = new Client(dsnWith({ database }));
    try {
      await setup.connect();
      await setup.query('CREATE SCHEMA queue');
      await setup.query("CREATE EXTENSION queue VERSION '1.5' SCHEMA queue");
      await setup.end();
      const span = (r) => r.visibleAt.getTime() - r.insertedAt.getTime();
      await old.createQueue('old', { visibilityTimeout: 30 });
      assert.equal(span(await old.put('old', 'one')), 0);
      assert.equal(span(await old.put('old', 'later', { delay: 60, ttl: 120 })), 60000);
      assert.deepEqual((await old.putBatch('old', ['two', 'three'], { ttl: 600 })).map(span), [0, 0]);
      assert.deepEqual((await old.putBatch('old', ['later too'], { delay: 60 })).map(span), [60000]);
      const got = await old.get('old', { maxMessages: 10 });
      assert.deepEqual(got.map((m) => m.body).sort(), ['one', 'three', 'two']);
      assert.deepEqual(got.map((m) => m.firstDequeuedAt), [null, null, null], 'not kept before 1.6');
      const receipts = got.map((m) => m.popReceipt);
      assert.deepEqual((await old.updateBatch(got, 60)).map((r) => r.status), ['updated', 'updated', 'updated']);
      assert.ok(got.every((m, i) => m.popReceipt !== receipts[i]), 'new receipts');
      // keepPopReceipts needs 1.6: the function of 1.5 takes four arguments
      await rejectsWith(() => old.updateBatch(got, 60, { keepPopReceipts: true }), QueueError, '42883');
      assert.deepEqual((await old.deleteBatch(got)).map((r) => r.status), ['deleted', 'deleted', 'deleted']);
      await old.alterQueue('old', { visibilityTimeout: 10, maxDequeueCount: 2 });
      const info = (await old.listQueues()).find((row) => row.queue === 'old');
      assert.deepEqual([info.visibilityTimeout, info.maxDequeueCount, 'delay' in info], [10, 2, false]);
      await rejectsWith(() => old.alterQueue('old', { delay: 5 }), QueueError, '42883');
      assert.equal((await old.stats('old')).delayed, 2);
      // no queue_delete_and_get before 1.7: a worker gets and deletes apart
      await rejectsWith(() => old.deleteAndGet('old', []), QueueError, '42883');
      await old.putBatch('old', ['w1', 'w2', 'w3']);
      const handled = [];
      const worker = new queue.Worker(old, 'old', (m) => { handled.push(m.body); }, { logger: null });
      worker.start();
      await until(async () => (await old.stats('old')).total === 2, 10);
      await worker.stop();
      assert.deepEqual(handled.sort(), ['w1', 'w2', 'w3']);
      assert.equal(worker.metrics.processed, 3);
      // the update to 1.6 makes queue_list anew, with more columns: the
      // statement prepared on the connection is refused (0A000), prepared
      // again under a new name, and sent once more
      const connection = new pg.Client({ connectionString: dsnWith({ database }) });
      await connection.connect();
      const one = new Client(connection);
      assert.equal('delay' in (await one.listQueues())[0], false);
      await connection.query("ALTER EXTENSION queue UPDATE TO '1.6'");
      const [listed] = await one.listQueues();
      await connection.end();
      assert.equal(listed.delay, 0, 'the columns of 1.6');
    } finally {
      await setup.end().catch(() => {});
      await old.close();
      await sql(`DROP DATABASE "${database}" WITH (FORCE)`);
    }
  });

  await t.test('clear and redrive', async () => {
    const q = await freshQueue('node-redrive', { max_dequeue_count: 1 });
    await client.putBatch(q, ['a', 'b', 'c']);
    const got = await client.get(q, { maxMessages: 2 });
    // released at its last delivery: moved to the poison queue at once
    await client.updateBatch(got, 0);
    assert.equal((await stats(`${q}-poison`)).total, 2);
    assert.equal(await client.redrive(`${q}-poison`, { maxMessages: 1 }), 1);
    assert.equal(await client.redrive(`${q}-poison`, { destination: q }), 1);
    assert.deepEqual(await stats(q), { visible: 3, inFlight: 0, delayed: 0, total: 3 });
    assert.equal(await client.clear(q), 3);
    assert.equal((await stats(q)).total, 0);
  });

  await t.test('errors: QueueNotFound, QueueExists, InvalidArgument, MessageTooLarge', async () => {
    const q = await freshQueue('node-errors', { max_message_size: 50 });
    await rejectsWith(() => client.get('node-no-such-queue'), queue.QueueNotFound, '42704');
    await rejectsWith(() => client.createQueue(q), queue.QueueExists, '42710');
    await rejectsWith(() => client.get(q, { maxMessages: 0 }), queue.InvalidArgument, '22023');
    await rejectsWith(() => client.put(q, undefined), queue.InvalidArgument, '22004');   // null would be the JSON text null
    await rejectsWith(() => client.put(q, 'x'.repeat(100)), queue.MessageTooLarge, '54000');
    // what the server refuses keeps its SQLSTATE's type, and is no TypeError or RangeError
    for (const call of [() => client.get(q, { maxMessages: 0 }), () => client.put(q, 'x', { delay: -1 }),
      () => client.put(q, undefined)]) {
      const refused = await call().catch((e) => e);
      assert.equal(Object.getPrototypeOf(refused), queue.InvalidArgument.prototype, refused.message);
      assert.ok(!(refused instanceof TypeError) && !(refused instanceof RangeError), refused.name);
      assert.ok(refused.cause instanceof Error, 'the driver\'s error is the cause');
    }
    const err = await client.get('node-no-such-queue').catch((e) => e);
    assert.equal(err.cause.code, '42704', 'the driver\'s error is the cause');
    assert.match(err.message, /node-no-such-queue/);
  });

  await t.test('errors: PermissionDenied for a role without grants', async () => {
    const q = await freshQueue('node-perm');
    await sql('DROP ROLE IF EXISTS node_nobody');
    await sql('CREATE ROLE node_nobody LOGIN');
    const nobody = new Client(dsnWith({ user: 'node_nobody' }));
    try {
      await rejectsWith(() => nobody.put(q, 'x'), queue.PermissionDenied, '42501');
      await rejectsWith(() => nobody.get(q), queue.PermissionDenied, '42501');
    } finally {
      await nobody.close();
      await sql('DROP ROLE node_nobody');
    }
  });

  await t.test('errors: 55000 without the extension; a lost connection is the driver\'s error', async () => {
    const empty = new Client({ query: async () => ({ rows: [], fields: [] }) });
    await rejectsWith(() => empty.stats(), QueueError, '55000');

    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    connection.on('error', () => {});
    const own = new Client(connection);
    await own.stats();
    await sql('SELECT pg_terminate_backend($1)', [connection.processID]);
    await sleep(0.2);
    const err = await own.stats().catch((e) => e);
    assert.ok(err instanceof Error);
    assert.ok(!(err instanceof QueueError), `a lost connection gave ${err.name} ${err.code}`);
  });

  await t.test('the schema option, and a pg.Pool given is not closed', async () => {
    const pool = new pg.Pool({ connectionString: DSN, max: 2 });
    const named = new Client(pool, { schema: 'queue' });
    const q = await freshQueue('node-schema');
    await named.put(q, 'x');
    await named.close();
    assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1, 'the pool is still open');
    await pool.end();
    const wrong = new Client(DSN, { schema: 'no_such_schema' });
    await assert.rejects(() => wrong.stats(), QueueError);
    await wrong.close();
  });

  await t.test('statements are prepared once on their connection, unless prepare is false', async () => {
    const q = await freshQueue('node-prepare');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const prepared = new Client(connection);
    for (let i = 0; i < 3; i++) await prepared.put(q, `m${i}`);
    const got = await prepared.get(q, { maxMessages: 3 });
    assert.deepEqual(got.map((m) => m.body), ['m0', 'm1', 'm2']);
    await prepared.deleteBatch(got);
    const statements = (await connection.query(
      "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'queue\\_%' ORDER BY statement")).rows;
    assert.equal(statements.length, 3, JSON.stringify(statements));
    assert.deepEqual(statements.map((s) => /\.(queue_\w+)\(/.exec(s.statement)[1]), ['queue_delete_batch', 'queue_get', 'queue_put']);
    await connection.end();
    const plain = new pg.Client({ connectionString: DSN });
    await plain.connect();
    await new Client(plain, { prepare: false }).put(q, 'unprepared');
    assert.equal((await plain.query('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0].n, 0, 'none with prepare: false');
    await plain.end();
  });

  await t.test('a prepared statement the session lost is prepared again, outside a transaction of the caller', async () => {
    const q = await freshQueue('node-prepare-lost');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    await own.put(q, 'a');
    await connection.query('DEALLOCATE ALL');
    await own.put(q, 'b');   // 26000, then again under a new name
    // inside the caller's transaction the error aborted it: not sent again
    await own.put(q, 'c');
    await connection.query('BEGIN');
    await connection.query('DEALLOCATE ALL');
    await rejectsWith(() => own.put(q, 'never'), QueueError, '26000');
    await connection.query('ROLLBACK');
    await own.put(q, 'd');
    assert.deepEqual((await own.peek(q, { maxMessages: 10 })).map((m) => m.body), ['a', 'b', 'c', 'd']);
    await connection.end();

    // a pool's connection, taken for the call, is given back and used again
    const pool = new pg.Pool({ connectionString: DSN, max: 1 });
    const pooled = new Client(pool);
    await pooled.put(q, 'e');
    await pool.query('DEALLOCATE ALL');
    await pooled.put(q, 'f');
    assert.equal(pool.totalCount, 1);
    assert.equal((await pooled.stats(q)).total, 6);
    await pool.end();
  });

  await t.test('deleteAndGet deletes the messages done with and gets the next ones in one call', async () => {
    const q = await freshQueue('node-delete-and-get');
    await client.putBatch(q, ['a', 'b', 'c', 'd']);
    const first = await client.deleteAndGet(q, [], { maxMessages: 2, visibilityTimeout: 60 });
    assert.deepEqual(first.deleted, []);
    assert.deepEqual(first.messages.map((m) => m.body), ['a', 'b']);
    assert.ok(first.messages[0] instanceof Message);
    const forged = new Message(q, { message_id: first.messages[1].messageId, pop_receipt: '00000000-0000-0000-0000-000000000000' });
    const next = await client.deleteAndGet(q, [first.messages[0], forged], { maxMessages: 5 });
    assert.deepEqual(next.deleted, [
      { messageId: first.messages[0].messageId, status: 'deleted' },
      { messageId: first.messages[1].messageId, status: 'pop_receipt_mismatch' },
    ]);
    assert.deepEqual(next.messages.map((m) => [m.body, m.dequeueCount]), [['c', 1], ['d', 1]]);
    // with messages to delete it does not wait
    const started = Date.now();
    const last = await client.deleteAndGet(q, next.messages, { wait: 5 });
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.deepEqual(last.deleted.map((d) => d.status), ['deleted', 'deleted']);
    assert.deepEqual(last.messages, []);
    assert.equal((await client.stats(q)).deletes, 3);
    // each entry answered in its place: the same message twice
    await client.put(q, 'e');
    const [e] = (await client.deleteAndGet(q, [])).messages;
    const twice = await client.deleteAndGet(q, [e, e]);
    assert.deepEqual(twice.deleted, [{ messageId: e.messageId, status: 'deleted' }, { messageId: e.messageId, status: 'not_found' }]);
    const other = await freshQueue('node-delete-and-get-other');
    await rejectsClientSide(() => client.deleteAndGet(other, next.messages), RangeError, ArgumentRangeError);
    await rejectsClientSide(() => client.deleteAndGet(q, [], { max: 1 }), TypeError, ArgumentTypeError);
    await rejectsWith(() => client.deleteAndGet(q, [], { maxMessages: 0 }), queue.InvalidArgument, '22023');
  });

  await t.test('a client on a pg.Client in a transaction that rolls back leaves no message', async () => {
    const q = await freshQueue('node-transaction');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    await connection.query('BEGIN');
    await own.put(q, 'never');
    await own.putBatch(q, ['never', 'never']);
    assert.equal((await own.stats(q)).total, 3, 'seen inside the transaction');
    await connection.query('ROLLBACK');
    assert.equal((await stats(q)).total, 0);
    await connection.query('BEGIN');
    await own.put(q, 'kept');
    await connection.query('COMMIT');
    assert.deepEqual((await client.peek(q)).map((m) => m.body), ['kept']);
    await own.close();   // not ours: stays open
    assert.equal((await connection.query('SELECT 1 AS one')).rows[0].one, 1);
    await connection.end();
  });

  // extension 1.10: topics
  // A topic of that name, new, without subscriptions (topics share the
  // queues' names: a queue of the name is dropped too).
  async function freshTopic(name) {
    await sql('SELECT queue.queue_topic_drop(topic) FROM (SELECT DISTINCT topic FROM queue.queue_topics() WHERE topic = $1) t', [name]);
    await sql('SELECT queue.queue_drop(queue) FROM queue.queue_list() WHERE queue = $1', [name]);
    await client.createTopic(name);
    return name;
  }

  // A topic with three queues subscribed, in the order of their names:
  // billing (every message), eu (a prefix and a range) and us (a value;
  // 100 bytes at most).
  async function fanOut(name) {
    const topic = await freshTopic(name);
    const billing = await freshQueue(`${name}-1-billing`);
    const eu = await freshQueue(`${name}-2-eu`);
    const us = await freshQueue(`${name}-3-us`, { max_message_size: 100 });
    await client.subscribe(topic, billing);
    await client.subscribe(topic, eu, { region: [{ prefix: 'eu-' }], total: [{ numeric: ['>', 0] }] });
    await client.subscribe(topic, us, { region: ['us-east'] });
    return { topic, billing, eu, us };
  }

  const subscriptions = async (topic) => (await client.topics()).filter((row) => row.topic === topic)
    .map((row) => [row.queue, row.filter]);
  const bodies = async (q) => (await client.peek(q, { maxMessages: 10 })).map((m) => m.body);
  const queuesOf = (published) => published.map((p) => p.queue);

  await t.test('publish puts a message into each subscribed queue whose filter the headers match', async () => {
    const { topic, billing, eu, us } = await fanOut('node-topic');
    const rows = await client.topics();
    assert.deepEqual(rows.filter((row) => row.topic === topic), [
      { topic, queue: billing, filter: null },
      { topic, queue: eu, filter: { region: [{ prefix: 'eu-' }], total: [{ numeric: ['>', 0] }] } },
      { topic, queue: us, filter: { region: ['us-east'] } },
    ]);
    const published = await client.publish(topic, { id: 42 }, { headers: { region: 'eu-west', total: 120 } });
    assert.deepEqual(queuesOf(published), [billing, eu], 'us-east only: not us');
    for (const p of published) {
      assert.deepEqual(Object.keys(p), ['queue', 'messageId']);
      const [m] = await client.peek(p.queue);
      assert.deepEqual([m.messageId, m.body, m.headers], [p.messageId, '{"id":42}', { region: 'eu-west', total: 120 }]);
    }
    assert.deepEqual(await client.peek(us), []);
    // headers the filters do not match: the queue without a filter only
    assert.deepEqual(queuesOf(await client.publish(topic, 'ap', { headers: { region: 'ap-south', total: 5 } })), [billing]);
    assert.deepEqual(queuesOf(await client.publish(topic, 'us', { headers: { region: 'us-east' } })), [billing, us]);
    assert.deepEqual(queuesOf(await client.publish(topic, 'bare')), [billing], 'no headers: the filters need them');
    assert.deepEqual(await bodies(billing), ['{"id":42}', 'ap', 'us', 'bare']);
    assert.deepEqual(await bodies(eu), ['{"id":42}']);
    assert.deepEqual(await bodies(us), ['us']);
  });

  await t.test('publish puts as put would: each queue\'s delay, or the delay, ttl, group, priority and deduplication id given', async () => {
    const { topic, billing, eu } = await fanOut('node-topic-options');
    await client.alterQueue(eu, { delay: 30 });
    const headers = { region: 'eu-central', total: 1 };
    const plain = Object.fromEntries((await client.publish(topic, 'plain', { headers, ttl: -1 })).map((p) => [p.queue, p.messageId]));
    const row = async (q, id) => (await client.inspect(q)).find((r) => r.messageId === id);
    assert.deepEqual([(await row(billing, plain[billing])).state, (await row(eu, plain[eu])).state], ['visible', 'delayed']);
    assert.deepEqual([(await row(billing, plain[billing])).expiresAt, (await row(eu, plain[eu])).expiresAt], [null, null]);
    const published = await client.publish(topic, 'later', {
      headers, delay: 60, ttl: 120, deduplicationId: 'once', priority: 5,
    });
    assert.deepEqual(queuesOf(published), [billing, eu]);
    for (const p of published) {
      const r = await row(p.queue, p.messageId);
      assert.deepEqual([r.state, r.priority], ['delayed', 5]);
      assert.equal(r.visibleAt.getTime() - r.insertedAt.getTime(), 60000);
      assert.equal(r.expiresAt.getTime() - r.insertedAt.getTime(), 120000);
    }
    const again = await client.publish(topic, 'later again', { headers, deduplicationId: 'once' });
    assert.deepEqual(again, published, 'each queue gives the message it stored');
    // a group's message is never delayed: delay 0, in every queue's group
    const grouped = await client.publish(topic, 'grouped', { headers, delay: 0, groupId: 'g' });
    assert.deepEqual(queuesOf(grouped), [billing, eu]);
    for (const p of grouped) {
      const r = await row(p.queue, p.messageId);
      assert.deepEqual([r.state, r.groupId], ['visible', 'g']);
    }
  });

  await t.test('a publish in a transaction that rolls back leaves no message in any queue', async () => {
    const { topic, billing, eu } = await fanOut('node-topic-transaction');
    const connection = new pg.Client({ connectionString: DSN });
    await connection.connect();
    const own = new Client(connection);
    const headers = { region: 'eu-west', total: 10 };
    try {
      await connection.query('BEGIN');
      assert.equal((await own.publish(topic, 'rolled back', { headers })).length, 2);
      assert.equal((await own.stats(eu)).total, 1, 'seen inside the transaction');
      await connection.query('ROLLBACK');
      assert.deepEqual([await bodies(billing), await bodies(eu)], [[], []]);
      await connection.query('BEGIN');
      await own.publish(topic, 'committed', { headers });
      await connection.query('COMMIT');
      assert.deepEqual([await bodies(billing), await bodies(eu)], [['committed'], ['committed']]);
    } finally {
      await connection.end();
    }
  });

  await t.test('subscribe again replaces the filter; unsubscribe; a dropped queue or topic ends its subscriptions', async () => {
    const { topic, billing, eu, us } = await fanOut('node-topic-changes');
    await client.subscribe(topic, us, { region: ['eu-west'] });
    assert.deepEqual((await subscriptions(topic))[2], [us, { region: ['eu-west'] }]);
    await client.unsubscribe(topic, eu);
    await client.unsubscribe(topic, eu);   // none left: no error
    assert.deepEqual((await subscriptions(topic)).map(([q]) => q), [billing, us]);
    assert.deepEqual(queuesOf(await client.publish(topic, 'x', { headers: { region: 'eu-west', total: 1 } })), [billing, us]);
    // a topic without subscriptions: one row, queue null; a publish puts nothing
    const quiet = await freshTopic('node-topic-quiet');
    assert.deepEqual(await subscriptions(quiet), [[null, null]]);
    assert.deepEqual(await client.publish(quiet, 'nobody listens'), []);
    await client.dropQueue(us);
    assert.deepEqual((await subscriptions(topic)).map(([q]) => q), [billing]);
    // dropping the topic keeps the queues and their messages
    await client.dropTopic(topic);
    assert.deepEqual(await subscriptions(topic), []);
    assert.deepEqual(await bodies(billing), ['x']);
    await rejectsWith(() => client.publish(topic, 'x'), queue.QueueNotFound, '42704');
    await client.dropTopic(quiet);
  });

  await t.test('what topics refuse: bad filters (22023, the subscription kept), names taken, unknown names, a body too large for one queue', async () => {
    const { topic, billing, eu, us } = await fanOut('node-topic-errors');
    for (const bad of [{ region: 'us-east' }, { region: [] }, { region: [{ suffix: '-east' }] }, {},
      { total: [{ numeric: ['<', 5, '>', 1] }] }]) {
      await rejectsWith(() => client.subscribe(topic, us, bad), queue.InvalidArgument, '22023');
    }
    assert.deepEqual((await subscriptions(topic))[2], [us, { region: ['us-east'] }], 'a refused filter leaves the subscription');
    for (const call of [() => client.createTopic(topic), () => client.createTopic(billing), () => client.createQueue(topic)]) {
      await rejectsWith(call, queue.QueueExists, '42710');
    }
    for (const call of [() => client.publish('node-no-such-topic', 'x'), () => client.subscribe('node-no-such-topic', eu),
      () => client.subscribe(topic, 'node-no-such-queue'), () => client.dropTopic('node-no-such-topic')]) {
      await rejectsWith(call, queue.QueueNotFound, '42704');
    }
    await rejectsWith(() => client.publish(topic, 'x', { priority: 1000 }), queue.InvalidArgument, '22023');
    await rejectsClientSide(() => client.publish(topic, 'x', { delay: '5' }), TypeError, ArgumentTypeError);
    await rejectsClientSide(() => client.publish(topic, 'x', { group_id: 'g' }), TypeError, ArgumentTypeError);
    // us takes 100 bytes at most: the whole publish fails
    await rejectsWith(() => client.publish(topic, 'x'.repeat(200), { headers: { region: 'us-east' } }), queue.MessageTooLarge, '54000');
    assert.deepEqual(await bodies(billing), [], 'nothing put into billing either');
  });

  await t.test('send on a topic reaches its queues; without it, PermissionDenied', async () => {
    const { topic, billing, eu } = await fanOut('node-topic-grants');
    await sql('DROP ROLE IF EXISTS node_publisher');
    await sql('CREATE ROLE node_publisher LOGIN');
    const publisher = new Client(dsnWith({ user: 'node_publisher' }));
    try {
      await sql('GRANT USAGE ON SCHEMA queue TO node_publisher');
      await rejectsWith(() => publisher.publish(topic, 'x'), queue.PermissionDenied, '42501');
      assert.deepEqual(await publisher.topics(), []);
      await sql("SELECT queue.queue_grant($1, 'node_publisher', 'send')", [topic]);
      assert.deepEqual(queuesOf(await publisher.publish(topic, 'granted')), [billing]);
      assert.deepEqual([...new Set((await publisher.topics()).map((row) => row.topic))], [topic]);
      await rejectsWith(() => publisher.subscribe(topic, eu), queue.PermissionDenied, '42501');
      assert.deepEqual(await bodies(billing), ['granted']);
    } finally {
      await publisher.close();
      await sql('DROP OWNED BY node_publisher');
      await sql('DROP ROLE node_publisher');
    }
  });

  // extension 1.10: schedules
  const scheduled = async (name) => (await client.schedules()).find((row) => row.schedule === name);
  async function freshSchedule(name) {
    await sql('SELECT queue.queue_unschedule(schedule) FROM queue.queue_schedules() WHERE schedule = $1', [name]);
    return name;
  }

  await t.test('schedules lists a schedule with its next due time, as cronNext gives it; scheduled again it is replaced', async () => {
    const q = await freshQueue('node-schedules');
    const name = await freshSchedule('node-nightly');
    await client.schedule(name, q, '30 2 * * *', { report: 'daily' }, { headers: { kind: 'report' }, timeZone: 'Europe/Paris' });
    let now = new Date();
    let row = await scheduled(name);
    assert.deepEqual(Object.keys(row), ['schedule', 'queue', 'cron', 'timeZone', 'nextAt', 'lastAt']);
    assert.deepEqual([row.queue, row.cron, row.timeZone, row.lastAt], [q, '30 2 * * *', 'Europe/Paris', null]);
    assert.ok(row.nextAt instanceof Date);
    assert.equal(row.nextAt.getTime(), (await client.cronNext('30 2 * * *', now, 'Europe/Paris')).getTime());
    assert.ok(row.nextAt > now && row.nextAt - now <= 25 * 3600 * 1000, row.nextAt.toISOString());
    // the time zone is UTC unless given
    await client.schedule(name, q, '@hourly', 'tick');
    now = new Date();
    row = await scheduled(name);
    assert.deepEqual([row.cron, row.timeZone], ['@hourly', 'UTC']);
    assert.equal(row.nextAt.getTime(), (await client.cronNext('@hourly', now)).getTime());
    assert.equal(row.nextAt.getTime() % 3600000, 0, 'on the hour');
    assert.deepEqual(await client.peek(q), [], 'nothing put before it is due');
    await client.unschedule(name);
    assert.equal(await scheduled(name), undefined);
    await rejectsWith(() => client.unschedule(name), queue.QueueNotFound, '42704');
  });

  await t.test('cronNext: strictly after, on the wall clock of the time zone, across the changes of the clock', async () => {
    const at = (text) => new Date(text);
    const next = async (...args) => (await client.cronNext(...args)).toISOString();
    assert.equal(await next('0 * * * *', at('2026-11-27T10:00:00Z')), '2026-11-27T11:00:00.000Z', 'strictly after');
    assert.equal(await next('0 9 * * *', at('2026-11-27T00:00:00Z'), 'Asia/Tokyo'), '2026-11-28T00:00:00.000Z');
    // Paris, 29 March 2026: 02:30 never happens, due at 03:00 CEST
    assert.equal(await next('30 2 * * *', at('2026-03-28T12:00:00Z'), 'Europe/Paris'), '2026-03-29T01:00:00.000Z');
    // New York, 1 November 2026: 01:30 happens twice, due the first time only
    assert.equal(await next('30 1 * * *', at('2026-10-31T16:00:00Z'), 'America/New_York'), '2026-11-01T05:30:00.000Z');
    assert.equal(await next('30 1 * * *', at('2026-11-01T05:30:00Z'), 'America/New_York'), '2026-11-02T06:30:00.000Z');
    await rejectsClientSide(() => client.cronNext('* * * * *', '2026-11-27'), TypeError, ArgumentTypeError);
  });

  await t.test('the background worker puts the message of a due schedule, and moves nextAt on; lastAt is the due time served', async () => {
    const q = await freshQueue('node-schedule-due');
    const name = await freshSchedule('node-new-year');
    await client.schedule(name, q, '0 0 1 1 *', 'happy new year', { headers: { kind: 'greeting' } });
    const [{ due }] = await sql("SELECT date_trunc('minute', now()) - interval '1 hour' AS due");
    await sql('UPDATE queue_storage.schedules SET next_at = $1 WHERE schedule = $2', [due, name]);
    assert.ok(await until(async () => (await client.peek(q)).length > 0, 30), 'no message put');
    const [m] = await client.peek(q, { maxMessages: 10 });
    const { scheduled_for: scheduledFor, ...rest } = m.headers;
    assert.deepEqual([m.body, rest], ['happy new year', { kind: 'greeting', schedule: name }]);
    const [{ same }] = await sql('SELECT $1::timestamptz = $2::timestamptz AS same', [scheduledFor, due]);
    assert.equal(same, true, `scheduled_for ${scheduledFor}`);
    const row = await scheduled(name);
    assert.equal(row.lastAt.getTime(), due.getTime());
    assert.equal(row.nextAt.getTime(), (await client.cronNext('0 0 1 1 *', new Date())).getTime());
    await client.dropQueue(q);
    assert.equal(await scheduled(name), undefined, 'dropping the queue takes its schedules');
  });

  await t.test('what schedules refuse: bad expressions and time zones (22023), an unknown queue, a message too large', async () => {
    const q = await freshQueue('node-schedule-errors', { max_message_size: 100 });
    const name = await freshSchedule('node-refused');
    for (const [cron, zone] of [['* * * *', 'UTC'], ['60 * * * *', 'UTC'], ['0 0 30 2 *', 'UTC'], ['@reboot', 'UTC'],
      ['* * * * *', 'Mars/Olympus_Mons']]) {
      await rejectsWith(() => client.schedule(name, q, cron, 'x', { timeZone: zone }), queue.InvalidArgument, '22023');
      await rejectsWith(() => client.cronNext(cron, new Date(), zone), queue.InvalidArgument, '22023');
    }
    await rejectsWith(() => client.schedule('no spaces allowed', q, '* * * * *', 'x'), queue.InvalidArgument, '22023');
    await rejectsWith(() => client.schedule(name, 'node-no-such-queue', '* * * * *', 'x'), queue.QueueNotFound, '42704');
    await rejectsWith(() => client.schedule(name, q, '* * * * *', 'x'.repeat(200)), queue.MessageTooLarge, '54000');
    await rejectsClientSide(() => client.schedule(name, q, '* * * * *', 'x', { time_zone: 'UTC' }), TypeError, ArgumentTypeError);
    assert.equal(await scheduled(name), undefined, 'nothing scheduled');
  });
});
