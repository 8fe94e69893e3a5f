'use strict';
// SendMessageBatch through the gateway with the AWS SDK for JavaScript
// (JSON protocol): the gateway puts the entries of one DelaySeconds with
// one putBatch; the answer keeps every entry's result, MessageId and
// digests in the order of the request (the SDK checks each entry's MD5
// against what it sent), an entry that cannot be read fails alone, and a
// message too large for the queue fails the whole request, as before.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KEY, SECRET, startDatabase, startGateway } = require('./end_to_end');

test('SendMessageBatch puts the entries of each DelaySeconds together, answering in the order of the request', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-batch-'));
  const database = startDatabase(dir, 55548);
  const gateway = await startGateway(dir, database.dsn);
  const sqs = require('@aws-sdk/client-sqs');
  const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1', credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
  t.after(() => {
    client.destroy();
    gateway.child.kill('SIGTERM');
    database.stop();
  });
  const { QueueUrl } = await client.send(new sqs.CreateQueueCommand({ QueueName: 'batches', Attributes: { MaximumMessageSize: '1024' } }));

  await t.test('mixed delays, attributes and an entry that cannot be read', async () => {
    const entries = [
      { Id: 'a', MessageBody: 'a, no delay' },
      { Id: 'b', MessageBody: 'b, delayed', DelaySeconds: 60 },
      { Id: 'c', MessageBody: 'c, no delay', MessageAttributes: { n: { DataType: 'Number', StringValue: '3' } } },
      { Id: 'bad', MessageBody: 'a form feed \f is no character of a message' },
      { Id: 'd', MessageBody: 'd, delayed', DelaySeconds: 60, MessageAttributes: { raw: { DataType: 'Binary', BinaryValue: Buffer.from([4]) } } },
      { Id: 'e', MessageBody: 'e, zero delay', DelaySeconds: 0 },
    ];
    const sent = await client.send(new sqs.SendMessageBatchCommand({ QueueUrl, Entries: entries }));
    assert.deepEqual(sent.Successful.map((s) => s.Id), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(sent.Failed.map((f) => [f.Id, f.Code, f.SenderFault]), [['bad', 'InvalidMessageContents', true]]);
    assert.equal(new Set(sent.Successful.map((s) => s.MessageId)).size, 5);
    assert.equal(sent.Successful[2].MD5OfMessageAttributes !== undefined, true);
    assert.equal(sent.Successful[0].MD5OfMessageAttributes, undefined);
    // each entry's MessageId is its message: the delayed ones are not visible yet
    const byId = new Map(sent.Successful.map((s) => [s.Id, s.MessageId]));
    const got = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
    assert.deepEqual(got.Messages.map((m) => m.Body), ['a, no delay', 'c, no delay', 'e, zero delay']);
    assert.deepEqual(got.Messages.map((m) => m.MessageId), [byId.get('a'), byId.get('c'), byId.get('e')]);
    assert.equal(got.Messages[1].MessageAttributes.n.StringValue, '3');
    const sql = (text) => database.psql(text).trim();
    assert.equal(sql("SELECT count(*) FROM queue_peek('batches', 10)"), '0');
    assert.equal(sql("SELECT string_agg(message_id::text, ',' ORDER BY message_id) FROM queue_inspect('batches', 10) WHERE body LIKE '%delayed'"),
      [byId.get('b'), byId.get('d')].join(','));
    await client.send(new sqs.DeleteMessageBatchCommand({ QueueUrl,
      Entries: got.Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
  });

  await t.test('DelaySeconds 0 and none keep the order of the request, in a FIFO queue too', async () => {
    for (const [name, attributes, group] of [['plain', {}, {}],
      ['ordered.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' }, { MessageGroupId: 'g' }]]) {
      const url = (await client.send(new sqs.CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl;
      const entries = ['one', 'two', 'three', 'four'].map((body, i) => ({ Id: body, MessageBody: body, ...group,
        ...(i % 2 === 1 ? { DelaySeconds: 0 } : {}) }));
      const sent = await client.send(new sqs.SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
      assert.deepEqual(sent.Successful.map((s) => s.Id), ['one', 'two', 'three', 'four']);
      const bodies = [];
      for (let i = 0; i < 4; i++) {
        const got = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 1 }));
        bodies.push(got.Messages[0].Body);
        await client.send(new sqs.DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: got.Messages[0].ReceiptHandle }));
      }
      assert.deepEqual(bodies, ['one', 'two', 'three', 'four'], name);
    }
  });

  await t.test('a message too large fails the whole request', async () => {
    const count = () => database.psql("SELECT count(*) FROM queue_inspect('batches', 100)").trim();
    const before = count();
    const entries = [
      { Id: 'late', MessageBody: 'small, delayed', DelaySeconds: 30 },
      { Id: 'small', MessageBody: 'small' },
      { Id: 'large', MessageBody: 'x'.repeat(2000) },
    ];
    await assert.rejects(client.send(new sqs.SendMessageBatchCommand({ QueueUrl, Entries: entries })), { name: 'InvalidParameterValue' });
    assert.equal(count(), before);
  });
});
