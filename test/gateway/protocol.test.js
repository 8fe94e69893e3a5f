'use strict';
/*-------------------------------------------------------------------------
 *
 * protocol.test.js
 *		The gateway's SQS protocol layer against the real SQS clients.
 *
 * A throwaway HTTP server on 127.0.0.1 stands for the gateway: it reads
 * each request with parseRequest, records what it read, and answers with
 * a result or an error planned by the test, written by renderResult or
 * renderError.  Real clients then call every action through it:
 *
 *   boto3 from Debian 12 (boto3_calls.py), the Query protocol;
 *   @aws-sdk/client-sqs (npm, in this folder), the JSON protocol;
 *   the AWS CLI from Debian 12, the Query protocol, for a couple of calls.
 *
 * Each call checks both ways: the parameters the gateway read equal what
 * the client was given, and the answer the client read equals the result
 * the gateway was given.  Errors are checked the same way: the client
 * must report the code SQS gives and the HTTP status.  Then the layer's
 * own cases: requests no client sends (malformed, unknown, misdirected),
 * the escaping of XML text, and the MD5 digests against ones computed by
 * SQS itself.
 *
 * Needs Debian's python3-boto3 and awscli (apt-get install -y
 * python3-boto3 awscli) and `npm ci` in test/gateway; a client that is
 * missing skips its tests and says why.
 * Run: node --test test/gateway/
 *
 *-------------------------------------------------------------------------
 */

const test = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createHash, randomUUID } = require('node:crypto');

const { parseRequest, requestProtocol } = require('../../gateway/lib/sqs/protocol');
const { runClient, boto3Calls: runBoto3, PYTHON } = require('./client_processes');
const { renderResult, renderError } = require('../../gateway/lib/sqs/render');
const { SqsError, ERRORS } = require('../../gateway/lib/sqs/errors');
const { md5OfBody, md5OfMessageAttributes, md5OfMessageSystemAttributes } = require('../../gateway/lib/sqs/md5');
const { ACTIONS } = require('../../gateway/lib/sqs/shapes');

// Debian's interpreter, not whatever python3 comes first on PATH: the
// Query-protocol boto3 is Debian's.
const AWS_CLI = '/usr/bin/aws';
const ACCOUNT = '000000000000';

/* ---------------------------------------------------------------- */
/* Which clients are here                                            */
/* ---------------------------------------------------------------- */

function boto3Missing() {
  if (!fs.existsSync(PYTHON)) return `${PYTHON} is not installed`;
  const probe = spawnSync(PYTHON, ['-I', '-c', 'import boto3, botocore'], { cwd: os.tmpdir(), encoding: 'utf8' });
  if (probe.status !== 0) return 'Debian\'s boto3 is not installed (apt-get install -y python3-boto3)';
  return false;
}

function awsCliMissing() {
  if (!fs.existsSync(AWS_CLI)) return 'the AWS CLI is not installed (apt-get install -y awscli)';
  return false;
}

function loadJsSdk() {
  try {
    return { sdk: require('@aws-sdk/client-sqs'), missing: false };
  } catch {
    return { sdk: null, missing: '@aws-sdk/client-sqs is not installed (npm ci in test/gateway)' };
  }
}

const BOTO3_MISSING = boto3Missing();
const AWS_CLI_MISSING = awsCliMissing();
const { sdk: SQS_SDK, missing: JS_SDK_MISSING } = loadJsSdk();

/* ---------------------------------------------------------------- */
/* The stand-in gateway                                              */
/* ---------------------------------------------------------------- */

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

// Answers each request with the next planned answer: { result } or
// { error: SqsError }.  Records what parseRequest made of it, or threw.
class StubGateway {
  constructor() {
    this.planned = [];
    this.seen = [];
    this.server = http.createServer((request, response) => this.answer(request, response));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.endpoint = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  stop() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }

  plan(answers) {
    this.planned = [...answers];
    this.seen = [];
  }

  async answer(request, response) {
    const body = await readBody(request);
    const requestId = randomUUID();
    let answer;
    try {
      const parsed = parseRequest({ method: request.method, url: request.url, headers: request.headers }, body);
      this.seen.push({ parsed });
      answer = this.plannedAnswer(parsed, requestId);
    } catch (err) {
      this.seen.push({ error: err });
      answer = renderError(err.protocol || 'query', err, requestId);
    }
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  }

  plannedAnswer(parsed, requestId) {
    const planned = this.planned.shift();
    if (!planned) return renderError(parsed.protocol, new SqsError('InternalFailure', 'No answer was planned.'), requestId);
    if (planned.error) return renderError(parsed.protocol, planned.error, requestId);
    return renderResult(parsed.protocol, parsed.action, planned.result, requestId);
  }
}

/* ---------------------------------------------------------------- */
/* Values compared in one form                                       */
/* ---------------------------------------------------------------- */

// Binary values as Buffers, no undefined members, no SDK metadata; a
// boto3 answer's {"$base64": ...} is binary too.
function normalized(value) {
  if (value instanceof Uint8Array) return Buffer.from(value);
  if (Array.isArray(value)) return value.map(normalized);
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$base64') return Buffer.from(value.$base64, 'base64');
    const plain = {};
    for (const key of keys) {
      if (value[key] !== undefined && key !== '$metadata') plain[key] = normalized(value[key]);
    }
    return plain;
  }
  return value;
}

// For boto3_calls.py: binary values as {"$base64": ...}.
function toPlan(value) {
  if (value instanceof Uint8Array) return { $base64: Buffer.from(value).toString('base64') };
  if (Array.isArray(value)) return value.map(toPlan);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlan(item)]));
  }
  return value;
}

/* ---------------------------------------------------------------- */
/* Every action, with its parameters and a result                    */
/* ---------------------------------------------------------------- */

