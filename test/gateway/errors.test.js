'use strict';
/*-------------------------------------------------------------------------
 *
 * errors.test.js
 *		Every action and every error of the gateway, end to end, through
 *		the real SQS clients of both wire protocols, and requests no client
 *		would send.
 *
 * A throwaway PostgreSQL with the extension and the gateway on it
 * (end_to_end.js), with two access keys: one for a role allowed
 * everything, one for a role allowed only 'read' on every queue.  Then:
 *
 *   every action the gateway implements succeeds, in one scenario run by
 *   @aws-sdk/client-sqs (JSON 1.0) and by boto3 (Debian 12's speaks
 *   Query, sid's JSON) through boto3_calls.py;
 *
 *   a table of (action, bad input) cases, each with the SQS error code it
 *   must get: through the JavaScript SDK the HTTP status, the error's name
 *   and its x-amzn-query-error header ("Code;Sender"), and through boto3
 *   the code and status; a few through the AWS CLI (its exit code and the
 *   code in its stderr).  Signatures refused (no signature, one cut short,
 *   an unknown key, a wrong secret, a clock 20 minutes off) are among the
 *   cases: sigv4.test.js checks what verify() makes of each way to spoil a
 *   signature, this file what each client reads back from the gateway;
 *
 *   raw HTTP as a hostile client sends it (node:net): a body over the
 *   limit, declared or streamed, a client trickling bytes, bytes that are
 *   not JSON, not a form, not HTTP, headers too large, a wrong Content-Type
 *   or no X-Amz-Target, members of the wrong type.  Each must get its
 *   protocol's error, never a 500, and the gateway must live on and log no
 *   failure of its own.
 *
 * The codes, statuses and Query codes are SQS's (gateway/lib/sqs/errors.js
 * says where they come from; docs/sqs.md lists which the gateway answers).
 * Run by test/gateway/run.sh.
 *
 *-------------------------------------------------------------------------
 */

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { KEY, SECRET, startDatabase, startGateway } = require('./end_to_end');
const { runClient, boto3Calls: runBoto3 } = require('./client_processes');
const { ERRORS } = require('../../gateway/lib/sqs/errors');

const AWS_CLI = '/usr/bin/aws';
const ACCOUNT = '000000000000';
const READER_KEY = 'AKIDREADONLYTEST';
const READER_SECRET = 'read-only/secret+0123456789abcdefEXAMPLE';
// short, so that the slow clients below are cut off soon
const REQUEST_TIMEOUT_SECONDS = 2;
const MIB = 1024 * 1024;

const load = (name) => require(require.resolve(name, { paths: [__dirname] }));

/* ---------------------------------------------------------------- */
/* The gateway                                                       */
/* ---------------------------------------------------------------- */

let gateway;
let database;
let endpoint;
const queueUrl = (name) => `${endpoint}/${ACCOUNT}/${name}`;

test.before(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-errors-'));
  database = startDatabase(dir, 55543);
  database.psql('CREATE ROLE sqs_reader NOLOGIN');
  database.psql("SELECT queue_grant('*', 'sqs_reader', 'read')");
  gateway = await startGateway(dir, database.dsn, {
    requestTimeout: REQUEST_TIMEOUT_SECONDS,
    credentials: [
      { accessKeyId: KEY, secretAccessKey: SECRET, role: 'sqs_app' },
      { accessKeyId: READER_KEY, secretAccessKey: READER_SECRET, role: 'sqs_reader' },
    ],
  });
  endpoint = gateway.url;
});

test.after(async () => {
  if (gateway) await gateway.stop();
  if (database) database.stop();
});

// Lines the gateway logs for a failure of its own (an InternalFailure).
function gatewayFailures() {
  return gateway.errors().split('\n').filter((line) => line.startsWith('gateway: request '));
}

/* ---------------------------------------------------------------- */
/* The clients                                                       */
/* ---------------------------------------------------------------- */

// @aws-sdk/client-sqs, keeping the status and headers of its last answer
// (the SDK does not show x-amzn-query-error itself).  tamper takes the
// signature away ('unsigned') or cuts it short ('incomplete') after the
// SDK signed; clockOffsetMs moves the clock it signs with.
function jsClient({ key = KEY, secret = SECRET, clockOffsetMs = 0, tamper } = {}) {
  const sqs = load('@aws-sdk/client-sqs');
  const { NodeHttpHandler } = load('@smithy/node-http-handler');
  class RecordingHandler extends NodeHttpHandler {
    async handle(request, options) {
      const answer = await super.handle(request, options);
      this.last = { status: answer.response.statusCode, headers: answer.response.headers };
      return answer;
    }
  }
  const requestHandler = new RecordingHandler();
  const client = new sqs.SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: key, secretAccessKey: secret },
    maxAttempts: 1,
    systemClockOffset: clockOffsetMs,
    useQueueUrlAsEndpoint: false,
    requestHandler,
  });
  if (tamper) {
    // the deserialize step is the last before the request is sent: signed
    client.middlewareStack.add((next) => async (args) => {
      const { headers } = args.request;
      if (tamper === 'unsigned') delete headers.authorization;
      else headers.authorization = headers.authorization.split(',')[0];
      return next(args);
    }, { step: 'deserialize', priority: 'low', name: 'tamperWithSignature' });
  }
  return {
    send: (action, input) => client.send(new sqs[`${action}Command`](input)),
    last: () => requestHandler.last,
    destroy: () => client.destroy(),
  };
}

function run(command, args, input, env = {}) {
  return runClient(command, args, input, { key: KEY, secret: SECRET, env });
}

// boto3 through boto3_calls.py, botocore's own checks of the parameters
// off: calls [{ action, params, key?, secret?, skew_seconds?, tamper? }]
// -> { versions, answers }
function boto3Calls(calls) {
  return runBoto3({ endpoint, key: KEY, secret: SECRET, validate: false, calls: calls.map(toPlan) }, { key: KEY, secret: SECRET });
}

async function awsCli(args, env) {
  return run(AWS_CLI, ['--endpoint-url', endpoint, ...args, '--output', 'json', '--no-cli-pager'], '', env);
}

// Binary values as {"$base64": ...}, as boto3_calls.py writes them; no
// undefined members, no SDK metadata.
function toPlan(value) {
  if (value instanceof Uint8Array) return { $base64: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(toPlan);
  if (value !== null && typeof value === 'object') {
    const plain = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined && key !== '$metadata') plain[key] = toPlan(item);
    }
    return plain;
  }
  return value;
}

// {"$from": [step, key, ...]}: a value of an earlier step's answer.
function resolved(value, answers) {
  if (Array.isArray(value)) return value.map((item) => resolved(item, answers));
  if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    if (Object.keys(value).length === 1 && value.$from) {
      const [step, ...keys] = value.$from;
      return keys.reduce((found, key) => found[key], answers[step].response);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item, answers)]));
  }
  return value;
}

/* ---------------------------------------------------------------- */
/* Every action succeeding                                           */
/* ---------------------------------------------------------------- */

