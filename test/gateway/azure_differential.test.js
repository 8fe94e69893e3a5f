'use strict';
// The gateway's Azure side against Azurite (npm, in memory): one scripted
// sequence of @azure/storage-queue calls runs against each, and what a
// caller can observe must be the same on both: each call's success or
// error code and status, counts of queues and messages, message texts,
// dequeue counts, which messages are visible when, metadata, paging of the
// queue list, and the lengths of time the answers state (a message's time
// to live, its lease).  Ids, pop receipts and the times themselves differ
// by nature and are left out.
//
// Where Azurite answers otherwise than Azure's documentation, the
// documentation wins: such steps are listed in AZURITE_DIFFERS with the
// reason, the gateway's answer is checked against the documentation
// there, and Azurite's is still checked to be what the list says it is, so
// that an Azurite that changes is noticed.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { QueueServiceClient } = require('@azure/storage-queue');
const { startDatabase, startGateway } = require('./end_to_end');

// Azurite's development account, which it knows without configuration.
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const LEASE_SECONDS = 1;

// step -> [what Azure's documentation says, what Azurite 3.37 answers, why]
const OUT_OF_RANGE = { error: 'OutOfRangeQueryParameterValue', status: 400 };
const OUT_OF_RANGE_WHY = 'a value outside the range Put Message allows is what Azure\'s common error codes call '
  + 'OutOfRangeQueryParameterValue ("a query parameter ... outside the permissible range"); '
  + 'Azurite calls it InvalidQueryParameterValue, which is for a value of the wrong form';
const AZURITE_DIFFERS = {
  'put, lease longer than ttl': [OUT_OF_RANGE, { error: 'InvalidQueryParameterValue', status: 400 }, OUT_OF_RANGE_WHY],
  'put, ttl 0': [OUT_OF_RANGE, { error: 'InvalidQueryParameterValue', status: 400 }, OUT_OF_RANGE_WHY],
  'put, ttl -2': [OUT_OF_RANGE, { error: null, status: 400 },
    'every error of the service has an x-ms-error-code; Azurite answers this one without any'],
};

// Azurite's queue service in memory on an ephemeral port of 127.0.0.1;
// resolves with { url, stop } once it listens.
function startAzurite(dir) {
  const bin = path.join(__dirname, 'node_modules', '.bin', 'azurite-queue');
  const child = spawn(bin, ['--inMemoryPersistence', '--disableTelemetry', '--queueHost', '127.0.0.1', '--queuePort', '0'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /successfully listens on (http:\/\/\S+)/.exec(out);
      if (match) {
        resolve({
          url: `${match[1]}/${AZURITE_ACCOUNT}`,
          stop: () => { child.kill(); return exited; },
        });
      }
    });
    child.stderr.on('data', (chunk) => { out += chunk; });
    exited.then((code) => reject(new Error(`Azurite exited (${code}): ${out}`)));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (from, to) => Math.round((to.getTime() - from.getTime()) / 1000);
// A span from the caller's clock to a time of the answer, which has whole
// seconds (Azurite cuts them, the gateway too): the same within a second.
const about = (from, to) => ({ about: seconds(from, to) });

// Equal, spans made by about() within a second of each other.
function alike(a, b) {
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    if ('about' in a && 'about' in b) return Math.abs(a.about - b.about) <= 1;
    const keys = Object.keys(a);
    return Array.isArray(a) === Array.isArray(b) && keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && alike(a[k], b[k]));
  }
  return Object.is(a, b);
}

// What a call gave: { ok: value } or { error: code, status }.
async function outcome(call) {
  try {
    return { ok: await call() };
  } catch (err) {
    if (err.statusCode === undefined) throw err;
    return { error: err.code ?? null, status: err.statusCode };
  }
}

// A received message as the comparison sees it: its text, dequeue count,
// and the seconds from its insertion to its expiry (null: never) and from
// now to when it is visible again.
function received(m, now) {
  const never = m.expiresOn.getUTCFullYear() === 9999;
  return {
    text: m.messageText,
    dequeueCount: m.dequeueCount,
    ttl: never ? null : seconds(m.insertedOn, m.expiresOn),
    lease: about(now, m.nextVisibleOn),
  };
}

const peeked = (m) => ({ text: m.messageText, dequeueCount: m.dequeueCount });

