'use strict';
/*-------------------------------------------------------------------------
 *
 * sqs_consumer.test.js
 *		sqs-consumer (npm), unchanged, against the gateway, through a
 *		restart of PostgreSQL and a restart of the gateway.
 *
 * A throwaway PostgreSQL and the gateway are started as in
 * gateway.test.js (end_to_end.js).  MESSAGES messages, each carrying its
 * number, are sent with SendMessageBatch; CONSUMERS consumers, each with a
 * client of its own (JSON protocol, the gateway as endpoint), receive them
 * with long polling, BATCH at a time, through handleMessageBatch, so that
 * their deletes are DeleteMessageBatch calls.  Each holds its messages by
 * a heartbeat: visibilityTimeout VISIBILITY_S, extended every
 * HEARTBEAT_S with ChangeMessageVisibilityBatch.  One message in SLOW_EVERY
 * takes SLOW_MS to handle, longer than the visibility timeout, so that
 * another consumer would receive it again were its lease not extended.
 *
 * Once a third of the messages are deleted, PostgreSQL is restarted (fast)
 * while a slow message is being handled; once two thirds are, the gateway
 * is killed (SIGKILL) and started again on its port while one is.  The
 * consumers run on; the SDK retries what the gateway answers
 * ServiceUnavailable and what it cannot answer at all.
 *
 * Every message must be handled and deleted, none handled twice, and the
 * queue must be empty at the end.  A handling counts twice when it starts
 * while another handling of the message is under way (its lease ran out)
 * or after one whose batch was deleted; a message is only forgiven a
 * second handling when the DeleteMessageBatch of its first failed for the
 * consumer (an error, the SDK's retries spent), as SQS forgives it: its
 * message is received again after its visibility timeout.
 *
 *-------------------------------------------------------------------------
 */
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { KEY, SECRET, startDatabase, startGateway, queueStats, describeQueue } = require('./end_to_end');

const QUEUE = 'consumer-jobs';
const MESSAGES = 200;
const CONSUMERS = 3;
const BATCH = 10;
const WAIT_SECONDS = 5;
const VISIBILITY_S = 4;
const HEARTBEAT_S = 1;
const SLOW_EVERY = 25;
const SLOW_MS = 6000;
const WAIT_MS = 120000;

// 12, 37, 62...: one message in SLOW_EVERY, each in a batch of its own
const isSlow = (n) => n % SLOW_EVERY === 12;

// What the handlers did: for each message's number, its handlings in order,
// each { consumer, slow, start, end, deleted } (deleted: true once its batch
// is deleted, false when that delete failed).
class Record {
  constructor() {
    this.since = Date.now();
    this.handlings = new Map();
    this.running = new Set();
    this.errors = new Map();
  }

  started(n, consumer) {
    const handling = { consumer, slow: isSlow(n), start: Date.now(), end: null, deleted: undefined };
    this.handlings.set(n, [...(this.handlings.get(n) || []), handling]);
    this.running.add(handling);
    return handling;
  }

  ended(handling) {
    handling.end = Date.now();
    this.running.delete(handling);
  }

  // sqs-consumer's message_processed: the batch of the message was deleted
  deleted(n, outcome) {
    const last = (this.handlings.get(n) || []).at(-1);
    if (last !== undefined && last.deleted === undefined) last.deleted = outcome;
  }

  error(kind) {
    this.errors.set(kind, (this.errors.get(kind) || 0) + 1);
  }

  get deletedCount() {
    return [...this.handlings.values()].filter((hs) => hs.some((h) => h.deleted === true)).length;
  }

  get slowRunning() {
    return [...this.running].some((h) => h.slow);
  }

  // The numbers handled twice: a handling that starts while another one
  // runs, or after one whose delete went through.
  twice() {
    const found = [];
    for (const [n, hs] of this.handlings) {
      const bad = hs.some((h, i) => hs.slice(0, i).some((earlier) => earlier.end === null || earlier.end > h.start ||
        earlier.deleted !== false));
      if (bad) found.push(n);
    }
    return found.sort((a, b) => a - b);
  }

  // each handling of the messages handled twice, its times from the start
  describeTwice() {
    const since = this.since;
    return this.twice().slice(0, 5).map((n) => `${n}: ` + this.handlings.get(n).map((h) =>
      `consumer ${h.consumer} ${h.start - since}-${h.end === null ? '' : h.end - since} ms deleted ${h.deleted}`).join('; ')).join('\n');
  }

  forgiven() {
    return [...this.handlings.values()].filter((hs) => hs.length > 1).length;
  }

  describe() {
    return `handled ${this.handlings.size} of ${MESSAGES}, deleted ${this.deletedCount}, running ${this.running.size}, ` +
      `errors ${JSON.stringify(Object.fromEntries(this.errors))}`;
  }
}