// One scenario for every client: steps of { action, params }, params
// naming earlier answers with {"$from": ...}; check(answers) then reads
// what came back.
function scenario(prefix) {
  const source = `${prefix}-source`;
  // the dead-letter queue: queue b
  const dlqArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:${prefix}-b`;
  const tagged = `${prefix}-t`;
  const fifo = `${prefix}-f.fifo`;
  const from = (...keys) => ({ $from: keys });
  const steps = [
    /* 0 */ { action: 'CreateQueue', params: { QueueName: source, Attributes: { VisibilityTimeout: '40' } } },
    /* 1 */ { action: 'CreateQueue', params: { QueueName: source, Attributes: { VisibilityTimeout: '40' } } },
    /* 2 */ { action: 'CreateQueue', params: { QueueName: `${prefix}-a` } },
    /* 3 */ { action: 'CreateQueue', params: { QueueName: `${prefix}-b`, Attributes: { MaximumMessageSize: '2048' } } },
    /* 4 */ { action: 'GetQueueUrl', params: { QueueName: source } },
    /* 5 */ { action: 'ListQueues', params: { QueueNamePrefix: `${prefix}-` } },
    /* 6 */ { action: 'ListQueues', params: { QueueNamePrefix: `${prefix}-`, MaxResults: 2 } },
    /* 7 */ { action: 'ListQueues', params: { QueueNamePrefix: `${prefix}-`, MaxResults: 2, NextToken: from(6, 'NextToken') } },
    /* 8 */ { action: 'SetQueueAttributes', params: { QueueUrl: from(0, 'QueueUrl'), Attributes: {
      VisibilityTimeout: '45', RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }) } } },
    /* 9 */ { action: 'GetQueueAttributes', params: { QueueUrl: from(0, 'QueueUrl'), AttributeNames: ['VisibilityTimeout', 'RedrivePolicy', 'QueueArn'] } },
    /* 10 */ { action: 'ListDeadLetterSourceQueues', params: { QueueUrl: queueUrl(`${prefix}-b`) } },
    /* 11 */ { action: 'SendMessage', params: { QueueUrl: from(0, 'QueueUrl'), MessageBody: 'first \u{1F600}',
      MessageAttributes: { kind: { DataType: 'String', StringValue: 'greeting' }, raw: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 255]) } } } },
    /* 12 */ { action: 'SendMessageBatch', params: { QueueUrl: from(0, 'QueueUrl'), Entries: [
      { Id: 'b1', MessageBody: 'second' }, { Id: 'b2', MessageBody: 'third', DelaySeconds: 0 },
      { Id: 'b3', MessageBody: 'fourth', MessageAttributes: { n: { DataType: 'Number', StringValue: '-1.5e3' } } }] } },
    /* 13 */ { action: 'ReceiveMessage', params: { QueueUrl: from(0, 'QueueUrl'), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
      AttributeNames: ['All'], MessageAttributeNames: ['All'], VisibilityTimeout: 60 } },
    /* 14 */ { action: 'DeleteMessage', params: { QueueUrl: from(0, 'QueueUrl'), ReceiptHandle: from(13, 'Messages', 0, 'ReceiptHandle') } },
    /* 15 */ { action: 'DeleteMessageBatch', params: { QueueUrl: from(0, 'QueueUrl'), Entries: [1, 2, 3].map((i) => (
      { Id: `d${i}`, ReceiptHandle: from(13, 'Messages', i, 'ReceiptHandle') })) } },
    /* 16 */ { action: 'GetQueueAttributes', params: { QueueUrl: from(0, 'QueueUrl'), AttributeNames: ['All'] } },
    /* 17 */ { action: 'SendMessage', params: { QueueUrl: from(2, 'QueueUrl'), MessageBody: 'purged' } },
    /* 18 */ { action: 'PurgeQueue', params: { QueueUrl: from(2, 'QueueUrl') } },
    /* 19 */ { action: 'ReceiveMessage', params: { QueueUrl: from(2, 'QueueUrl') } },
    /* 20 */ { action: 'DeleteQueue', params: { QueueUrl: from(0, 'QueueUrl') } },
    /* 21 */ { action: 'DeleteQueue', params: { QueueUrl: from(2, 'QueueUrl') } },
    /* 22 */ { action: 'DeleteQueue', params: { QueueUrl: from(3, 'QueueUrl') } },
    /* 23 */ { action: 'ListQueues', params: { QueueNamePrefix: `${prefix}-` } },
    /* 24 */ { action: 'CreateQueue', params: { QueueName: tagged, tags: { team: 'a', env: 'test' } } },
    /* 25 */ { action: 'TagQueue', params: { QueueUrl: from(24, 'QueueUrl'), Tags: { cost: '7' } } },
    /* 26 */ { action: 'UntagQueue', params: { QueueUrl: from(24, 'QueueUrl'), TagKeys: ['env'] } },
    /* 27 */ { action: 'ListQueueTags', params: { QueueUrl: from(24, 'QueueUrl') } },
    /* 28 */ { action: 'SendMessage', params: { QueueUrl: from(24, 'QueueUrl'), MessageBody: 'leased' } },
    /* 29 */ { action: 'ReceiveMessage', params: { QueueUrl: from(24, 'QueueUrl'), WaitTimeSeconds: 1, VisibilityTimeout: 30 } },
    /* 30 */ { action: 'ChangeMessageVisibility', params: { QueueUrl: from(24, 'QueueUrl'),
      ReceiptHandle: from(29, 'Messages', 0, 'ReceiptHandle'), VisibilityTimeout: 60 } },
    /* 31 */ { action: 'ChangeMessageVisibilityBatch', params: { QueueUrl: from(24, 'QueueUrl'), Entries: [
      { Id: 'c1', ReceiptHandle: from(29, 'Messages', 0, 'ReceiptHandle'), VisibilityTimeout: 0 }] } },
    /* 32 */ { action: 'CreateQueue', params: { QueueName: `${prefix}-d` } },
    /* 33 */ { action: 'SetQueueAttributes', params: { QueueUrl: from(24, 'QueueUrl'), Attributes: {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${prefix}-d`, maxReceiveCount: 5 }) } } },
    /* 34 */ { action: 'StartMessageMoveTask', params: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${prefix}-d` } },
    /* 35 */ { action: 'ListMessageMoveTasks', params: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${prefix}-d` } },
    /* 36 */ { action: 'CreateQueue', params: { QueueName: fifo, Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' } } },
    /* 37 */ { action: 'SendMessage', params: { QueueUrl: from(36, 'QueueUrl'), MessageBody: 'in order', MessageGroupId: 'g' } },
    /* 38 */ { action: 'SendMessage', params: { QueueUrl: from(36, 'QueueUrl'), MessageBody: 'in order', MessageGroupId: 'g' } },
    /* 39 */ { action: 'ReceiveMessage', params: { QueueUrl: from(36, 'QueueUrl'), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
      AttributeNames: ['All'] } },
    /* 40 */ { action: 'DeleteQueue', params: { QueueUrl: from(24, 'QueueUrl') } },
    /* 41 */ { action: 'DeleteQueue', params: { QueueUrl: from(32, 'QueueUrl') } },
    /* 42 */ { action: 'DeleteQueue', params: { QueueUrl: from(36, 'QueueUrl') } },
  ];
  const check = (answers) => {
    const failed = answers.map((a, i) => [i, a]).filter(([, a]) => !a.ok);
    assert.deepEqual(failed, [], 'every step succeeds');
    const r = answers.map((a) => a.response);
    const url = queueUrl(source);
    assert.deepEqual([r[0].QueueUrl, r[1].QueueUrl, r[4].QueueUrl], [url, url, url]);
    const all = [url, queueUrl(`${prefix}-a`), queueUrl(`${prefix}-b`)].sort();
    // no RedrivePolicy yet, so no poison queue: the three, in name order
    assert.deepEqual(r[5].QueueUrls, all);
    assert.deepEqual(r[6].QueueUrls, all.slice(0, 2));
    assert.ok(r[6].NextToken);
    assert.deepEqual(r[7].QueueUrls, all.slice(2));
    assert.equal(r[7].NextToken, undefined);
    assert.deepEqual(r[9].Attributes, { VisibilityTimeout: '45', QueueArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${source}`,
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }) });
    assert.deepEqual(r[10].queueUrls, [url]);
    assert.ok(r[11].MessageId && r[11].MD5OfMessageAttributes);
    assert.deepEqual(r[12].Successful.map((e) => e.Id), ['b1', 'b2', 'b3']);
    assert.deepEqual(r[12].Failed || [], []);
    const messages = r[13].Messages;
    assert.deepEqual(messages.map((m) => m.Body), ['first \u{1F600}', 'second', 'third', 'fourth']);
    assert.deepEqual(messages[0].MessageAttributes, { kind: { DataType: 'String', StringValue: 'greeting' },
      raw: { DataType: 'Binary', BinaryValue: { $base64: 'AAH/' } } });
    assert.equal(messages[0].Attributes.ApproximateReceiveCount, '1');
    assert.deepEqual(r[15].Successful.map((e) => e.Id), ['d1', 'd2', 'd3']);
    assert.equal(r[16].Attributes.ApproximateNumberOfMessages, '0');
    assert.equal(r[16].Attributes.ApproximateNumberOfMessagesNotVisible, '0');
    assert.equal(r[19].Messages, undefined);
    assert.ok(!(r[23].QueueUrls || []).some((u) => all.includes(u)), 'the queues are gone');
    assert.deepEqual(r[27].Tags, { team: 'a', cost: '7' });
    assert.deepEqual(r[29].Messages.map((m) => m.Body), ['leased']);
    assert.deepEqual(r[31].Successful.map((e) => e.Id), ['c1']);
    assert.ok(r[34].TaskHandle);
    assert.deepEqual(r[35].Results.map((t) => [t.Status, t.ApproximateNumberOfMessagesMoved]), [['COMPLETED', 0]]);
    assert.equal(r[38].MessageId, r[37].MessageId, 'the same body within 5 minutes is a repeat');
    assert.match(r[37].SequenceNumber, /^[0-9]{20}$/);
    assert.deepEqual(r[39].Messages.map((m) => [m.Body, m.Attributes.MessageGroupId, m.Attributes.SequenceNumber]),
      [['in order', 'g', r[37].SequenceNumber]]);
  };
  return { steps, check };
}

test('every action succeeds through @aws-sdk/client-sqs (JSON protocol)', async () => {
  const client = jsClient();
  const { steps, check } = scenario('ok-json');
  const answers = [];
  try {
    for (const step of steps) {
      const input = resolved(step.params, answers);
      answers.push(await client.send(step.action, input).then(
        (response) => ({ ok: true, response: toPlan(response) }),
        (err) => ({ ok: false, code: err.name, message: err.message })));
    }
  } finally {
    client.destroy();
  }
  check(answers);
});

test('every action succeeds through boto3', async (t) => {
  const { steps, check } = scenario('ok-boto3');
  const { versions, answers } = await boto3Calls(steps);
  t.diagnostic(`boto3 ${versions.boto3}, botocore ${versions.botocore}, ${versions.protocol} protocol`);
  check(answers);
});

/* ---------------------------------------------------------------- */
/* The errors, case by case                                          */
/* ---------------------------------------------------------------- */

const ERROR_QUEUE = 'err-q';
const SMALL_QUEUE = 'err-small';
const FORGED_HANDLE = 'AAAA'.repeat(20);

// { name, action, input, code } and what else a case needs: json/query
// codes where the protocols differ, only: 'json' for what no Query client
// can send, as: 'reader' for the read-only key, key/secret, skewSeconds,
// tamper, message (a pattern the message must match).
function errorCases() {
  const q = queueUrl(ERROR_QUEUE);
  const none = queueUrl('err-none');
  const entries = (n, make = (i) => ({ Id: `e${i}`, MessageBody: `m${i}` })) => Array.from({ length: n }, (_, i) => make(i));
  const attribute = (value) => ({ QueueUrl: q, MessageBody: 'x', MessageAttributes: { a: value } });
  const cases = [
    // CreateQueue
    { name: 'a queue name with a space', action: 'CreateQueue', input: { QueueName: 'bad name' }, code: 'InvalidParameterValue' },
    { name: 'a queue name of 81 characters', action: 'CreateQueue', input: { QueueName: 'q'.repeat(81) }, code: 'InvalidParameterValue' },
    { name: 'a queue name with a NUL', action: 'CreateQueue', input: { QueueName: 'a\u0000b' }, code: 'InvalidParameterValue', only: 'json' },
    { name: 'no queue name', action: 'CreateQueue', input: {}, code: 'MissingParameter' },
    { name: 'an existing queue, another VisibilityTimeout', action: 'CreateQueue',
      input: { QueueName: ERROR_QUEUE, Attributes: { VisibilityTimeout: '31' } }, code: 'QueueNameExists', message: /VisibilityTimeout/ },
    { name: 'VisibilityTimeout 43201', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: { VisibilityTimeout: '43201' } },
      code: 'InvalidAttributeValue' },
    { name: 'MaximumMessageSize over 1 MiB', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: { MaximumMessageSize: '1048577' } },
      code: 'InvalidAttributeValue' },
    { name: 'MessageRetentionPeriod not a number', action: 'CreateQueue',
      input: { QueueName: 'err-new', Attributes: { MessageRetentionPeriod: 'week' } }, code: 'InvalidAttributeValue' },
    { name: 'an unknown attribute', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: { Colour: 'blue' } },
      code: 'InvalidAttributeName' },
    { name: 'a RedrivePolicy to no queue', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:elsewhere`, maxReceiveCount: 3 }) } },
    code: 'InvalidParameterValue', message: /Dead letter target does not exist/ },
    { name: 'a RedrivePolicy to a queue of another account', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:123456789012:${SMALL_QUEUE}`, maxReceiveCount: 3 }) } },
    code: 'InvalidAttributeValue' },
    { name: 'a RedrivePolicy with maxReceiveCount 0', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: {
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${SMALL_QUEUE}`, maxReceiveCount: 0 }) } },
    code: 'InvalidAttributeValue' },
    { name: 'FifoQueue on a name without .fifo', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: { FifoQueue: 'true' } },
      code: 'InvalidAttributeValue' },
    { name: 'ContentBasedDeduplication on a standard queue', action: 'CreateQueue',
      input: { QueueName: 'err-new', Attributes: { ContentBasedDeduplication: 'true' } }, code: 'InvalidAttributeName' },
    { name: 'DelaySeconds 901 on a queue', action: 'CreateQueue', input: { QueueName: 'err-new', Attributes: { DelaySeconds: '901' } },
      code: 'InvalidAttributeValue' },
    { name: 'DelaySeconds on a FIFO queue', action: 'CreateQueue', input: { QueueName: 'err-new.fifo', Attributes: { DelaySeconds: '5' } },
      code: 'InvalidAttributeValue' },
    { name: 'ReceiveMessageWaitTimeSeconds 21', action: 'CreateQueue',
      input: { QueueName: 'err-new', Attributes: { ReceiveMessageWaitTimeSeconds: '21' } }, code: 'InvalidAttributeValue' },
    { name: 'a tag key of 129 characters', action: 'CreateQueue', input: { QueueName: 'err-new', tags: { ['k'.repeat(129)]: 'v' } },
      code: 'InvalidParameterValue' },
    // GetQueueUrl, ListQueues
    { name: 'GetQueueUrl of no queue', action: 'GetQueueUrl', input: { QueueName: 'err-none' }, code: 'QueueDoesNotExist' },
    { name: 'ListQueues MaxResults 0', action: 'ListQueues', input: { MaxResults: 0 }, code: 'InvalidParameterValue' },
    { name: 'ListQueues MaxResults 1001', action: 'ListQueues', input: { MaxResults: 1001 }, code: 'InvalidParameterValue' },
    { name: 'ListQueues MaxResults as a string', action: 'ListQueues', input: { MaxResults: '10' }, code: 'SerializationException', only: 'json' },
    // GetQueueAttributes, SetQueueAttributes, ListDeadLetterSourceQueues
    { name: 'GetQueueAttributes of no queue', action: 'GetQueueAttributes', input: { QueueUrl: none, AttributeNames: ['All'] },
      code: 'QueueDoesNotExist' },
    { name: 'GetQueueAttributes of a URL of another account', action: 'GetQueueAttributes',
      input: { QueueUrl: `${endpoint}/123456789012/${ERROR_QUEUE}` }, code: 'QueueDoesNotExist' },
    { name: 'GetQueueAttributes of a URL with a broken escape', action: 'GetQueueAttributes',
      input: { QueueUrl: `${endpoint}/${ACCOUNT}/%ZZ` }, code: 'QueueDoesNotExist' },
    { name: 'an unknown attribute name', action: 'GetQueueAttributes', input: { QueueUrl: q, AttributeNames: ['Colour'] },
      code: 'InvalidAttributeName' },
    { name: 'SetQueueAttributes VisibilityTimeout -1', action: 'SetQueueAttributes',
      input: { QueueUrl: q, Attributes: { VisibilityTimeout: '-1' } }, code: 'InvalidAttributeValue' },
    { name: 'SetQueueAttributes FifoQueue', action: 'SetQueueAttributes', input: { QueueUrl: q, Attributes: { FifoQueue: 'true' } },
      code: 'InvalidAttributeName' },
    { name: 'SetQueueAttributes a RedrivePolicy that is not JSON', action: 'SetQueueAttributes',
      input: { QueueUrl: q, Attributes: { RedrivePolicy: '{not json' } }, code: 'InvalidAttributeValue' },
    { name: 'SetQueueAttributes without attributes', action: 'SetQueueAttributes', input: { QueueUrl: q }, code: 'MissingParameter' },
    { name: 'SetQueueAttributes of no queue', action: 'SetQueueAttributes', input: { QueueUrl: none, Attributes: { VisibilityTimeout: '1' } },
      code: 'QueueDoesNotExist' },
    { name: 'ListDeadLetterSourceQueues of no queue', action: 'ListDeadLetterSourceQueues', input: { QueueUrl: none },
      code: 'QueueDoesNotExist' },
    { name: 'ListDeadLetterSourceQueues MaxResults 1001', action: 'ListDeadLetterSourceQueues', input: { QueueUrl: q, MaxResults: 1001 },
      code: 'InvalidParameterValue' },
    // DeleteQueue, PurgeQueue
    { name: 'DeleteQueue of no queue', action: 'DeleteQueue', input: { QueueUrl: none }, code: 'QueueDoesNotExist' },
    { name: 'DeleteQueue without QueueUrl', action: 'DeleteQueue', input: {}, code: 'MissingParameter' },
    { name: 'PurgeQueue of no queue', action: 'PurgeQueue', input: { QueueUrl: none }, code: 'QueueDoesNotExist' },
    // SendMessage
    { name: 'SendMessage to no queue', action: 'SendMessage', input: { QueueUrl: none, MessageBody: 'x' }, code: 'QueueDoesNotExist' },
    { name: 'SendMessage without a body', action: 'SendMessage', input: { QueueUrl: q }, code: 'MissingParameter' },
    { name: 'SendMessage of an empty body', action: 'SendMessage', input: { QueueUrl: q, MessageBody: '' }, code: 'MissingParameter' },
    { name: 'a body with a control character', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'bell \u0007' },
      code: 'InvalidMessageContents' },
    { name: 'a body with U+FFFE', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'not \uFFFE a character' },
      code: 'InvalidMessageContents' },
    { name: 'DelaySeconds 901', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x', DelaySeconds: 901 },
      code: 'InvalidParameterValue' },
    { name: 'DelaySeconds -1', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x', DelaySeconds: -1 }, code: 'InvalidParameterValue' },
    { name: 'a body of 1 MiB and a byte', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x'.repeat(MIB + 1) },
      code: 'InvalidParameterValue', message: /Message must be shorter than 1048576 bytes/ },
    { name: 'a body over the queue\'s MaximumMessageSize', action: 'SendMessage',
      input: { QueueUrl: queueUrl(SMALL_QUEUE), MessageBody: 'x'.repeat(1025) },
      code: 'InvalidParameterValue', message: /Message must be shorter than 1024 bytes/ },
    { name: 'an attribute name with a space', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x',
      MessageAttributes: { 'bad name': { DataType: 'String', StringValue: 'v' } } }, code: 'InvalidParameterValue' },
    { name: 'an attribute name AWS keeps', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x',
      MessageAttributes: { 'AWS.trace': { DataType: 'String', StringValue: 'v' } } }, code: 'InvalidParameterValue' },
    { name: 'an attribute of no type', action: 'SendMessage', input: attribute({ StringValue: 'v' }), code: 'MissingParameter' },
    { name: 'an attribute of an unknown type', action: 'SendMessage', input: attribute({ DataType: 'Text', StringValue: 'v' }),
      code: 'InvalidParameterValue' },
    { name: 'an empty String attribute', action: 'SendMessage', input: attribute({ DataType: 'String', StringValue: '' }),
      code: 'InvalidParameterValue' },
    { name: 'a Number attribute that is no number', action: 'SendMessage', input: attribute({ DataType: 'Number', StringValue: 'twelve' }),
      code: 'InvalidParameterValue' },
    { name: 'eleven attributes', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x', MessageAttributes: Object.fromEntries(
      entries(11, (i) => [`a${i}`, { DataType: 'String', StringValue: 'v' }])) }, code: 'InvalidParameterValue' },
    { name: 'DelaySeconds as a string', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x', DelaySeconds: '5' },
      code: 'SerializationException', only: 'json' },
    // SendMessageBatch
    { name: 'SendMessageBatch of no entries', action: 'SendMessageBatch', input: { QueueUrl: q, Entries: [] }, code: 'EmptyBatchRequest' },
    { name: 'SendMessageBatch of 11 entries', action: 'SendMessageBatch', input: { QueueUrl: q, Entries: entries(11) },
      code: 'TooManyEntriesInBatchRequest' },
    { name: 'SendMessageBatch with an Id twice', action: 'SendMessageBatch',
      input: { QueueUrl: q, Entries: [{ Id: 'same', MessageBody: 'a' }, { Id: 'same', MessageBody: 'b' }] }, code: 'BatchEntryIdsNotDistinct' },
    { name: 'SendMessageBatch with an Id of a dot', action: 'SendMessageBatch', input: { QueueUrl: q, Entries: [{ Id: 'a.b', MessageBody: 'a' }] },
      code: 'InvalidBatchEntryId' },
    { name: 'SendMessageBatch with an Id of 81 characters', action: 'SendMessageBatch',
      input: { QueueUrl: q, Entries: [{ Id: 'i'.repeat(81), MessageBody: 'a' }] }, code: 'InvalidBatchEntryId' },
    { name: 'SendMessageBatch of more than 1 MiB in all', action: 'SendMessageBatch', input: { QueueUrl: q, Entries: entries(3, (i) => (
      { Id: `big${i}`, MessageBody: 'x'.repeat(400 * 1024) })) }, code: 'BatchRequestTooLong', message: /cannot be longer than 1048576 bytes/ },
    { name: 'SendMessageBatch of an entry without a body', action: 'SendMessageBatch', input: { QueueUrl: q, Entries: [{ Id: 'a' }] },
      code: 'MissingParameter' },
    { name: 'SendMessageBatch to no queue', action: 'SendMessageBatch', input: { QueueUrl: none, Entries: entries(1) },
      code: 'QueueDoesNotExist' },
    // ReceiveMessage
    { name: 'ReceiveMessage from no queue', action: 'ReceiveMessage', input: { QueueUrl: none }, code: 'QueueDoesNotExist' },
    { name: 'MaxNumberOfMessages 11', action: 'ReceiveMessage', input: { QueueUrl: q, MaxNumberOfMessages: 11 }, code: 'InvalidParameterValue' },
    { name: 'MaxNumberOfMessages 0', action: 'ReceiveMessage', input: { QueueUrl: q, MaxNumberOfMessages: 0 }, code: 'InvalidParameterValue' },
    { name: 'WaitTimeSeconds 21', action: 'ReceiveMessage', input: { QueueUrl: q, WaitTimeSeconds: 21 }, code: 'InvalidParameterValue' },
    { name: 'VisibilityTimeout 43201', action: 'ReceiveMessage', input: { QueueUrl: q, VisibilityTimeout: 43201 }, code: 'InvalidParameterValue' },
    { name: 'MaxNumberOfMessages as a string', action: 'ReceiveMessage', input: { QueueUrl: q, MaxNumberOfMessages: '10' },
      code: 'SerializationException', only: 'json' },
    { name: 'AttributeNames not a list', action: 'ReceiveMessage', input: { QueueUrl: q, AttributeNames: 'All' },
      code: 'SerializationException', only: 'json' },
    // DeleteMessage, DeleteMessageBatch
    { name: 'a forged receipt handle', action: 'DeleteMessage', input: { QueueUrl: q, ReceiptHandle: FORGED_HANDLE },
      code: 'ReceiptHandleIsInvalid' },
    { name: 'a receipt handle of no form at all', action: 'DeleteMessage', input: { QueueUrl: q, ReceiptHandle: 'not a handle' },
      code: 'ReceiptHandleIsInvalid' },
    { name: 'DeleteMessage without a handle', action: 'DeleteMessage', input: { QueueUrl: q }, code: 'MissingParameter' },
    { name: 'DeleteMessage on no queue', action: 'DeleteMessage', input: { QueueUrl: none, ReceiptHandle: FORGED_HANDLE },
      code: 'QueueDoesNotExist' },
    { name: 'DeleteMessageBatch on no queue', action: 'DeleteMessageBatch', input: { QueueUrl: none,
      Entries: [{ Id: 'a', ReceiptHandle: FORGED_HANDLE }] }, code: 'QueueDoesNotExist' },
    { name: 'DeleteMessageBatch of no entries', action: 'DeleteMessageBatch', input: { QueueUrl: q, Entries: [] }, code: 'EmptyBatchRequest' },
    { name: 'DeleteMessageBatch of 11 entries', action: 'DeleteMessageBatch',
      input: { QueueUrl: q, Entries: entries(11, (i) => ({ Id: `e${i}`, ReceiptHandle: FORGED_HANDLE })) }, code: 'TooManyEntriesInBatchRequest' },
    { name: 'DeleteMessageBatch with an Id twice', action: 'DeleteMessageBatch', input: { QueueUrl: q,
      Entries: [{ Id: 'x', ReceiptHandle: FORGED_HANDLE }, { Id: 'x', ReceiptHandle: FORGED_HANDLE }] }, code: 'BatchEntryIdsNotDistinct' },
    { name: 'DeleteMessageBatch with an Id of a space', action: 'DeleteMessageBatch', input: { QueueUrl: q,
      Entries: [{ Id: 'a b', ReceiptHandle: FORGED_HANDLE }] }, code: 'InvalidBatchEntryId' },
    { name: 'DeleteMessageBatch of an entry without a handle', action: 'DeleteMessageBatch', input: { QueueUrl: q, Entries: [{ Id: 'a' }] },
      code: 'MissingParameter' },
    // tags
    { name: 'TagQueue of no queue', action: 'TagQueue', input: { QueueUrl: none, Tags: { a: 'b' } }, code: 'QueueDoesNotExist' },
    { name: 'TagQueue of 51 tags', action: 'TagQueue', input: { QueueUrl: q, Tags: Object.fromEntries(entries(51, (i) => [`t${i}`, 'v'])) },
      code: 'InvalidParameterValue' },
    { name: 'TagQueue of a value of 257 characters', action: 'TagQueue', input: { QueueUrl: q, Tags: { a: 'v'.repeat(257) } },
      code: 'InvalidParameterValue' },
    { name: 'TagQueue without tags', action: 'TagQueue', input: { QueueUrl: q }, code: 'MissingParameter' },
    { name: 'UntagQueue of an empty key', action: 'UntagQueue', input: { QueueUrl: q, TagKeys: [''] }, code: 'InvalidParameterValue' },
    { name: 'ListQueueTags of no queue', action: 'ListQueueTags', input: { QueueUrl: none }, code: 'QueueDoesNotExist' },
    // ChangeMessageVisibility, ChangeMessageVisibilityBatch
    { name: 'ChangeMessageVisibility with a forged handle', action: 'ChangeMessageVisibility',
      input: { QueueUrl: q, ReceiptHandle: FORGED_HANDLE, VisibilityTimeout: 10 }, code: 'ReceiptHandleIsInvalid' },
    { name: 'ChangeMessageVisibility on no queue', action: 'ChangeMessageVisibility',
      input: { QueueUrl: none, ReceiptHandle: FORGED_HANDLE, VisibilityTimeout: 10 }, code: 'QueueDoesNotExist' },
    { name: 'ChangeMessageVisibility to 43201', action: 'ChangeMessageVisibility',
      input: { QueueUrl: q, ReceiptHandle: FORGED_HANDLE, VisibilityTimeout: 43201 }, code: 'InvalidParameterValue' },
    { name: 'ChangeMessageVisibility without a timeout', action: 'ChangeMessageVisibility',
      input: { QueueUrl: q, ReceiptHandle: FORGED_HANDLE }, code: 'MissingParameter' },
    { name: 'ChangeMessageVisibilityBatch of no entries', action: 'ChangeMessageVisibilityBatch', input: { QueueUrl: q, Entries: [] },
      code: 'EmptyBatchRequest' },
    { name: 'ChangeMessageVisibilityBatch of 11 entries', action: 'ChangeMessageVisibilityBatch', input: { QueueUrl: q,
      Entries: entries(11, (i) => ({ Id: `e${i}`, ReceiptHandle: FORGED_HANDLE, VisibilityTimeout: 1 })) }, code: 'TooManyEntriesInBatchRequest' },
    { name: 'ChangeMessageVisibilityBatch on no queue', action: 'ChangeMessageVisibilityBatch', input: { QueueUrl: none,
      Entries: [{ Id: 'a', ReceiptHandle: FORGED_HANDLE, VisibilityTimeout: 1 }] }, code: 'QueueDoesNotExist' },
    // FIFO and standard queues' messages
    { name: 'a MessageDeduplicationId on a standard queue', action: 'SendMessage',
      input: { QueueUrl: q, MessageBody: 'x', MessageDeduplicationId: 'd' }, code: 'InvalidParameterValue' },
    { name: 'a MessageGroupId of 129 characters', action: 'SendMessage',
      input: { QueueUrl: q, MessageBody: 'x', MessageGroupId: 'g'.repeat(129) }, code: 'InvalidParameterValue' },
    // message move tasks
    { name: 'StartMessageMoveTask from no queue', action: 'StartMessageMoveTask',
      input: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:err-none` }, code: 'ResourceNotFoundException' },
    { name: 'StartMessageMoveTask from a queue that is no dead-letter queue', action: 'StartMessageMoveTask',
      input: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${ERROR_QUEUE}` }, code: 'InvalidParameterValue' },
    { name: 'StartMessageMoveTask at 501 messages a second', action: 'StartMessageMoveTask',
      input: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${ERROR_QUEUE}`, MaxNumberOfMessagesPerSecond: 501 }, code: 'InvalidParameterValue' },
    { name: 'ListMessageMoveTasks of no queue', action: 'ListMessageMoveTasks',
      input: { SourceArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:err-none` }, code: 'ResourceNotFoundException' },
    { name: 'CancelMessageMoveTask of no task', action: 'CancelMessageMoveTask', input: { TaskHandle: 'no-such-task' },
      code: 'ResourceNotFoundException' },
    // actions SQS has and the gateway has not
    { name: 'AddPermission, an action the gateway does not know', action: 'AddPermission',
      input: { QueueUrl: q, Label: 'l', AWSAccountIds: [ACCOUNT], Actions: ['SendMessage'] },
      json: 'UnknownOperationException', query: 'InvalidAction' },
    // a role without the grant
    { name: 'SendMessage as a role allowed only read', action: 'SendMessage', input: { QueueUrl: q, MessageBody: 'x' }, as: 'reader',
      code: 'AccessDenied' },
    { name: 'ReceiveMessage as a role allowed only read', action: 'ReceiveMessage', input: { QueueUrl: q }, as: 'reader', code: 'AccessDenied' },
    { name: 'PurgeQueue as a role allowed only read', action: 'PurgeQueue', input: { QueueUrl: q }, as: 'reader', code: 'AccessDenied' },
    { name: 'SetQueueAttributes as a role allowed only read', action: 'SetQueueAttributes',
      input: { QueueUrl: q, Attributes: { VisibilityTimeout: '5' } }, as: 'reader', code: 'AccessDenied' },
    { name: 'DeleteQueue as a role allowed only read', action: 'DeleteQueue', input: { QueueUrl: q }, as: 'reader', code: 'AccessDenied' },
    { name: 'CreateQueue as a role allowed only read', action: 'CreateQueue', input: { QueueName: 'err-reader' }, as: 'reader',
      code: 'AccessDenied' },
    // signatures
    { name: 'no signature', action: 'ListQueues', input: {}, tamper: 'unsigned', code: 'MissingAuthenticationToken' },
    { name: 'a signature cut short', action: 'ListQueues', input: {}, tamper: 'incomplete', code: 'IncompleteSignature' },
    { name: 'an unknown access key', action: 'ListQueues', input: {}, key: 'AKIDNOSUCHKEY', secret: SECRET, code: 'InvalidClientTokenId' },
    { name: 'a wrong secret', action: 'GetQueueUrl', input: { QueueName: ERROR_QUEUE }, key: KEY, secret: `${SECRET}x`,
      code: 'SignatureDoesNotMatch' },
    { name: 'a clock 20 minutes slow', action: 'ListQueues', input: {}, skewSeconds: -1200, code: 'RequestExpired' },
    { name: 'a clock 20 minutes fast', action: 'ListQueues', input: {}, skewSeconds: 1200, code: 'RequestExpired' },
  ];
  return cases;
}

