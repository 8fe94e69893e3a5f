'use strict';
// Long polling through the gateway (gateway/lib/sqs/long_poll.js) with the
// AWS SDK for JavaScript, on a gateway allowed few PostgreSQL connections:
// many receives wait on a few queues without a connection each, every
// message sent reaches exactly one of them, lines take turns for the
// pollers, and a receive whose client went away leaves its message to
// another waiter or visible again at once.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { KEY, SECRET, startDatabase, startGateway, sampleGatewayConnections } = require('./end_to_end');

const MAX_CONNECTIONS = 4;
const WAITERS = 50;
const QUEUES = ['lp-red', 'lp-green', 'lp-blue'];

test('long polling on a gateway of 4 connections', async (t) => {
  const sqs = require('@aws-sdk/client-sqs');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-long-poll-'));
  const database = startDatabase(dir, 55541);
  const gateway = await startGateway(dir, database.dsn, { maxConnections: MAX_CONNECTIONS });
  // the SDK's agent opens few sockets by default: the waiters would hold
  // them all and the sends would queue behind them
  const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
  const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1',
    credentials: { accessKeyId: KEY, secretAccessKey: SECRET }, requestHandler: { httpAgent: agent } });
  t.after(() => {
    client.destroy();
    agent.destroy();
    gateway.child.kill('SIGTERM');
    database.stop();
  });

  const createQueue = async (name) => (await client.send(new sqs.CreateQueueCommand({ QueueName: name }))).QueueUrl;
  const receive = (QueueUrl, params, options) => client.send(new sqs.ReceiveMessageCommand({
    QueueUrl, AttributeNames: ['ApproximateReceiveCount'], ...params }), options);
  const send = (QueueUrl, MessageBody) => client.send(new sqs.SendMessageCommand({ QueueUrl, MessageBody }));

  // until a get of the gateway sleeps in the server (a poller serves the
  // line), so that what follows happens while it waits
  async function pollerWaiting() {
    for (let i = 0; i < 200; i++) {
      const active = database.psql('SELECT count(*) FROM pg_catalog.pg_stat_activity ' +
        "WHERE application_name = 'queue-gateway-test' AND wait_event_type = 'Extension'");
      if (Number(active) > 0) return;
      await sleep(25);
    }
    assert.fail('no get of the gateway slept in the server');
  }

  // A receive aborted by its client, once the gateway has seen it go.
  async function abandonedReceive(QueueUrl) {
    const controller = new AbortController();
    const waiting = receive(QueueUrl, { WaitTimeSeconds: 20, VisibilityTimeout: 600 }, { abortSignal: controller.signal });
    await pollerWaiting();
    controller.abort();
    await assert.rejects(waiting, { name: 'AbortError' });
    // the close reaches the gateway over loopback
    await sleep(200);
  }

  await t.test(`${WAITERS} waiting receives on ${QUEUES.length} queues, then ${WAITERS} sends: each message received once, ` +
    `every waiter answered, at most ${MAX_CONNECTIONS} connections`, async () => {
    const urls = await Promise.all(QUEUES.map(createQueue));
    const queueOf = (i) => urls[i % urls.length];
    const sampler = sampleGatewayConnections(database);
    const receives = Array.from({ length: WAITERS }, (_, i) => receive(queueOf(i), { WaitTimeSeconds: 5, MaxNumberOfMessages: 1 }));
    await pollerWaiting();
    // as many messages for each queue as receives wait on it
    const bodies = Array.from({ length: WAITERS }, (_, i) => `message ${i}`);
    for (const [i, body] of bodies.entries()) await send(queueOf(i), body);
    const answers = await Promise.allSettled(receives);
    const counts = await sampler.stop();

    const failed = answers.filter((a) => a.status === 'rejected');
    assert.deepEqual(failed.map((a) => String(a.reason)), [], 'every receive is answered');
    const received = answers.flatMap((a, i) => (a.value.Messages || []).map((m) => ({ body: m.Body, queue: queueOf(i), count: m.Attributes.ApproximateReceiveCount })));
    assert.deepEqual(received.map((m) => m.body).sort(), [...bodies].sort(), 'each message sent is received exactly once');
    for (const m of received) assert.equal(m.queue, queueOf(Number(m.body.split(' ')[1])), `${m.body} from its own queue`);
    for (const url of urls) assert.equal((await receive(url, {})).Messages, undefined, 'no message is left behind');

    assert.ok(counts.length > 0 && counts.some((n) => n > 0), `the gateway's connections were seen (${counts.length} samples)`);
    assert.ok(Math.max(...counts) <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} connections of the gateway, seen ${Math.max(...counts)}`);
    t.diagnostic(`${counts.length} samples of pg_stat_activity, at most ${Math.max(...counts)} connections of the gateway`);
  });

  await t.test('more lines than poller slots: a line waits its turn, not the end of the others\' waits', async () => {
    const [idleA, idleB, busy] = await Promise.all(['lp-idle-a', 'lp-idle-b', 'lp-busy'].map(createQueue));
    // two lines whose waiters nothing will answer take both poller slots
    const idle = [idleA, idleB].map((url) => receive(url, { WaitTimeSeconds: 6 }));
    await pollerWaiting();
    const waiting = receive(busy, { WaitTimeSeconds: 3 });
    await sleep(200);
    await send(busy, 'served in turn');
    const got = await waiting;
    assert.ok(got.Messages, 'the waiter of the third line receives the message before its wait runs out');
    assert.equal(got.Messages[0].Body, 'served in turn');
    // a waiter whose wait runs out gets an empty answer
    for (const answer of await Promise.all(idle)) assert.equal(answer.Messages, undefined);
  });

  await t.test('a waiter whose client went away: its message goes to the next waiter of the line, leased as it asked', async () => {
    const url = await createQueue('lp-handed-on');
    await abandonedReceive(url);
    const next = receive(url, { WaitTimeSeconds: 20, VisibilityTimeout: 45 });
    await sleep(200);
    await send(url, 'for whoever still waits');
    const got = await next;
    assert.ok(got.Messages, 'the next waiter receives the message');
    assert.equal(got.Messages.length, 1);
    assert.equal(got.Messages[0].Body, 'for whoever still waits');
    // leased for what the next waiter asked for, not for what the one gone did
    const lease = database.psql(`SELECT visible_at > now() + interval '30 seconds' AND visible_at < now() + interval '60 seconds' ` +
      `FROM queue_inspect('lp-handed-on') WHERE message_id = ${got.Messages[0].MessageId}`);
    assert.equal(lease.trim(), 't');
  });

  await t.test('a waiter whose client went away, no other waiter: its message is visible again at once', async () => {
    const url = await createQueue('lp-let-go');
    await abandonedReceive(url);
    const { MessageId } = await send(url, 'nobody waits for me');
    // a get of the gateway may hold it for the moment until its release commits;
    // left leased as the one gone asked, no receive here would see it
    let got;
    for (let i = 0; i < 100 && got === undefined; i++) {
      got = (await receive(url, {})).Messages;
      if (got === undefined) await sleep(50);
    }
    assert.ok(got, 'an immediate receive finds the message');
    assert.equal(got[0].MessageId, MessageId);
    t.diagnostic(`received ${got[0].Attributes.ApproximateReceiveCount === '2' ? 'after a waiting get of the gateway released it' : 'as sent (no get of the gateway took it)'}`);
  });
});