// Carriage returns alone and in pairs, a tab, characters outside the
// Basic Multilingual Plane (the last one SQS allows among them) and what
// XML must escape.
const AWKWARD_TEXT = 'line one\r\nline two\rthree\tfour \u00fcn\u00efc\u00f6d\u00e9 \u{1F600} \u{10FFFF} <&>"\' ]]>';

const MESSAGE_ATTRIBUTES = {
  Colour: { DataType: 'String', StringValue: 'blue\r\nand\tgreen \u{1F600}' },
  Weight: { DataType: 'Number', StringValue: '-12.5e3' },
  Thumbnail: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 0x0d, 0x0a, 253, 254, 255]) },
  Region: { DataType: 'String.x', StringValue: 'FR' },
};

const SYSTEM_ATTRIBUTES = {
  AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1' },
};

function receivedMessage(id, body, extra = {}) {
  return { MessageId: id, ReceiptHandle: `handle-${id}`, MD5OfBody: md5OfBody(body), Body: body, ...extra };
}

function sendBatchEntries() {
  return [
    { Id: 'first', MessageBody: AWKWARD_TEXT, DelaySeconds: 0, MessageAttributes: MESSAGE_ATTRIBUTES },
    { Id: 'second', MessageBody: 'plain', MessageSystemAttributes: SYSTEM_ATTRIBUTES, MessageGroupId: 'g', MessageDeduplicationId: 'd' },
    { Id: 'third', MessageBody: 'refused', DelaySeconds: 900 },
  ];
}

function sendBatchResult(entries) {
  const [first, second, third] = entries;
  return {
    Successful: [
      {
        Id: first.Id,
        MessageId: 'message-first',
        MD5OfMessageBody: md5OfBody(first.MessageBody),
        MD5OfMessageAttributes: md5OfMessageAttributes(first.MessageAttributes),
      },
      {
        Id: second.Id,
        MessageId: 'message-second',
        MD5OfMessageBody: md5OfBody(second.MessageBody),
        MD5OfMessageSystemAttributes: md5OfMessageSystemAttributes(second.MessageSystemAttributes),
        SequenceNumber: '18849496460467696128',
      },
    ],
    Failed: [{ Id: third.Id, SenderFault: true, Code: 'InvalidParameterValue', Message: 'Value 900 for parameter DelaySeconds is invalid.' }],
  };
}