// The script: every step's observation, by name, in order.
async function script(service) {
  const steps = [];
  const step = async (name, call) => {
    steps.push([name, await outcome(call)]);
  };
  const queue = service.getQueueClient('diff-orders');
  const missing = service.getQueueClient('diff-missing');

  // queues: create, again with the same and other metadata, bad names
  await step('create', async () => (await queue.create({ metadata: { team: 'blue' } }))._response.status);
  await step('create again, same metadata', async () => (await queue.create({ metadata: { team: 'blue' } }))._response.status);
  await step('create again, other metadata', async () => (await queue.create({ metadata: { team: 'red' } }))._response.status);
  await step('create, upper case name', async () => (await service.getQueueClient('Diff-Upper').create())._response.status);
  await step('create, name of 2 characters', async () => (await service.getQueueClient('ab').create())._response.status);
  await step('create, double hyphen', async () => (await service.getQueueClient('diff--double').create())._response.status);
  for (const n of [1, 2, 3, 4, 5]) await service.getQueueClient(`diff-page-${n}`).create();

  // the list: prefix, paging by 2 with markers, metadata
  await step('list by pages of 2', async () => {
    const pages = [];
    for await (const page of service.listQueues({ prefix: 'diff-page-' }).byPage({ maxPageSize: 2 })) {
      pages.push(page.queueItems.map((q) => q.name));
    }
    return pages;
  });
  await step('list with metadata', async () => {
    const found = [];
    for await (const q of service.listQueues({ prefix: 'diff-o', includeMetadata: true })) found.push([q.name, q.metadata]);
    return found;
  });

  // metadata and properties
  await step('set metadata', async () => (await queue.setMetadata({ team: 'green', owner: 'ops' }))._response.status);
  await step('properties', async () => {
    const p = await queue.getProperties();
    return { count: p.approximateMessagesCount, metadata: p.metadata };
  });
  await step('properties of a missing queue', () => missing.getProperties().then(() => 'found'));

  // puts: defaults, a delay, never expiring, bad combinations
  const now = () => new Date();
  await step('put', async () => {
    const r = await queue.sendMessage('first');
    return { ttl: seconds(r.insertedOn, r.expiresOn), visibleIn: about(now(), r.nextVisibleOn) };
  });
  await step('put, ttl 60', async () => {
    const r = await queue.sendMessage('second', { messageTimeToLive: 60 });
    return { ttl: seconds(r.insertedOn, r.expiresOn) };
  });
  await step('put, never expires', async () => {
    const r = await queue.sendMessage('third', { messageTimeToLive: -1 });
    return { expiresYear: r.expiresOn.getUTCFullYear() };
  });
  await step('put, hidden 30 s', async () => {
    const r = await queue.sendMessage('hidden', { visibilityTimeout: 30 });
    return { visibleIn: about(now(), r.nextVisibleOn) };
  });
  await step('put, lease longer than ttl', () => queue.sendMessage('x', { visibilityTimeout: 20, messageTimeToLive: 10 }).then(() => 'put'));
  await step('put, ttl 0', () => queue.sendMessage('x', { messageTimeToLive: 0 }).then(() => 'put'));
  await step('put, ttl -2', () => queue.sendMessage('x', { messageTimeToLive: -2 }).then(() => 'put'));
  await step('put, visibility over 7 days', () => queue.sendMessage('x', { visibilityTimeout: 7 * 24 * 3600 + 1 }).then(() => 'put'));
  await step('put, 64 KiB', () => queue.sendMessage('a'.repeat(64 * 1024)).then(() => 'put'));
  await step('put, 64 KiB and one byte', () => queue.sendMessage('a'.repeat(64 * 1024 + 1)).then(() => 'put'));
  await step('put to a missing queue', () => missing.sendMessage('x').then(() => 'put'));
  await step('properties after puts', async () => (await queue.getProperties()).approximateMessagesCount);

  // peek and get
  await step('peek 32', async () => (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map(peeked)
    .map((m) => ({ ...m, text: m.text.slice(0, 16) })));
  await step('peek 33', () => queue.peekMessages({ numberOfMessages: 33 }).then(() => 'peeked'));
  await step('get 33', () => queue.receiveMessages({ numberOfMessages: 33 }).then(() => 'got'));
  await step('get, visibility 0', () => queue.receiveMessages({ visibilityTimeout: 0 }).then(() => 'got'));
  let leased = [];
  await step(`get 2, lease ${LEASE_SECONDS} s`, async () => {
    const at = now();
    leased = (await queue.receiveMessages({ numberOfMessages: 2, visibilityTimeout: LEASE_SECONDS })).receivedMessageItems;
    return leased.map((m) => received(m, at));
  });
  await step('peek while leased', async () => (await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.map((m) => m.messageText.slice(0, 16)));

  // update: new text and a lease, a stale receipt, a wrong id
  const [first, second] = leased;
  let updated;
  await step('update text, visible now', async () => {
    updated = await queue.updateMessage(first.messageId, first.popReceipt, 'first, updated', 0);
    return { status: updated._response.status, visibleIn: about(now(), updated.nextVisibleOn) };
  });
  await step('update with the old receipt', () => queue.updateMessage(first.messageId, first.popReceipt, 'x', 0).then(() => 'updated'));
  await step('update a missing message', () => queue.updateMessage('999999999', first.popReceipt, 'x', 0).then(() => 'updated'));
  await step('update, visibility over 7 days', () => queue.updateMessage(first.messageId, updated.popReceipt, undefined, 7 * 24 * 3600 + 1).then(() => 'updated'));
  await step('peek after the update', async () => (await queue.peekMessages({ numberOfMessages: 1 })).peekedMessageItems.map(peeked));

  // delete: a wrong receipt, the right one, twice
  await step('delete with another receipt', () => queue.deleteMessage(second.messageId, updated.popReceipt).then(() => 'deleted'));
  await step('delete', async () => (await queue.deleteMessage(second.messageId, second.popReceipt))._response.status);
  await step('delete again', () => queue.deleteMessage(second.messageId, second.popReceipt).then(() => 'deleted'));
  await step('delete from a missing queue', () => missing.deleteMessage(second.messageId, second.popReceipt).then(() => 'deleted'));

  // a lease that runs out: the message comes back, counted twice
  await step('get all visible', async () => {
    const at = now();
    return (await queue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: LEASE_SECONDS })).receivedMessageItems
      .map((m) => received(m, at)).map((m) => ({ ...m, text: m.text.slice(0, 16) }));
  });
  await step('get while all are leased', async () => (await queue.receiveMessages({ numberOfMessages: 32 })).receivedMessageItems.length);
  await sleep(LEASE_SECONDS * 1000 + 1200);
  await step('get after the leases ran out', async () => (await queue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 60 }))
    .receivedMessageItems.map((m) => [m.messageText.slice(0, 16), m.dequeueCount]).sort());

  // clear, then queues deleted
  await step('clear', async () => (await queue.clearMessages())._response.status);
  await step('properties after clear', async () => (await queue.getProperties()).approximateMessagesCount);
  await step('clear a missing queue', () => missing.clearMessages().then(() => 'cleared'));
  await step('delete the queue', async () => (await queue.delete())._response.status);
  await step('delete it again', () => queue.delete().then(() => 'deleted'));
  await step('get from the deleted queue', () => queue.receiveMessages().then(() => 'got'));
  for (const n of [1, 2, 3, 4, 5]) await service.getQueueClient(`diff-page-${n}`).delete();
  await step('list after deletes', async () => {
    const names = [];
    for await (const q of service.listQueues({ prefix: 'diff-' })) names.push(q.name);
    return names;
  });
  return steps;
}

test('the same SDK calls against Azurite and the gateway answer the same', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-azurite-'));
  const database = startDatabase(dir, 55562);
  const gateway = await startGateway(dir, database.dsn, { azurePort: 0 });
  const azurite = await startAzurite(dir);
  t.after(async () => {
    await azurite.stop();
    await gateway.stop();
    database.stop();
  });
  const options = { retryOptions: { maxTries: 1 } };
  const ours = await script(QueueServiceClient.fromConnectionString(gateway.azureConnectionString, options));
  const theirs = await script(QueueServiceClient.fromConnectionString(
    `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};QueueEndpoint=${azurite.url};`, options));
  assert.deepEqual(ours.map(([name]) => name), theirs.map(([name]) => name));
  // every step that differs, at once
  const mismatches = [];
  for (let i = 0; i < ours.length; i++) {
    const [name, gateway] = ours[i];
    const azurite = theirs[i][1];
    const differs = AZURITE_DIFFERS[name];
    const expected = differs ? { gateway: differs[0], azurite: differs[1] } : { gateway: azurite, azurite };
    if (!alike({ gateway, azurite }, expected)) mismatches.push({ name, gateway, azurite, expected });
  }
  assert.deepEqual(mismatches, []);
});
