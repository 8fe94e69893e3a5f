'use strict';
// The gateway's queue attributes, tags, visibility changes, dead-letter
// queues, message move tasks and FIFO queues, end to end: through boto3
// (sqs_features.py: the Query protocol with Debian 12's boto3, JSON with
// the sid chroot's), the AWS SDK for JavaScript (JSON) and the AWS CLI.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { KEY, SECRET, run, startDatabase, startGateway } = require('./end_to_end');

const ARN = 'arn:aws:sqs:us-east-1:000000000000:';

test('SQS features through the gateway', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-features-'));
  const database = startDatabase(dir, 55543);
  const gateway = await startGateway(dir, database.dsn);
  t.after(() => {
    gateway.child.kill('SIGTERM');
    database.stop();
  });

  await t.test('boto3', () => {
    const out = JSON.parse(run('/usr/bin/python3', ['-I', path.join(__dirname, 'sqs_features.py'), gateway.url, KEY, SECRET]));
    t.diagnostic(`boto3 spoke the ${out.protocol} protocol`);
    assert.deepEqual(out.attributes, { DelaySeconds: '1', ReceiveMessageWaitTimeSeconds: '2', Policy: '{"Version": "2012-10-17"}', SqsManagedSseEnabled: 'false' });
    assert.equal(out.same_again, true);
    assert.deepEqual(out.other_again, ['QueueAlreadyExists', 400]);
    assert.equal(out.delayed_at_once, 0, 'the queue\'s DelaySeconds holds the message back');
    assert.deepEqual(out.delayed_later, ['delayed'], 'a receive without WaitTimeSeconds waits the queue\'s ReceiveMessageWaitTimeSeconds');
    assert.ok(out.waited >= 0.5, `waited ${out.waited} s`);
    assert.equal(out.hidden_after_change, 0, 'ChangeMessageVisibility extended the lease');
    assert.deepEqual(out.change_batch, [['good'], [['forged', 'ReceiptHandleIsInvalid']]]);
    assert.deepEqual(out.change_deleted, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.change_range, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.tags, { team: 'orders', env: 'test' });
    assert.deepEqual(out.too_many_tags, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.redrive, { deadLetterTargetArn: `${ARN}feat-dlq`, maxReceiveCount: 1 });
    assert.deepEqual(out.missing_dlq, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.dead, ['poison']);
    assert.deepEqual(out.sources, [out.sources[0]]);
    assert.match(out.sources[0], /\/feat-src$/);
    assert.deepEqual(out.not_a_dlq, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.delete_dlq_in_use, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.tasks, [['COMPLETED', 1, `${ARN}feat-src`]]);
    assert.deepEqual(out.cancel, ['ResourceNotFoundException', 404]);
    assert.deepEqual(out.moved_back, ['poison']);
    assert.equal(out.fifo_repeat_same_id, true, 'a repeat within 5 minutes answers the first message\'s id');
    assert.match(out.fifo_sequence, /^[0-9]{20}$/);
    assert.deepEqual(out.fifo_batch, [['d', true], ['nogroup', 'MissingParameter']]);
    const bodies = out.fifo_received.map(([body]) => body);
    assert.deepEqual([...bodies].sort(), ['a', 'b', 'c', 'd']);
    assert.ok(bodies.indexOf('a') < bodies.indexOf('b') && bodies.indexOf('c') < bodies.indexOf('d'), `in order per group: ${bodies}`);
    for (const [body, group, hasSequence, deduplicationId, firstReceivedAfterSent] of out.fifo_received) {
      assert.equal(group, body === 'a' || body === 'b' ? 'g1' : 'g2');
      assert.equal(hasSequence, true);
      assert.equal(deduplicationId.length > 0, true);
      assert.ok(firstReceivedAfterSent >= 0 && firstReceivedAfterSent < 60000, `first received ${firstReceivedAfterSent} ms after sent`);
    }
    assert.equal(out.fifo_in_flight_groups, 0, 'no message of a group in flight is handed out');
    assert.deepEqual(out.fifo_no_group, ['MissingParameter', 400]);
    assert.deepEqual(out.fifo_delay, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.fifo_no_dedup, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.std_dedup, ['InvalidParameterValue', 400]);
    assert.deepEqual(out.fifo_attr_on_std, ['InvalidAttributeValue', 400]);
    assert.deepEqual(out.fifo_dlq_of_std, ['InvalidAttributeValue', 400]);
  });

  await t.test('@aws-sdk/client-sqs: visibility changes and tags (JSON protocol)', async () => {
    const sqs = require('@aws-sdk/client-sqs');
    const client = new sqs.SQSClient({ endpoint: gateway.url, region: 'us-east-1', credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
    const { QueueUrl } = await client.send(new sqs.CreateQueueCommand({ QueueName: 'js-features', tags: { a: '1' } }));
    await client.send(new sqs.SendMessageBatchCommand({ QueueUrl, Entries: [{ Id: 'x', MessageBody: 'x' }, { Id: 'y', MessageBody: 'y' }] }));
    const got = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 1, WaitTimeSeconds: 1 }));
    assert.equal(got.Messages.length, 2);
    const changed = await client.send(new sqs.ChangeMessageVisibilityBatchCommand({ QueueUrl,
      Entries: got.Messages.map((m, i) => ({ Id: `e${i}`, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: i === 0 ? 30 : 0 })) }));
    assert.equal(changed.Successful.length, 2);
    // the one released comes back at once; the one extended does not
    const again = await client.send(new sqs.ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    assert.deepEqual(again.Messages.map((m) => m.Body), [got.Messages[1].Body]);
    // the handles from before the change still delete
    const deleted = await client.send(new sqs.DeleteMessageBatchCommand({ QueueUrl,
      Entries: [{ Id: 'first', ReceiptHandle: got.Messages[0].ReceiptHandle }, { Id: 'second', ReceiptHandle: again.Messages[0].ReceiptHandle }] }));
    assert.equal(deleted.Successful.length, 2);
    assert.equal((await client.send(new sqs.GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }))).Attributes.ApproximateNumberOfMessagesNotVisible, '0');
    await client.send(new sqs.TagQueueCommand({ QueueUrl, Tags: { b: '2' } }));
    await client.send(new sqs.UntagQueueCommand({ QueueUrl, TagKeys: ['a'] }));
    assert.deepEqual((await client.send(new sqs.ListQueueTagsCommand({ QueueUrl }))).Tags, { b: '2' });
    await client.send(new sqs.DeleteQueueCommand({ QueueUrl }));
    client.destroy();
  });

  await t.test('the AWS CLI: tags and attributes', () => {
    const env = { ...process.env, AWS_ACCESS_KEY_ID: KEY, AWS_SECRET_ACCESS_KEY: SECRET, AWS_DEFAULT_REGION: 'us-east-1', HOME: dir };
    const aws = (...args) => {
      const out = run('/usr/bin/aws', ['--endpoint-url', gateway.url, '--output', 'json', 'sqs', ...args], { env });
      return out.trim() === '' ? {} : JSON.parse(out);
    };
    const { QueueUrl } = aws('create-queue', '--queue-name', 'cli-features', '--attributes', 'DelaySeconds=3');
    aws('tag-queue', '--queue-url', QueueUrl, '--tags', 'owner=cli');
    assert.deepEqual(aws('list-queue-tags', '--queue-url', QueueUrl).Tags, { owner: 'cli' });
    assert.equal(aws('get-queue-attributes', '--queue-url', QueueUrl, '--attribute-names', 'DelaySeconds').Attributes.DelaySeconds, '3');
    aws('delete-queue', '--queue-url', QueueUrl);
  });
});