// { action, input, result, jsOnlyInput }: input goes to the SDK and must
// come out of parseRequest as it is; result goes to renderResult and must
// come out of the SDK as it is.  jsOnlyInput adds members Debian's boto3
// does not know.
function actionCases(endpoint) {
  const queueUrl = `${endpoint}/${ACCOUNT}/orders`;
  const deadLetterUrl = `${endpoint}/${ACCOUNT}/orders-dead`;
  const sourceArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:orders-dead`;
  const sendInput = {
    QueueUrl: queueUrl,
    MessageBody: AWKWARD_TEXT,
    DelaySeconds: 5,
    MessageAttributes: MESSAGE_ATTRIBUTES,
    MessageSystemAttributes: SYSTEM_ATTRIBUTES,
    MessageDeduplicationId: 'dedup-1',
    MessageGroupId: 'group-1',
  };
  const batchEntries = sendBatchEntries();
  return [
    {
      action: 'CreateQueue',
      input: {
        QueueName: 'orders',
        Attributes: {
          VisibilityTimeout: '45',
          RedrivePolicy: `{"deadLetterTargetArn":"${sourceArn}","maxReceiveCount":"5"}`,
        },
        tags: { team: 'billing', 'cost-centre': 'a&b <c>' },
      },
      result: { QueueUrl: queueUrl },
    },
    {
      action: 'GetQueueUrl',
      input: { QueueName: 'orders', QueueOwnerAWSAccountId: ACCOUNT },
      result: { QueueUrl: queueUrl },
    },
    {
      action: 'ListQueues',
      input: { QueueNamePrefix: 'ord', MaxResults: 2, NextToken: 'token-1' },
      result: { QueueUrls: [queueUrl, deadLetterUrl], NextToken: 'token-2' },
    },
    {
      action: 'GetQueueAttributes',
      input: { QueueUrl: queueUrl, AttributeNames: ['VisibilityTimeout', 'ApproximateNumberOfMessages', 'Policy'] },
      result: {
        Attributes: {
          VisibilityTimeout: '45',
          ApproximateNumberOfMessages: '12',
          Policy: '{"Statement":[{"Effect":"Allow","Condition":{"a":"<&>"}}]}',
        },
      },
    },
    {
      action: 'SetQueueAttributes',
      input: { QueueUrl: queueUrl, Attributes: { VisibilityTimeout: '60', DelaySeconds: '0' } },
      result: undefined,
    },
    {
      action: 'TagQueue',
      input: { QueueUrl: queueUrl, Tags: { team: 'billing', env: 'test' } },
      result: undefined,
    },
    {
      action: 'UntagQueue',
      input: { QueueUrl: queueUrl, TagKeys: ['env', 'team'] },
      result: undefined,
    },
    {
      action: 'ListQueueTags',
      input: { QueueUrl: queueUrl },
      result: { Tags: { team: 'billing', 'cost-centre': 'a&b <c>' } },
    },
    {
      action: 'PurgeQueue',
      input: { QueueUrl: queueUrl },
      result: undefined,
    },
    {
      action: 'SendMessage',
      input: sendInput,
      result: {
        MD5OfMessageBody: md5OfBody(sendInput.MessageBody),
        MD5OfMessageAttributes: md5OfMessageAttributes(sendInput.MessageAttributes),
        MD5OfMessageSystemAttributes: md5OfMessageSystemAttributes(sendInput.MessageSystemAttributes),
        MessageId: 'message-1',
        SequenceNumber: '18849496460467696128',
      },
    },
    {
      action: 'SendMessageBatch',
      input: { QueueUrl: queueUrl, Entries: batchEntries },
      result: sendBatchResult(batchEntries),
    },
    {
      action: 'ReceiveMessage',
      input: {
        QueueUrl: queueUrl,
        AttributeNames: ['All'],
        MessageAttributeNames: ['Colour', 'Thumbnail', 'Weight', 'Region'],
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
        WaitTimeSeconds: 20,
        ReceiveRequestAttemptId: 'attempt-1',
      },
      jsOnlyInput: { MessageSystemAttributeNames: ['SenderId', 'SentTimestamp'] },
      result: {
        Messages: [
          receivedMessage('m-1', AWKWARD_TEXT, {
            Attributes: {
              SenderId: 'AIDAEXAMPLE',
              SentTimestamp: '1700000000123',
              ApproximateReceiveCount: '2',
              ApproximateFirstReceiveTimestamp: '1700000000456',
            },
            MD5OfMessageAttributes: md5OfMessageAttributes(MESSAGE_ATTRIBUTES),
            MessageAttributes: MESSAGE_ATTRIBUTES,
          }),
          receivedMessage('m-2', ''),
        ],
      },
    },
    {
      action: 'DeleteMessage',
      input: { QueueUrl: queueUrl, ReceiptHandle: 'handle-m-1' },
      result: undefined,
    },
    {
      action: 'DeleteMessageBatch',
      input: {
        QueueUrl: queueUrl,
        Entries: [{ Id: 'a', ReceiptHandle: 'handle-a' }, { Id: 'b', ReceiptHandle: 'handle-b' }, { Id: 'c', ReceiptHandle: 'x' }],
      },
      result: {
        Successful: [{ Id: 'a' }, { Id: 'b' }],
        Failed: [{ Id: 'c', SenderFault: true, Code: 'ReceiptHandleIsInvalid', Message: 'The input receipt handle "x" is not a valid receipt handle.' }],
      },
    },
    {
      action: 'ChangeMessageVisibility',
      input: { QueueUrl: queueUrl, ReceiptHandle: 'handle-m-1', VisibilityTimeout: 0 },
      result: undefined,
    },
    {
      action: 'ChangeMessageVisibilityBatch',
      input: {
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'a', ReceiptHandle: 'handle-a', VisibilityTimeout: 43200 },
          { Id: 'b', ReceiptHandle: 'handle-b' },
        ],
      },
      result: {
        Successful: [{ Id: 'a' }],
        Failed: [{ Id: 'b', SenderFault: false, Code: 'InternalError', Message: 'try again' }],
      },
    },
    {
      action: 'ListDeadLetterSourceQueues',
      input: { QueueUrl: deadLetterUrl, MaxResults: 5, NextToken: 'token-1' },
      result: { queueUrls: [queueUrl, `${endpoint}/${ACCOUNT}/invoices`], NextToken: 'token-2' },
    },
    {
      action: 'DeleteQueue',
      input: { QueueUrl: queueUrl },
      result: undefined,
    },
    {
      action: 'StartMessageMoveTask',
      input: { SourceArn: sourceArn, DestinationArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:orders`, MaxNumberOfMessagesPerSecond: 50 },
      result: { TaskHandle: 'task-handle-1' },
    },
    {
      action: 'ListMessageMoveTasks',
      input: { SourceArn: sourceArn, MaxResults: 10 },
      result: {
        Results: [
          {
            TaskHandle: 'task-handle-1',
            Status: 'RUNNING',
            SourceArn: sourceArn,
            DestinationArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:orders`,
            MaxNumberOfMessagesPerSecond: 50,
            ApproximateNumberOfMessagesMoved: 1234567890123,
            ApproximateNumberOfMessagesToMove: 1234567890999,
            StartedTimestamp: 1700000000000,
          },
          {
            Status: 'FAILED',
            SourceArn: sourceArn,
            ApproximateNumberOfMessagesMoved: 0,
            ApproximateNumberOfMessagesToMove: 7,
            FailureReason: 'AWS.SimpleQueueService.NonExistentQueue',
            StartedTimestamp: 1690000000000,
          },
        ],
      },
    },
    {
      action: 'CancelMessageMoveTask',
      input: { TaskHandle: 'task-handle-1' },
      result: { ApproximateNumberOfMessagesMoved: 9007199254740991 },
    },
  ];
}

test('the cases cover every action of the gateway', () => {
  const covered = actionCases('http://127.0.0.1:1').map((c) => c.action).sort();
  assert.deepStrictEqual(covered, Object.keys(ACTIONS).sort());
});

// What a client should read back: the planned result, or nothing.
function expectedOutput(testCase) {
  return normalized(testCase.result || {});
}

/* ---------------------------------------------------------------- */
/* Errors every client must report as SQS does                       */
/* ---------------------------------------------------------------- */

const ERROR_MESSAGE_TAIL = ' (with <&> and\r\na carriage return)';

function errorCases() {
  return Object.values(ERRORS).map((info) => ({
    info,
    error: new SqsError(info.code, `${info.code} happened${ERROR_MESSAGE_TAIL}`),
  }));
}

// The Query code where there is one; the JSON protocol's own errors keep
// their name.
function queryCodeOf(info) {
  return info.queryCode || info.code;
}

// @aws-sdk/client-sqs names an error by the class SQS models for it,
// found from the x-amzn-query-error code, or else by that code.
function jsErrorNameOf(info) {
  return info.jsonType.startsWith('com.amazonaws.sqs#') ? info.code : queryCodeOf(info);
}

/* ---------------------------------------------------------------- */
/* Running the Python and CLI clients                                */
/* ---------------------------------------------------------------- */

function run(command, args, input) {
  return runClient(command, args, input, { key: 'AKIDGATEWAYTEST', secret: 'gateway-test-secret' });
}

// calls: [{ action, params }] -> { versions, answers: one per call }
function boto3Calls(endpoint, calls) {
  return runBoto3({ endpoint, calls: calls.map(({ action, params }) => ({ action, params: toPlan(params) })) },
    { key: 'AKIDGATEWAYTEST', secret: 'gateway-test-secret' });
}

async function awsCli(args) {
  const { code, stdout, stderr } = await run(AWS_CLI, [...args, '--output', 'json', '--no-cli-pager'], '');
  if (code !== 0) throw new Error(`aws ${args.join(' ')} ended with exit code ${code}:\n${stderr}`);
  return stdout.trim() === '' ? {} : JSON.parse(stdout);
}

function jsClient(endpoint) {
  return new SQS_SDK.SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDGATEWAYTEST', secretAccessKey: 'gateway-test-secret' },
    maxAttempts: 1,
    // Every request goes to the stand-in, whatever host a queue URL names.
    useQueueUrlAsEndpoint: false,
  });
}

function jsCommand(action, input) {
  return new SQS_SDK[`${action}Command`](input);
}

/* ---------------------------------------------------------------- */
/* boto3, the Query protocol                                         */
/* ---------------------------------------------------------------- */

// Debian 12's boto3 speaks the Query protocol, newer ones (Debian sid's) JSON.
test('boto3: every action, both ways', { skip: BOTO3_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const cases = actionCases(gateway.endpoint);
  gateway.plan(cases.map((c) => ({ result: c.result })));
  const { versions, answers } = await boto3Calls(gateway.endpoint, cases.map((c) => ({ action: c.action, params: c.input })));
  t.diagnostic(`boto3 ${versions.boto3}, botocore ${versions.botocore}, ${versions.protocol} protocol`);
  const seen = gateway.seen;
  for (const [index, testCase] of cases.entries()) {
    await t.test(testCase.action, () => {
      const { parsed, error } = seen[index] || {};
      assert.equal(error, undefined, `parseRequest threw: ${error && error.message}`);
      assert.deepStrictEqual({ protocol: parsed.protocol, action: parsed.action }, { protocol: versions.protocol, action: testCase.action });
      assert.deepStrictEqual(parsed.params, normalized(testCase.input));
      assert.deepStrictEqual(answers[index], { ok: true, response: toPlan(expectedOutput(testCase)) });
    });
  }
});

test('boto3: every error code, with its HTTP status', { skip: BOTO3_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const cases = errorCases();
  gateway.plan(cases.map(({ error }) => ({ error })));
  const { versions, answers } = await boto3Calls(gateway.endpoint, cases.map(() => ({ action: 'GetQueueUrl', params: { QueueName: 'missing' } })));
  for (const [index, { info, error }] of cases.entries()) {
    await t.test(info.code, () => {
      assert.deepStrictEqual(answers[index], {
        ok: false,
        code: queryCodeOf(info),
        // over JSON, the fault comes only with the x-amzn-query-error header
        type: versions.protocol === 'json' && !info.queryCode ? null : info.fault,
        message: error.message,
        status: info.status,
      });
    });
  }
});

/* ---------------------------------------------------------------- */
/* @aws-sdk/client-sqs, the JSON protocol                            */
/* ---------------------------------------------------------------- */

test('@aws-sdk/client-sqs (JSON protocol): every action, both ways, MD5 checks passing', { skip: JS_SDK_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const client = jsClient(gateway.endpoint);
  t.after(() => client.destroy());
  for (const testCase of actionCases(gateway.endpoint)) {
    await t.test(testCase.action, async () => {
      const input = { ...testCase.input, ...testCase.jsOnlyInput };
      gateway.plan([{ result: testCase.result }]);
      const output = await client.send(jsCommand(testCase.action, input));
      const { parsed, error } = gateway.seen[0] || {};
      assert.equal(error, undefined, `parseRequest threw: ${error && error.message}`);
      assert.deepStrictEqual({ protocol: parsed.protocol, action: parsed.action }, { protocol: 'json', action: testCase.action });
      assert.deepStrictEqual(parsed.params, normalized(input));
      assert.deepStrictEqual(normalized(output), expectedOutput(testCase));
    });
  }
});

test('@aws-sdk/client-sqs refuses a body whose MD5 differs (its check is on)', { skip: JS_SDK_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const client = jsClient(gateway.endpoint);
  t.after(() => client.destroy());
  const queueUrl = `${gateway.endpoint}/${ACCOUNT}/orders`;
  gateway.plan([{ result: { MessageId: 'm', MD5OfMessageBody: md5OfBody('another body') } }]);
  await assert.rejects(
    client.send(jsCommand('SendMessage', { QueueUrl: queueUrl, MessageBody: 'the body' })),
    /InvalidChecksumError|MD5/,
  );
  gateway.plan([{ result: { Messages: [{ ...receivedMessage('m', 'the body'), MD5OfBody: md5OfBody('another') }] } }]);
  await assert.rejects(client.send(jsCommand('ReceiveMessage', { QueueUrl: queueUrl })), /InvalidChecksumError|MD5/);
});

test('@aws-sdk/client-sqs (JSON protocol): every error code, named as SQS names it', { skip: JS_SDK_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const client = jsClient(gateway.endpoint);
  t.after(() => client.destroy());
  for (const { info, error } of errorCases()) {
    await t.test(info.code, async () => {
      gateway.plan([{ error }]);
      const thrown = await client.send(jsCommand('GetQueueUrl', { QueueName: 'missing' })).then(
        () => assert.fail('the call succeeded'),
        (err) => err,
      );
      const expected = { name: jsErrorNameOf(info), message: error.message, status: info.status };
      if (info.queryCode) Object.assign(expected, { Code: info.queryCode, Type: info.fault });
      const actual = { name: thrown.name, message: thrown.message, status: thrown.$metadata && thrown.$metadata.httpStatusCode };
      if (info.queryCode) Object.assign(actual, { Code: thrown.Code, Type: thrown.Type });
      assert.deepStrictEqual(actual, expected);
    });
  }
});

test('@aws-sdk/client-sqs: QueueDoesNotExist is an instance of the SDK\'s class', { skip: JS_SDK_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const client = jsClient(gateway.endpoint);
  t.after(() => client.destroy());
  gateway.plan([{ error: new SqsError('QueueDoesNotExist') }]);
  await assert.rejects(
    client.send(jsCommand('GetQueueUrl', { QueueName: 'missing' })),
    (err) => err instanceof SQS_SDK.QueueDoesNotExist && err.Code === 'AWS.SimpleQueueService.NonExistentQueue',
  );
});

/* ---------------------------------------------------------------- */
/* The AWS CLI, the Query protocol                                   */
/* ---------------------------------------------------------------- */

test('the AWS CLI: send-message with attributes, receive-message', { skip: AWS_CLI_MISSING }, async (t) => {
  const gateway = await new StubGateway().start();
  t.after(() => gateway.stop());
  const queueUrl = `${gateway.endpoint}/${ACCOUNT}/orders`;
  const body = 'from the CLI\twith a tab \u{1F600}';
  const attributes = {
    Colour: { DataType: 'String', StringValue: 'blue' },
    Weight: { DataType: 'Number', StringValue: '12' },
    Thumbnail: { DataType: 'Binary', BinaryValue: Buffer.from([0, 255, 13, 10]) },
  };
  const common = ['--endpoint-url', gateway.endpoint, '--queue-url', queueUrl];

  const sent = { MD5OfMessageBody: md5OfBody(body), MD5OfMessageAttributes: md5OfMessageAttributes(attributes), MessageId: 'cli-1' };
  gateway.plan([{ result: sent }]);
  const sendOutput = await awsCli(['sqs', 'send-message', ...common, '--message-body', body,
    '--message-attributes', JSON.stringify(toCliBlobs(attributes)), '--delay-seconds', '3']);
  // Debian 12's AWS CLI speaks the Query protocol, newer ones JSON
  t.diagnostic(`the AWS CLI spoke the ${gateway.seen[0].parsed.protocol} protocol`);
  assert.deepStrictEqual(gateway.seen[0].parsed, {
    protocol: gateway.seen[0].parsed.protocol,
    action: 'SendMessage',
    params: { QueueUrl: queueUrl, MessageBody: body, DelaySeconds: 3, MessageAttributes: attributes },
  });
  assert.deepStrictEqual(sendOutput, sent);

  const received = { Messages: [receivedMessage('cli-1', `${body}\r\nsecond line`, {
    Attributes: { SentTimestamp: '1700000000123' },
    MD5OfMessageAttributes: md5OfMessageAttributes(attributes),
    MessageAttributes: attributes,
  })] };
  gateway.plan([{ result: received }]);
  const receiveOutput = await awsCli(['sqs', 'receive-message', ...common, '--attribute-names', 'All',
    '--message-attribute-names', 'All', '--max-number-of-messages', '10', '--wait-time-seconds', '0']);
  assert.deepStrictEqual(gateway.seen[0].parsed.params, {
    QueueUrl: queueUrl, AttributeNames: ['All'], MessageAttributeNames: ['All'], MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
  });
  assert.deepStrictEqual(receiveOutput, toCliBlobs(received));
});

// The CLI takes and prints binary values in base64.
function toCliBlobs(value) {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(toCliBlobs);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toCliBlobs(item)]));
  }
  return value;
}

/* ---------------------------------------------------------------- */
/* Requests no SDK sends                                             */
/* ---------------------------------------------------------------- */

const FORM = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', host: 'gateway.test:9324' };
const JSON_HEADERS = { 'content-type': 'application/x-amz-json-1.0', host: 'gateway.test:9324' };

function queryPost(form, url = '/') {
  return parseRequest({ method: 'POST', url, headers: FORM }, Buffer.from(form));
}

function jsonPost(action, body, headers = {}) {
  const allHeaders = { ...JSON_HEADERS, 'x-amz-target': `AmazonSQS.${action}`, ...headers };
  return parseRequest({ method: 'POST', url: '/', headers: allHeaders }, Buffer.isBuffer(body) ? body : Buffer.from(body));
}

// The SqsError thrown, its code, the protocol to answer in, the message.
function refusal(attempt) {
  try {
    attempt();
  } catch (err) {
    assert.ok(err instanceof SqsError, `not an SqsError: ${err && err.stack}`);
    return { code: err.code, protocol: err.protocol, message: err.message };
  }
  return assert.fail('the request was accepted');
}

test('Query: the actions and errors SQS has for requests no SDK sends', async (t) => {
  await t.test('no Action', () => {
    assert.deepStrictEqual(refusal(() => queryPost('Version=2012-11-05&QueueName=q')),
      { code: 'MissingAction', protocol: 'query', message: 'The request must contain the parameter Action.' });
  });
  await t.test('an unknown action, and an SQS action the gateway does not take', () => {
    for (const action of ['Frobnicate', 'AddPermission', 'toString']) {
      assert.deepStrictEqual(refusal(() => queryPost(`Action=${action}`)),
        { code: 'InvalidAction', protocol: 'query', message: `The action ${action} is not valid for this endpoint.` });
    }
  });
  await t.test('a malformed escape, and bytes that are not UTF-8', () => {
    for (const form of ['Action=ListQueues&QueueNamePrefix=%E0%A4%A', 'Action=ListQueues&QueueNamePrefix=%FF']) {
      assert.equal(refusal(() => queryPost(form)).code, 'MalformedQueryString');
    }
    assert.equal(refusal(() => parseRequest({ method: 'GET', url: '/?Action=ListQueues&QueueNamePrefix=%', headers: {} })).code, 'MalformedQueryString');
  });
  await t.test('not an integer, not base64', () => {
    assert.deepStrictEqual(refusal(() => queryPost('Action=ReceiveMessage&QueueUrl=u&MaxNumberOfMessages=ten')), {
      code: 'InvalidParameterValue',
      protocol: 'query',
      message: 'Value ten for parameter MaxNumberOfMessages is invalid. Reason: Must be an integer.',
    });
    const binary = 'Action=SendMessage&QueueUrl=u&MessageBody=b&MessageAttribute.1.Name=n'
      + '&MessageAttribute.1.Value.DataType=Binary&MessageAttribute.1.Value.BinaryValue=not*base64';
    assert.deepStrictEqual(refusal(() => queryPost(binary)), {
      code: 'InvalidParameterValue',
      protocol: 'query',
      message: 'Value not*base64 for parameter MessageAttribute.1.Value.BinaryValue is invalid. Reason: Must be base64.',
    });
  });
  await t.test('a required parameter missing', () => {
    assert.deepStrictEqual(refusal(() => queryPost('Action=SendMessage&MessageBody=b')),
      { code: 'MissingParameter', protocol: 'query', message: 'The request must contain the parameter QueueUrl.' });
    assert.equal(refusal(() => queryPost('Action=SetQueueAttributes&QueueUrl=u&Attribute.1.Value=5')).message,
      'The request must contain the parameter Attribute.1.Name.');
  });
  await t.test('an attribute named twice', () => {
    const form = 'Action=SetQueueAttributes&QueueUrl=u&Attribute.1.Name=DelaySeconds&Attribute.1.Value=1'
      + '&Attribute.2.Name=DelaySeconds&Attribute.2.Value=2';
    assert.equal(refusal(() => queryPost(form)).code, 'InvalidParameterValue');
  });
  await t.test('a method that is neither GET nor POST', () => {
    assert.equal(refusal(() => parseRequest({ method: 'PUT', url: '/?Action=ListQueues', headers: {} })).code, 'InvalidAction');
  });
});

test('Query: what a request may hold besides what SDKs send', async (t) => {
  await t.test('a GET to a queue\'s URL addresses that queue', () => {
    const request = { method: 'GET', url: `/${ACCOUNT}/orders/?Action=GetQueueAttributes&AttributeName.1=All`, headers: { host: 'gateway.test:9324' } };
    assert.deepStrictEqual(parseRequest(request, Buffer.alloc(0)), {
      protocol: 'query',
      action: 'GetQueueAttributes',
      params: { QueueUrl: `http://gateway.test:9324/${ACCOUNT}/orders`, AttributeNames: ['All'] },
    });
  });
  await t.test('a QueueUrl parameter wins over the URL', () => {
    const parsed = queryPost('Action=PurgeQueue&QueueUrl=http%3A%2F%2Fh%2F1%2Fother', `/${ACCOUNT}/orders`);
    assert.equal(parsed.params.QueueUrl, 'http://h/1/other');
  });
  await t.test('a queue\'s URL takes no action that is not on a queue', () => {
    assert.deepStrictEqual(refusal(() => queryPost('Action=CreateQueue&QueueName=q', `/${ACCOUNT}/orders`)),
      { code: 'InvalidAction', protocol: 'query', message: 'The action CreateQueue is not valid for this endpoint.' });
  });
  await t.test('parameters in the query string of a POST, and the first of a repeated name', () => {
    const parsed = parseRequest(
      { method: 'POST', url: '/?Action=ListQueues&QueueNamePrefix=first', headers: FORM },
      Buffer.from('QueueNamePrefix=second&MaxResults=3'),
    );
    assert.deepStrictEqual(parsed.params, { QueueNamePrefix: 'first', MaxResults: 3 });
  });
  await t.test('a body that is no form is no parameters', () => {
    const parsed = parseRequest({ method: 'POST', url: '/?Action=ListQueues', headers: { 'content-type': 'text/plain' } }, Buffer.from('QueueNamePrefix=x'));
    assert.deepStrictEqual(parsed.params, {});
  });
  await t.test('empty lists as botocore sends them, items in the order of their numbers', () => {
    assert.deepStrictEqual(queryPost('Action=UntagQueue&QueueUrl=u&TagKeys=').params, { QueueUrl: 'u', TagKeys: [] });
    assert.deepStrictEqual(queryPost('Action=SendMessageBatch&QueueUrl=u&Entries=').params, { QueueUrl: 'u', Entries: [] });
    assert.deepStrictEqual(queryPost('Action=GetQueueAttributes&QueueUrl=u&AttributeName.10=b&AttributeName.2=a').params,
      { QueueUrl: 'u', AttributeNames: ['a', 'b'] });
  });
  await t.test('MessageSystemAttributeName.N, and parameters the action does not have', () => {
    const parsed = queryPost('Action=ReceiveMessage&QueueUrl=u&MessageSystemAttributeName.1=SenderId&Colour=blue&AttributeName.x=1');
    assert.deepStrictEqual(parsed.params, { QueueUrl: 'u', MessageSystemAttributeNames: ['SenderId'] });
  });
  await t.test('a map key may be any name, __proto__ included', () => {
    const form = 'Action=TagQueue&QueueUrl=u&Tag.1.Key=__proto__&Tag.1.Value=v&Tag.2.Key=constructor&Tag.2.Value=w';
    const { Tags } = queryPost(form).params;
    assert.deepStrictEqual(Object.entries(Tags), [['__proto__', 'v'], ['constructor', 'w']]);
    assert.equal(Object.getPrototypeOf(Tags), Object.prototype);
    const json = jsonPost('TagQueue', '{"QueueUrl": "u", "Tags": {"__proto__": "v"}}').params.Tags;
    assert.deepStrictEqual(Object.entries(json), [['__proto__', 'v']]);
    assert.equal(Object.getPrototypeOf(json), Object.prototype);
  });
  await t.test('a plus is a space, an escaped plus a plus', () => {
    assert.equal(queryPost('Action=SendMessage&QueueUrl=u&MessageBody=a+b%2Bc').params.MessageBody, 'a b+c');
  });
});