function credentialsOf(testCase) {
  if (testCase.as === 'reader') return { key: READER_KEY, secret: READER_SECRET };
  if (testCase.key) return { key: testCase.key, secret: testCase.secret };
  return { key: KEY, secret: SECRET };
}

function codeFor(testCase, protocol) {
  return testCase.code || testCase[protocol];
}

function setUpErrorQueues() {
  const client = jsClient();
  return (async () => {
    await client.send('CreateQueue', { QueueName: ERROR_QUEUE, Attributes: { VisibilityTimeout: '30' } });
    await client.send('CreateQueue', { QueueName: SMALL_QUEUE, Attributes: { MaximumMessageSize: '1024' } });
  })().finally(() => client.destroy());
}

// @aws-sdk/client-sqs names an error by the class SQS models for it, or
// else by its Query code.
function jsErrorName(info) {
  return info.jsonType.startsWith('com.amazonaws.sqs#') ? info.code : (info.queryCode || info.code);
}

test('each error case through @aws-sdk/client-sqs (JSON): code, status, x-amzn-query-error', async (t) => {
  await setUpErrorQueues();
  for (const testCase of errorCases()) {
    await t.test(testCase.name, async () => {
      const info = ERRORS[codeFor(testCase, 'json')];
      const { key, secret } = credentialsOf(testCase);
      const client = jsClient({ key, secret, tamper: testCase.tamper, clockOffsetMs: (testCase.skewSeconds || 0) * 1000 });
      try {
        const thrown = await client.send(testCase.action, testCase.input).then(
          (output) => assert.fail(`the call succeeded: ${JSON.stringify(toPlan(output))}`),
          (err) => err);
        const raw = client.last();
        assert.ok(raw, `no answer came: ${thrown.stack}`);
        assert.deepEqual({
          name: thrown.name,
          status: thrown.$metadata && thrown.$metadata.httpStatusCode,
          queryError: raw.headers['x-amzn-query-error'],
          Code: thrown.Code,
        }, {
          name: jsErrorName(info),
          status: info.status,
          queryError: info.queryCode ? `${info.queryCode};${info.fault}` : undefined,
          Code: info.queryCode || undefined,
        }, thrown.message);
        if (testCase.message) assert.match(thrown.message, testCase.message);
      } finally {
        client.destroy();
      }
    });
  }
});

