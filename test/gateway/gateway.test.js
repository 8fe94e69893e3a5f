'use strict';
// The gateway end to end: a throwaway PostgreSQL with the extension, the
// gateway started by gateway/run.sh with a configuration mapping an access
// key to a role, and the real clients against it: Debian's boto3 (Query
// protocol, test/gateway/sqs_clients.py) and the AWS SDK for JavaScript
// (JSON protocol).  Each creates a queue, sends with attributes, receives,
// deletes, and checks the errors of a forged receipt handle, a queue that
// does not exist and a wrong secret.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createHash } = require('node:crypto');
const { KEY, SECRET, run, startDatabase, startGateway } = require('./end_to_end');

test('the gateway with real SQS clients', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-e2e-'));
  const database = startDatabase(dir, 55540);
  const gateway = await startGateway(dir, database.dsn);
  t.after(() => {
    gateway.child.kill('SIGTERM');
    database.stop();
  });

  // Debian 12's boto3 speaks the Query protocol, newer ones JSON
  await t.test('boto3 from Debian', () => {
    const out = JSON.parse(run('/usr/bin/python3', ['-I', path.join(__dirname, 'sqs_clients.py'), gateway.url, KEY, SECRET, 'boto-orders']));
    t.diagnostic(`boto3 spoke the ${out.protocol} protocol`);
    assert.ok(['query', 'json'].includes(out.protocol), out.protocol);
    assert.match(out.url, /\/000000000000\/boto-orders$/);
    assert.equal(out.same_url, out.url);
    assert.equal(out.sent_md5, createHash('md5').update('hello\r\nworld \u{1F600}', 'utf8').digest('hex'));
    assert.deepEqual(out.batch_ok, ['a', 'b']);
    assert.deepEqual(out.bodies, ['hello\r\nworld \u{1F600}', 'one', 'two']);
    assert.deepEqual(out.attributes, { kind: 'greeting', n: '42', raw: '0001ff' });
    assert.equal(out.receive_count, '1');
    assert.equal(out.deleted, 3);
    assert.equal(out.left.ApproximateNumberOfMessages, '0');
    assert.equal(out.left.ApproximateNumberOfMessagesNotVisible, '0');
    assert.equal(out.left.VisibilityTimeout, '30');
    assert.deepEqual(out.forged, ['ReceiptHandleIsInvalid', 404]);
    assert.deepEqual(out.missing, ['AWS.SimpleQueueService.NonExistentQueue', 400]);
    // no RedrivePolicy: no dead-letter queue, as in SQS
    assert.deepEqual(out.listed, [out.url]);
    assert.deepEqual(out.bad_secret, ['SignatureDoesNotMatch', 403]);
    assert.equal(out.set_visibility, '45');
    assert.deepEqual(out.redrive, { deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:boto-orders-src-dlq', maxReceiveCount: 3 });
    assert.deepEqual(out.dlq_sources, [out.source_url]);
    assert.deepEqual(out.other_dlq, ['InvalidParameterValue', 400]);
  });

  await t.test('@aws-sdk/client-sqs (JSON protocol)', async () => {
    const sqs = require('@aws-sdk/client-sqs');
    const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1', credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
    const { QueueUrl } = await client.send(new sqs.CreateQueueCommand({ QueueName: 'Js_Orders' }));
    assert.match(QueueUrl, /\/000000000000\/Js_Orders$/);
    await client.send(new sqs.SendMessageCommand({ QueueUrl, MessageBody: 'from node',
      MessageAttributes: { kind: { DataType: 'String', StringValue: 'js' }, raw: { DataType: 'Binary', BinaryValue: Buffer.from([1, 2]) } } }));
    const got = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl, MessageAttributeNames: ['All'], WaitTimeSeconds: 1 }));
    assert.equal(got.Messages.length, 1);
    assert.equal(got.Messages[0].Body, 'from node');
    assert.equal(got.Messages[0].MessageAttributes.kind.StringValue, 'js');
    assert.deepEqual([...got.Messages[0].MessageAttributes.raw.BinaryValue], [1, 2]);
    // received and not deleted: invisible for the queue's 30 s
    const again = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl }));
    assert.equal(again.Messages, undefined);
    await client.send(new sqs.DeleteMessageCommand({ QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle }));
    // deleting again is no error, as in SQS
    await client.send(new sqs.DeleteMessageCommand({ QueueUrl, ReceiptHandle: got.Messages[0].ReceiptHandle }));
    const attributes = await client.send(new sqs.GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
    assert.equal(attributes.Attributes.ApproximateNumberOfMessages, '0');
    await assert.rejects(client.send(new sqs.GetQueueUrlCommand({ QueueName: 'nope-none' })), { name: 'QueueDoesNotExist' });
    await client.send(new sqs.DeleteQueueCommand({ QueueUrl }));
    client.destroy();
  });
});