test('JSON: the errors of requests no SDK sends', async (t) => {
  await t.test('a GET with a target', () => {
    const request = { method: 'GET', url: '/', headers: { 'x-amz-target': 'AmazonSQS.ListQueues' } };
    assert.deepStrictEqual(refusal(() => parseRequest(request, Buffer.alloc(0))),
      { code: 'UnknownOperationException', protocol: 'json', message: 'The JSON protocol takes a POST, not a GET.' });
  });
  await t.test('an unknown target, another service\'s, none, or an action the gateway does not take', () => {
    for (const target of ['AmazonSQS.Frobnicate', 'DynamoDB_20120810.ListTables', 'AmazonSQS.AddPermission', 'AmazonSQS.']) {
      const headers = { ...JSON_HEADERS, 'x-amz-target': target };
      assert.equal(refusal(() => parseRequest({ method: 'POST', url: '/', headers }, Buffer.from('{}'))).code, 'UnknownOperationException');
    }
    assert.equal(refusal(() => parseRequest({ method: 'POST', url: '/', headers: JSON_HEADERS }, Buffer.from('{}'))).code, 'UnknownOperationException');
  });
  await t.test('a target with a form', () => {
    const headers = { ...FORM, 'x-amz-target': 'AmazonSQS.ListQueues' };
    assert.deepStrictEqual(refusal(() => parseRequest({ method: 'POST', url: '/', headers }, Buffer.from('Action=ListQueues'))).code,
      'UnknownOperationException');
  });
  await t.test('a body that is not a JSON object', () => {
    for (const body of ['{"QueueUrl": ', '[]', '"text"', 'null', Buffer.from([0x7b, 0xff, 0x7d])]) {
      assert.equal(refusal(() => jsonPost('ListQueues', body)).code, 'SerializationException');
    }
  });
  await t.test('a member of the wrong type', () => {
    const wrong = [
      ['ReceiveMessage', { QueueUrl: 'u', MaxNumberOfMessages: '10' }, 'Expected an integer for MaxNumberOfMessages.'],
      ['ReceiveMessage', { QueueUrl: 'u', MaxNumberOfMessages: 1.5 }, 'Expected an integer for MaxNumberOfMessages.'],
      ['ReceiveMessage', { QueueUrl: 'u', AttributeNames: 'All' }, 'Expected a list for AttributeNames.'],
      ['SendMessage', { QueueUrl: 'u', MessageBody: 7 }, 'Expected a string for MessageBody.'],
      ['SendMessage', { QueueUrl: 'u', MessageBody: 'b', MessageAttributes: { n: { DataType: 'Binary', BinaryValue: 'no*' } } },
        'Expected a base64 string for MessageAttributes.n.BinaryValue.'],
      ['SendMessageBatch', { QueueUrl: 'u', Entries: [{ Id: 'a', MessageBody: 'b' }, 'c'] }, 'Expected an object for Entries.2.'],
    ];
    for (const [action, body, message] of wrong) {
      assert.deepStrictEqual(refusal(() => jsonPost(action, JSON.stringify(body))),
        { code: 'SerializationException', protocol: 'json', message });
    }
  });
  await t.test('a required member missing, an empty body for an action that needs none', () => {
    assert.deepStrictEqual(refusal(() => jsonPost('SendMessage', '')),
      { code: 'MissingParameter', protocol: 'json', message: 'The request must contain the parameter QueueUrl.' });
    assert.deepStrictEqual(jsonPost('ListQueues', ''), { protocol: 'json', action: 'ListQueues', params: {} });
  });
  await t.test('null members are left out, unknown members too, binary values decoded', () => {
    const body = { QueueUrl: 'u', MessageBody: 'b', DelaySeconds: null, Unknown: 1,
      MessageAttributes: { n: { DataType: 'Binary', BinaryValue: 'AAEC', Extra: true } } };
    assert.deepStrictEqual(jsonPost('SendMessage', JSON.stringify(body)).params,
      { QueueUrl: 'u', MessageBody: 'b', MessageAttributes: { n: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2]) } } });
  });
  await t.test('which protocol a request speaks', () => {
    assert.equal(requestProtocol({ 'Content-Type': 'application/x-amz-json-1.0; charset=utf-8' }), 'json');
    assert.equal(requestProtocol({ 'X-Amz-Target': 'AmazonSQS.ListQueues' }), 'json');
    assert.equal(requestProtocol(FORM), 'query');
    assert.equal(requestProtocol({}), 'query');
  });
});