test('each error case through boto3: code and status', async (t) => {
  await setUpErrorQueues();
  const cases = errorCases().filter((c) => c.only !== 'json');
  const { versions, answers } = await boto3Calls(cases.map((c) => ({
    action: c.action,
    params: c.input,
    ...credentialsOf(c),
    skew_seconds: c.skewSeconds || 0,
    tamper: c.tamper,
  })));
  t.diagnostic(`boto3 ${versions.boto3}, botocore ${versions.botocore}, ${versions.protocol} protocol`);
  for (const [index, testCase] of cases.entries()) {
    await t.test(testCase.name, () => {
      const info = ERRORS[codeFor(testCase, versions.protocol)];
      const answer = answers[index];
      assert.deepEqual({ ok: answer.ok, code: answer.code, status: answer.status, type: answer.type }, {
        ok: false,
        code: info.queryCode || info.code,
        status: info.status,
        // over JSON, the fault comes only with the x-amzn-query-error header
        type: versions.protocol === 'json' && !info.queryCode ? null : info.fault,
      }, answer.message);
      if (testCase.message) assert.match(answer.message, testCase.message);
    });
  }
});

test('the AWS CLI: its exit code and the error code in its stderr', async (t) => {
  await setUpErrorQueues();
  const q = queueUrl(ERROR_QUEUE);
  const cases = [
    { args: ['sqs', 'list-queues', '--queue-name-prefix', 'err-'], code: null },
    { args: ['sqs', 'get-queue-url', '--queue-name', 'err-none'], code: 'QueueDoesNotExist' },
    { args: ['sqs', 'create-queue', '--queue-name', ERROR_QUEUE, '--attributes', 'VisibilityTimeout=31'], code: 'QueueNameExists' },
    { args: ['sqs', 'send-message', '--queue-url', q, '--message-body', 'x', '--delay-seconds', '901'], code: 'InvalidParameterValue' },
    { args: ['sqs', 'delete-message', '--queue-url', q, '--receipt-handle', FORGED_HANDLE], code: 'ReceiptHandleIsInvalid' },
    { args: ['sqs', 'send-message-batch', '--queue-url', q, '--entries', 'Id=a,MessageBody=x', 'Id=a,MessageBody=y'],
      code: 'BatchEntryIdsNotDistinct' },
    { args: ['sqs', 'purge-queue', '--queue-url', q], env: { AWS_ACCESS_KEY_ID: READER_KEY, AWS_SECRET_ACCESS_KEY: READER_SECRET },
      code: 'AccessDenied' },
    { args: ['sqs', 'list-queues'], env: { AWS_SECRET_ACCESS_KEY: `${SECRET}x` }, code: 'SignatureDoesNotMatch' },
  ];
  for (const { args, env, code } of cases) {
    await t.test(`aws ${args.slice(0, 2).join(' ')}${code ? `: ${code}` : ''}`, async () => {
      const result = await awsCli(args, env);
      if (code === null) {
        assert.equal(result.code, 0, result.stderr);
        assert.ok(JSON.parse(result.stdout).QueueUrls.includes(q));
        return;
      }
      // 254: the service answered with an error
      assert.equal(result.code, 254, result.stderr);
      assert.match(result.stderr, new RegExp(`An error occurred \\(${ERRORS[code].queryCode.replace(/\./g, '\\.')}\\)`));
    });
  }
});

