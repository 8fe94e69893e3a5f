'use strict';
// A consumer that works as the Azure Functions queue trigger
// (functions_listener.js) on the gateway's Azure side: batches of 16 with
// the next got at 8 still being handled, leases renewed while a handler
// runs past them, failed messages retried and moved to <queue>-poison on
// their fifth dequeue, base64 bodies.  Every message must be handled once
// when its handler succeeds, five times when it always fails, and end
// deleted or on the poison queue; none may be lost or come twice.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { QueueServiceClient } = require('@azure/storage-queue');
const { startDatabase, startGateway } = require('./end_to_end');
const { FunctionsListener } = require('./functions_listener');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const base64 = (text) => Buffer.from(text, 'utf8').toString('base64');

const GOOD = 60;
const SLOW = [3, 30];      // handled in 2.5 s, past their lease of LEASE_SECONDS
const FAILING = [7, 41];   // their handler always throws
const LEASE_SECONDS = 2;

test('a consumer of the Functions queue trigger\'s rules on the gateway', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-functions-'));
  const database = startDatabase(dir, 55564);
  // the Azure side alone, as a Functions app would run it
  const gateway = await startGateway(dir, database.dsn, { azurePort: 0, credentials: undefined, receiptSecret: undefined });
  t.after(async () => {
    await gateway.stop();
    database.stop();
  });
  const service = QueueServiceClient.fromConnectionString(gateway.azureConnectionString, { retryOptions: { maxTries: 1 } });
  const queue = service.getQueueClient('orders');
  await queue.create();
  for (let n = 0; n < GOOD; n++) await queue.sendMessage(base64(JSON.stringify({ n })));

  const listener = new FunctionsListener(service, 'orders', async (body) => {
    const { n } = JSON.parse(body);
    if (FAILING.includes(n)) throw new Error(`message ${n} fails`);
    await sleep(SLOW.includes(n) ? 2500 : 20);
  }, { leaseSeconds: LEASE_SECONDS });
  const running = listener.run();
  const deadline = Date.now() + 60_000;
  const done = () => listener.handled.filter((h) => !h.failed).length === GOOD - FAILING.length
    && listener.poisoned.length === FAILING.length;
  while (!done() && Date.now() < deadline && listener.errors.length === 0) await sleep(100);
  listener.stop();
  await running;
  assert.deepEqual(listener.errors, []);

  // each message that succeeds handled once, on its first dequeue
  const succeeded = listener.handled.filter((h) => !h.failed);
  const counts = new Map();
  for (const h of succeeded) counts.set(JSON.parse(h.body).n, (counts.get(JSON.parse(h.body).n) || 0) + 1);
  const expected = new Map([...Array(GOOD).keys()].filter((n) => !FAILING.includes(n)).map((n) => [n, 1]));
  assert.deepEqual(counts, expected);
  assert.ok(succeeded.every((h) => h.dequeueCount === 1), 'no message that succeeded came back');

  // the slow ones were renewed past their lease, and still came once
  for (const n of SLOW) {
    const renewed = listener.renewals.filter((body) => JSON.parse(body).n === n).length;
    assert.ok(renewed >= 2, `message ${n}: its lease renewed ${renewed} times`);
  }

  // the failing ones: handled on dequeues 1 to 5, then on the poison queue
  for (const n of FAILING) {
    const tries = listener.handled.filter((h) => JSON.parse(h.body).n === n).map((h) => h.dequeueCount);
    assert.deepEqual(tries, [1, 2, 3, 4, 5], `message ${n}`);
  }
  const poison = service.getQueueClient('orders-poison');
  const onPoison = (await poison.peekMessages({ numberOfMessages: 32 })).peekedMessageItems
    .map((m) => JSON.parse(Buffer.from(m.messageText, 'base64').toString()).n).sort((a, b) => a - b);
  assert.deepEqual(onPoison, FAILING);
  assert.equal((await queue.getProperties()).approximateMessagesCount, 0);

  // batches of 16, the next got only at 8 or fewer still being handled,
  // and while some still were
  assert.ok(listener.gets.every((g) => g.inFlightBefore <= 8 && g.got <= 16), JSON.stringify(listener.gets));
  assert.ok(listener.gets.some((g) => g.got === 16), 'a full batch of 16');
  assert.ok(listener.gets.some((g) => g.inFlightBefore > 0 && g.got > 0), 'a batch got while the last was being handled');
});