/* ---------------------------------------------------------------- */
/* Rendering                                                         */
/* ---------------------------------------------------------------- */

test('rendering: text XML cannot hold, numbers as text, failures of the gateway', async (t) => {
  await t.test('characters outside XML become U+FFFD, a carriage return a reference', () => {
    const { body } = renderResult('query', 'GetQueueUrl', { QueueUrl: 'a\u0000b\uD800c\rd\uFFFEe' }, 'r');
    assert.match(body.toString('utf8'), /<QueueUrl>a\uFFFDb\uFFFDc&#xD;d\uFFFDe<\/QueueUrl>/);
  });
  await t.test('counts that came as text are written as numbers, unknown members left out', () => {
    const { body } = renderResult('json', 'CancelMessageMoveTask', { ApproximateNumberOfMessagesMoved: '42', Internal: 'x' }, 'r');
    assert.deepStrictEqual(JSON.parse(body), { ApproximateNumberOfMessagesMoved: 42 });
  });
  await t.test('anything but an SqsError is an InternalFailure that tells nothing of it', () => {
    for (const protocol of ['json', 'query']) {
      const answer = renderError(protocol, new Error('password=hunter2 in /etc/secret'), 'r');
      assert.equal(answer.status, 500);
      assert.doesNotMatch(answer.body.toString('utf8'), /hunter2/);
    }
    assert.deepStrictEqual(JSON.parse(renderError('json', new Error('x'), 'r').body).__type, 'com.amazon.coral.service#InternalFailure');
  });
  await t.test('the JSON protocol\'s own errors carry no x-amzn-query-error', () => {
    const answer = renderError('json', new SqsError('UnknownOperationException'), 'r');
    assert.equal(answer.headers['x-amzn-query-error'], undefined);
    assert.equal(renderError('json', new SqsError('QueueDoesNotExist'), 'r').headers['x-amzn-query-error'],
      'AWS.SimpleQueueService.NonExistentQueue;Sender');
  });
  await t.test('a result of the wrong form is the gateway\'s mistake', () => {
    for (const protocol of ['json', 'query']) {
      assert.throws(() => renderResult(protocol, 'ListQueues', { QueueUrls: 'http://h/1/q' }, 'r'), TypeError);
      assert.throws(() => renderResult(protocol, 'ListQueueTags', { Tags: [['a', 'b']] }, 'r'), TypeError);
      assert.throws(() => renderResult(protocol, 'Frobnicate', {}, 'r'), TypeError);
    }
  });
  await t.test('an unknown error code is the gateway\'s mistake', () => {
    assert.throws(() => new SqsError('NoSuchCode'), TypeError);
  });
  await t.test('an action that returns nothing answers with its request id alone', () => {
    assert.equal(renderResult('query', 'DeleteQueue', undefined, 'r-1').body.toString('utf8'),
      '<?xml version="1.0"?><DeleteQueueResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">'
      + '<ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></DeleteQueueResponse>');
    assert.equal(renderResult('json', 'DeleteQueue', undefined, 'r-1').body.toString('utf8'), '{}');
  });
});

/* ---------------------------------------------------------------- */
/* MD5 digests                                                       */
/* ---------------------------------------------------------------- */

// Digests SQS computed itself: messages and their digests as recorded
// from SQS in LocalStack's validated snapshot tests
// (tests/aws/services/sqs/test_sqs.snapshot.json), and examples published
// with the npm package aws-md5-of-message-attributes.
const RECORDED_DIGESTS = [
  [{ attr1: { DataType: 'Binary', BinaryValue: Buffer.from('traceparent\x1e00-774062d6c37081a5a0b9b5b88e30627c-2d2482211f6489da-01', 'latin1') } },
    '8cbe4db156db8a94db8b801b7addb984'],
  [{ MyAttribute: { DataType: 'String', StringValue: 'foobar' } }, 'adb59cd4678ea5a855436b949cd07ab6'],
  [{
    General: { DataType: 'String', StringValue: 'Kenobi' },
    Hello: { DataType: 'String', StringValue: 'There' },
    'Help.Me': { DataType: 'String', StringValue: 'Me' },
  }, '4c360f3fdafd970e05fae2f149d997f5'],
  [{ Hello: { DataType: 'String', StringValue: 'There' }, General: { DataType: 'String', StringValue: 'Kenobi' } },
    'fca026605781cb4126a1e9044df24232'],
  [{ customNumberTypeAttrib: { DataType: 'Number.float', StringValue: '4563442423554324324264524243.32543234' } },
    '9fe1b90bbd9965bdf77bac517c7d2495'],
  [{
    attribName1: { DataType: 'String', StringValue: 'attribValue 1' },
    customNumberTypeAttrib: { DataType: 'Number.float', StringValue: '4563442423554324324264524243.32543234' },
    binaryAttribute: { DataType: 'Binary', BinaryValue: Buffer.from('Hello binary world!') },
  }, 'c932db14a896c663f83c260297d594ff'],
];

test('MD5 digests equal those SQS computed', async (t) => {
  for (const [index, [attributes, digest]] of RECORDED_DIGESTS.entries()) {
    await t.test(`recorded attributes ${index + 1}`, () => {
      assert.equal(md5OfMessageAttributes(attributes), digest);
      assert.equal(md5OfMessageSystemAttributes(attributes), digest);
    });
  }
  await t.test('bodies', () => {
    assert.equal(md5OfBody('test'), '098f6bcd4621d373cade4e832627b4f6');
    assert.equal(md5OfBody('msg'), '6e2baaf3b97dbeef01c0043275f9a0e7');
    // The digest of the UTF-8 bytes, not of UTF-16 code units.
    assert.equal(md5OfBody('\u{1F600}'), createHash('md5').update(Buffer.from([0xf0, 0x9f, 0x98, 0x80])).digest('hex'));
  });
  await t.test('no attributes, no digest', () => {
    assert.equal(md5OfMessageAttributes({}), undefined);
    assert.equal(md5OfMessageAttributes(undefined), undefined);
  });
});