/* ---------------------------------------------------------------- */
/* A hostile HTTP client                                             */
/* ---------------------------------------------------------------- */

const JSON_TYPE = 'application/x-amz-json-1.0';
const FORM_TYPE = 'application/x-www-form-urlencoded';

// A request signed by the SDK's signer, as bytes: method, path (and query),
// headers (lower case), body.
async function signedRequest({ method = 'POST', pathAndQuery = '/', headers = {}, body = '' }) {
  const { SignatureV4 } = load('@smithy/signature-v4');
  const { Hash } = load('@smithy/core/serde');
  const { HttpRequest } = load('@smithy/core/protocols');
  const url = new URL(pathAndQuery, endpoint);
  const request = new HttpRequest({
    method,
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: { host: url.host, ...headers },
    body,
  });
  const signer = new SignatureV4({ service: 'sqs', region: 'us-east-1', credentials: { accessKeyId: KEY, secretAccessKey: SECRET },
    sha256: Hash.bind(null, 'sha256') });
  const signed = await signer.sign(request);
  const bodyBytes = Buffer.from(body);
  const lines = [`${method} ${pathAndQuery} HTTP/1.1`, ...Object.entries(signed.headers).map(([k, v]) => `${k}: ${v}`),
    `content-length: ${bodyBytes.length}`, 'connection: close', '', ''];
  return Buffer.concat([Buffer.from(lines.join('\r\n'), 'utf8'), bodyBytes]);
}

