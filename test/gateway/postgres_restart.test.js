'use strict';
// The gateway through a restart of PostgreSQL and while it is down, with
// the AWS SDK for JavaScript retrying nothing (maxAttempts 1), so that
// what the gateway answers is seen as it is: a receive waiting in a long
// poll across a fast restart gets the message sent after it; while the
// server is down every request is answered ServiceUnavailable (503, which
// the SDKs retry), in the JSON and the Query protocol, and a waiting
// receive empty when its wait runs out; the first requests once the
// server is back succeed (the pool dropped its dead connections); with
// its retries, a send made while the server is down goes through once it
// is back; the gateway never exits.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { KEY, SECRET, startDatabase, startGateway, getSleeping } = require('./end_to_end');

// A Query-protocol request (a signed form, as Debian 12's boto3 sends),
// answered with its status and body.
async function queryRequest(url, form) {
  const { SignatureV4 } = require('@smithy/signature-v4');
  const { Hash } = require('@smithy/core/serde');
  const { HttpRequest } = require('@smithy/core/protocols');
  const { hostname, port, host } = new URL(url);
  const body = new URLSearchParams({ Version: '2012-11-05', ...form }).toString();
  const signer = new SignatureV4({ service: 'sqs', region: 'us-east-1',
    credentials: { accessKeyId: KEY, secretAccessKey: SECRET }, sha256: Hash.bind(null, 'sha256') });
  const signed = await signer.sign(new HttpRequest({ method: 'POST', protocol: 'http:', hostname, port: Number(port), path: '/',
    headers: { host, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body }));
  const response = await fetch(url, { method: 'POST', headers: signed.headers, body });
  return { status: response.status, text: await response.text() };
}

test('the gateway through a restart of PostgreSQL', async (t) => {
  const sqs = require('@aws-sdk/client-sqs');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-restart-'));
  const database = startDatabase(dir, 55543);
  const gateway = await startGateway(dir, database.dsn);
  const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1', maxAttempts: 1,
    credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
  t.after(async () => {
    client.destroy();
    await gateway.stop();
    database.stop();
  });
  const { QueueUrl } = await client.send(new sqs.CreateQueueCommand({ QueueName: 'restarts' }));
  const send = (MessageBody, sender = client) => sender.send(new sqs.SendMessageCommand({ QueueUrl, MessageBody }));
  const receive = (params = {}) => client.send(new sqs.ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, ...params }));
  const drain = async () => {
    const { Messages = [] } = await receive();
    for (const m of Messages) await client.send(new sqs.DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    return Messages.map((m) => m.Body);
  };
  const unavailable = (err) => err.name === 'ServiceUnavailable' && err.$metadata.httpStatusCode === 503;

  await t.test('a receive waiting across a fast restart gets the message sent after it', async () => {
    const started = Date.now();
    const waiting = receive({ WaitTimeSeconds: 20 });
    await getSleeping(database);
    await database.pgCtl('restart');
    // the first request after the restart, not retried: no dead connection is handed out
    await send('after the restart');
    const { Messages = [] } = await waiting;
    assert.deepEqual(Messages.map((m) => m.Body), ['after the restart']);
    assert.ok(Date.now() - started < 15000, `answered after ${Date.now() - started} ms`);
    await client.send(new sqs.DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages[0].ReceiptHandle }));
  });

  await t.test('while the server is down: ServiceUnavailable in both protocols, a waiting receive answered empty', async () => {
    const started = Date.now();
    const waiting = receive({ WaitTimeSeconds: 3 });
    await getSleeping(database);
    await database.pgCtl('stop');
    await assert.rejects(send('nobody hears this'), unavailable);
    await assert.rejects(receive(), unavailable);
    await assert.rejects(client.send(new sqs.GetQueueUrlCommand({ QueueName: 'restarts' })), unavailable);
    const query = await queryRequest(gateway.url, { Action: 'SendMessage', QueueUrl, MessageBody: 'nor this' });
    assert.equal(query.status, 503);
    assert.match(query.text, /<Error><Type>Receiver<\/Type><Code>ServiceUnavailable<\/Code>/);
    // neither an error nor a hang: no message came before its wait ran out
    const { Messages } = await waiting;
    assert.equal(Messages, undefined);
    const waited = Date.now() - started;
    assert.ok(waited >= 2900 && waited < 10000, `answered after ${waited} ms`);
    await database.pgCtl('start');
    await send('the server is back');
    assert.deepEqual(await drain(), ['the server is back']);
  });

  await t.test('with the SDK\'s retries, a send made while the server is down goes through once it is back', async () => {
    const retrying = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1', maxAttempts: 10,
      credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
    t.after(() => retrying.destroy());
    await database.pgCtl('stop');
    const sent = send('sent while down', retrying);
    await sleep(300);
    await database.pgCtl('start');
    await sent;
    assert.deepEqual(await drain(), ['sent while down']);
  });

  assert.equal(gateway.child.exitCode, null, gateway.errors());
  // no stack trace: every failure was answered as an SQS error
  assert.doesNotMatch(gateway.errors(), /^\s+at /m);
});