// Waits until check() gives a true value; after WAIT_MS fails with what was
// waited for and what describe() says, and at once when a message has been
// handled twice.
async function waitFor(what, check, record, describe) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const twice = record.twice();
    if (twice.length > 0) throw new Error(`handled twice while waiting for ${what}:\n${record.describeTwice()}\n${describe()}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`gave up after ${WAIT_MS / 1000} s waiting for ${what}\n${describe()}`);
    await sleep(50);
  }
}

// The call that failed, as sqs-consumer's message says, and the error's code.
function errorKind(err) {
  const message = String(err && err.message);
  const call = [[/^SQS delete message failed/, 'delete'], [/^Error changing visibility timeout/, 'heartbeat'],
    [/^SQS receive message failed/, 'receive']].find(([pattern]) => pattern.test(message));
  return call ? `${call[1]} (${err.code})` : message.slice(0, 120);
}

test('sqs-consumer through a restart of PostgreSQL and of the gateway, every message handled once', async (t) => {
  const sqs = require('@aws-sdk/client-sqs');
  const { Consumer } = require('sqs-consumer');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-sqs-consumer-'));
  const database = startDatabase(dir, 55544);
  let gateway = await startGateway(dir, database.dsn);
  const clients = [];
  const consumers = [];
  t.after(async () => {
    for (const consumer of consumers) consumer.stop({ abort: true });
    for (const client of clients) client.destroy();
    await gateway.stop();
    database.stop();
  });
  // The calls the SDK had to retry, by command, to show what the restarts
  // did. Ten attempts ride out a restart: the SDK's backoff doubles from
  // 100 ms. The gateway's port stays the same across its restart.
  const retried = new Map();
  const newClient = () => {
    const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1',
      credentials: { accessKeyId: KEY, secretAccessKey: SECRET }, maxAttempts: 10 });
    client.middlewareStack.add((next, context) => async (args) => {
      const result = await next(args);
      if (result.output.$metadata.attempts > 1) retried.set(context.commandName, (retried.get(context.commandName) || 0) + 1);
      return result;
    }, { step: 'initialize', name: 'countRetries' });
    clients.push(client);
    return client;
  };
  const producer = newClient();
  const { QueueUrl } = await producer.send(new sqs.CreateQueueCommand({ QueueName: QUEUE }));
  for (let first = 0; first < MESSAGES; first += BATCH) {
    const Entries = Array.from({ length: BATCH }, (_, i) => ({ Id: `m${first + i}`, MessageBody: JSON.stringify({ n: first + i }) }));
    const { Failed = [] } = await producer.send(new sqs.SendMessageBatchCommand({ QueueUrl, Entries }));
    assert.deepEqual(Failed, []);
  }

  const record = new Record();
  const numberOf = (message) => JSON.parse(message.Body).n;
  for (let c = 0; c < CONSUMERS; c++) {
    const consumer = Consumer.create({
      queueUrl: QueueUrl,
      sqs: newClient(),
      batchSize: BATCH,
      waitTimeSeconds: WAIT_SECONDS,
      visibilityTimeout: VISIBILITY_S,
      heartbeatInterval: HEARTBEAT_S,
      handleMessageBatch: async (messages) => {
        await Promise.all(messages.map(async (message) => {
          const n = numberOf(message);
          const handling = record.started(n, c);
          await sleep(handling.slow ? SLOW_MS : 5 + (n % 7) * 5);
          record.ended(handling);
        }));
        return messages;
      },
    });
    consumer.on('message_processed', (message) => record.deleted(numberOf(message), true));
    consumer.on('error', (err, messages) => {
      const kind = errorKind(err);
      record.error(kind);
      if (kind.startsWith('delete')) for (const message of [messages].flat()) record.deleted(numberOf(message), false);
    });
    consumer.on('processing_error', (err) => record.error(`processing: ${err.message}`));
    consumers.push(consumer);
  }
  const describe = () => `${record.describe()}\nqueue: ${describeQueue(database, QUEUE)}\ngateway's errors: ${gateway.errors().slice(-2000)}`;
  for (const consumer of consumers) consumer.start();

  await waitFor('a third of the messages deleted, and a slow one being handled',
    () => record.deletedCount >= MESSAGES / 3 && record.slowRunning, record, describe);
  const restartedAt = record.deletedCount;
  await database.pgCtl('restart');

  await waitFor('two thirds of the messages deleted, and a slow one being handled',
    () => record.deletedCount >= (2 * MESSAGES) / 3 && record.slowRunning, record, describe);
  const killedAt = record.deletedCount;
  await gateway.stop('SIGKILL');
  gateway = await startGateway(dir, database.dsn, { port: gateway.port });

  // the queue empty: nothing left to come back
  await waitFor('every message deleted and the queue empty', () => {
    if (record.deletedCount < MESSAGES || record.running.size > 0) return false;
    const stats = queueStats(database, QUEUE);
    return stats.visible + stats.inFlight + stats.delayed === 0;
  }, record, describe);
  const errors = JSON.stringify(Object.fromEntries(record.errors));
  await Promise.all(consumers.map((consumer) => {
    const stopped = new Promise((resolve) => consumer.once('stopped', resolve));
    consumer.stop({ abort: true });
    return stopped;
  }));

  t.diagnostic(`PostgreSQL restarted after ${restartedAt} deletes, the gateway killed after ${killedAt}`);
  t.diagnostic(`calls that succeeded after a retry: ${JSON.stringify(Object.fromEntries(retried))}; errors the consumers reported: ${errors}`);
  const stats = queueStats(database, QUEUE);
  t.diagnostic(`${stats.gets - MESSAGES} receive(s) beyond one per message, ${record.forgiven()} message(s) handled again after a failed delete`);
  const never = Array.from({ length: MESSAGES }, (_, n) => n).filter((n) => !record.handlings.has(n));
  assert.deepEqual({ twice: record.twice(), never }, { twice: [], never: [] }, 'every message handled exactly once');
  assert.equal(record.deletedCount, MESSAGES);
  assert.deepEqual({ ...stats, gets: undefined }, { visible: 0, inFlight: 0, delayed: 0, puts: MESSAGES, gets: undefined, deletes: MESSAGES });
  // no call the gateway does not know: the heartbeat's among them
  assert.doesNotMatch(errors, /UnsupportedOperation|not supported/);
  const { Attributes } = await newClient().send(new sqs.GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
  assert.equal(Attributes.ApproximateNumberOfMessages, '0');
  assert.equal(Attributes.ApproximateNumberOfMessagesNotVisible, '0');
});