// Opens a connection, lets write(socket) send what it will, and resolves
// once the gateway closed it (or after waitMs): the answer's status,
// headers and body, whether the connection was closed, and how long it took.
function exchange(write, waitMs = 15000) {
  const port = Number(new URL(endpoint).port);
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    const started = Date.now();
    let closed = false;
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = Date.now() - started < waitMs;
      clearTimeout(timer);
      resolve({ ...parseAnswer(Buffer.concat(chunks)), closed, ms: Date.now() - started });
    });
    socket.on('connect', () => write(socket));
  });
}

function parseAnswer(bytes) {
  const text = bytes.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return { status: null, headers: {}, body: text };
  const [statusLine, ...headerLines] = text.slice(0, end).split('\r\n');
  const headers = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(end + 4) };
}

// Asserts the answer is the protocol's error with code (errors.js).
function assertProtocolError(answer, protocol, code) {
  const info = ERRORS[code];
  assert.equal(answer.status, info.status, JSON.stringify(answer));
  if (protocol === 'json') {
    assert.equal(answer.headers['content-type'], JSON_TYPE);
    assert.equal(JSON.parse(answer.body).__type, info.jsonType);
    assert.equal(answer.headers['x-amzn-query-error'], info.queryCode ? `${info.queryCode};${info.fault}` : undefined);
  } else {
    assert.equal(answer.headers['content-type'], 'text/xml');
    assert.match(answer.body, new RegExp(`^<\\?xml version="1.0"\\?><ErrorResponse [^>]*><Error><Type>${info.fault}</Type>` +
      `<Code>${(info.queryCode || info.code).replace(/\./g, '\\.')}</Code>`));
  }
}

// The gateway's memory in use (its node process, started by exec).
function gatewayRssBytes() {
  const status = fs.readFileSync(`/proc/${gateway.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+([0-9]+) kB/.exec(status)[1]) * 1024;
}

const sendAll = (bytes) => (socket) => socket.end(bytes);

test('a hostile HTTP client gets its protocol\'s error, never a 500', async (t) => {
  await setUpErrorQueues();
  const q = queueUrl(ERROR_QUEUE);
  const json = (action, body, extra = {}) => signedRequest({
    headers: { 'content-type': JSON_TYPE, 'x-amz-target': `AmazonSQS.${action}`, ...extra }, body });
  const form = (body, headers = { 'content-type': FORM_TYPE }) => signedRequest({ headers, body });

  await t.test('a body declared larger than 16 MiB: refused unread, the connection closed', async () => {
    for (const [protocol, headers] of [['json', `content-type: ${JSON_TYPE}\r\nx-amz-target: AmazonSQS.ListQueues`],
      ['query', `content-type: ${FORM_TYPE}`]]) {
      // the head only: the gateway must answer without waiting for the body
      const answer = await exchange((socket) => socket.write(`POST / HTTP/1.1\r\nhost: x\r\n${headers}\r\ncontent-length: ${64 * MIB}\r\n\r\n`));
      assertProtocolError(answer, protocol, 'InvalidParameterValue');
      assert.ok(answer.closed, 'the gateway closed the connection');
    }
  });

  await t.test('a body streamed past 16 MiB: refused with bounded memory, the connection closed', async () => {
    const before = gatewayRssBytes();
    const chunk = Buffer.alloc(MIB, 'a');
    const answer = await exchange((socket) => {
      socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: ${FORM_TYPE}\r\ntransfer-encoding: chunked\r\n\r\n`);
      let sent = 0;
      const more = () => {
        // 96 MiB at most; the gateway stops reading long before
        while (sent < 96 && !socket.destroyed) {
          sent += 1;
          socket.write(`${chunk.length.toString(16)}\r\n`);
          if (!socket.write(Buffer.concat([chunk, Buffer.from('\r\n')]))) {
            socket.once('drain', more);
            return;
          }
        }
        if (!socket.destroyed) socket.end('0\r\n\r\n');
      };
      more();
    });
    assertProtocolError(answer, 'query', 'InvalidParameterValue');
    assert.match(answer.body, /larger than 16777216 bytes/);
    assert.ok(answer.closed, 'the gateway closed the connection');
    const grown = gatewayRssBytes() - before;
    assert.ok(grown < 48 * MIB, `the gateway grew by ${grown} bytes`);
  });

  await t.test('a client trickling its headers is cut off with RequestTimeout', async () => {
    const answer = await exchange((socket) => {
      socket.write('POST / HTTP/1.1\r\nhost: x\r\n');
      const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write('x-drip: 1\r\n')), 300);
      socket.on('close', () => clearInterval(drip));
    });
    assertProtocolError(answer, 'query', 'RequestTimeout');
    assert.ok(answer.closed && answer.ms < (REQUEST_TIMEOUT_SECONDS + 5) * 1000, `closed after ${answer.ms} ms`);
  });

  await t.test('a client trickling its body is cut off with RequestTimeout, in JSON', async () => {
    const answer = await exchange((socket) => {
      socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: ${JSON_TYPE}\r\nx-amz-target: AmazonSQS.ListQueues\r\ncontent-length: 1000\r\n\r\n{`);
      const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write(' ')), 300);
      socket.on('close', () => clearInterval(drip));
    });
    assertProtocolError(answer, 'json', 'RequestTimeout');
    assert.ok(answer.closed && answer.ms < (REQUEST_TIMEOUT_SECONDS + 5) * 1000, `closed after ${answer.ms} ms`);
  });

  await t.test('headers larger than 16 KiB', async () => {
    const big = `x-padding: ${'p'.repeat(20 * 1024)}\r\n`;
    const jsonAnswer = await exchange(sendAll(`POST / HTTP/1.1\r\nhost: x\r\nx-amz-target: AmazonSQS.ListQueues\r\n${big}\r\n`));
    assertProtocolError(jsonAnswer, 'json', 'InvalidParameterValue');
    const queryAnswer = await exchange(sendAll(`GET /?Action=ListQueues HTTP/1.1\r\nhost: x\r\n${big}\r\n`));
    assertProtocolError(queryAnswer, 'query', 'InvalidParameterValue');
    assert.ok(jsonAnswer.closed && queryAnswer.closed);
  });

  await t.test('bytes that are not HTTP', async () => {
    const answer = await exchange(sendAll('HELLO THERE\r\n\r\n'));
    assertProtocolError(answer, 'query', 'InvalidParameterValue');
    assert.ok(answer.closed);
  });

  const signedCases = [
    ['malformed JSON', 'json', 'SerializationException', () => json('ListQueues', '{"QueueNamePrefix": ')],
    ['a JSON body that is a list', 'json', 'SerializationException', () => json('ListQueues', '[1, 2]')],
    ['a JSON body that is not UTF-8', 'json', 'SerializationException', () => json('ListQueues', Buffer.from([0x7b, 0xff, 0x7d]))],
    ['a string where a number goes', 'json', 'SerializationException',
      () => json('ReceiveMessage', JSON.stringify({ QueueUrl: q, MaxNumberOfMessages: '10' }))],
    ['a number where a string goes', 'json', 'SerializationException', () => json('SendMessage', JSON.stringify({ QueueUrl: q, MessageBody: 12 }))],
    ['an object where a list goes', 'json', 'SerializationException',
      () => json('DeleteMessageBatch', JSON.stringify({ QueueUrl: q, Entries: { Id: 'a' } }))],
    ['a JSON Content-Type without X-Amz-Target', 'json', 'UnknownOperationException',
      () => signedRequest({ headers: { 'content-type': JSON_TYPE }, body: '{}' })],
    ['an X-Amz-Target of another service', 'json', 'UnknownOperationException',
      () => json('ListQueues', '{}', { 'x-amz-target': 'DynamoDB_20120810.ListTables' })],
    ['X-Amz-Target with Content-Type application/json', 'json', 'UnknownOperationException',
      () => json('ListQueues', '{}', { 'content-type': 'application/json' })],
    ['a GET with X-Amz-Target', 'json', 'UnknownOperationException',
      () => signedRequest({ method: 'GET', headers: { 'x-amz-target': 'AmazonSQS.ListQueues' } })],
    ['a form with a broken escape', 'query', 'MalformedQueryString', () => form('Action=ListQueues&QueueNamePrefix=%ZZ')],
    ['a form whose bytes are not UTF-8', 'query', 'MalformedQueryString', () => form('Action=ListQueues&QueueNamePrefix=%FF')],
    ['a form that is not one: text/plain', 'query', 'MissingAction', () => form('Action=ListQueues', { 'content-type': 'text/plain' })],
    ['no Action at all', 'query', 'MissingAction', () => form('Version=2012-11-05')],
    ['an unknown Action', 'query', 'InvalidAction', () => form('Action=Frobnicate')],
    ['a PUT', 'query', 'InvalidAction', () => signedRequest({ method: 'PUT', pathAndQuery: '/?Action=ListQueues' })],
    ['a Query integer that is not one', 'query', 'InvalidParameterValue',
      () => form(`Action=ReceiveMessage&QueueUrl=${encodeURIComponent(q)}&MaxNumberOfMessages=1.5`)],
    ['a Query integer past 2^53', 'query', 'InvalidParameterValue', () => form('Action=ListQueues&MaxResults=99999999999999999999')],
    ['a Query batch entry without its Id', 'query', 'MissingParameter',
      () => form(`Action=DeleteMessageBatch&QueueUrl=${encodeURIComponent(q)}&DeleteMessageBatchRequestEntry.1.ReceiptHandle=x`)],
  ];
  for (const [name, protocol, code, request] of signedCases) {
    await t.test(`${name}: ${code}`, async () => {
      const answer = await exchange(sendAll(await request()));
      assertProtocolError(answer, protocol, code);
    });
  }

  await t.test('the gateway lives on, and logged no failure of its own', async () => {
    const client = jsClient();
    try {
      const { QueueUrls } = await client.send('ListQueues', { QueueNamePrefix: 'err-' });
      assert.ok(QueueUrls.includes(q));
    } finally {
      client.destroy();
    }
    assert.equal(gateway.child.exitCode, null);
    assert.deepEqual(gatewayFailures(), []);
  });
});

test('no error case made the gateway fail on its own', async () => {
  // the cases above run first; a failure of the gateway is logged
  await sleep(100);
  assert.deepEqual(gatewayFailures(), []);
});
