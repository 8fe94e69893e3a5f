'use strict';
// Signature Version 4 verification (gateway/lib/sigv4.js) against requests
// signed by the real signers, never by the code under test: botocore's own
// signers and the AWS CRT's (test/gateway/sign_with_botocore.py, run with
// Debian's python3-boto3), the AWS CLI (Debian's awscli), and, when
// The AWS SDK for JavaScript v3 is the one test/gateway/package.json
// lists (npm ci there); AWS_SDK_DIR may name another installation.
// Every request crosses a node:http server on loopback first, so verify
// sees it exactly as the gateway will. Then each is spoiled one way at a
// time, and the error must carry SQS's code and status, and not the secret.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawnSync } = require('node:child_process');
const { verify, SigV4Error } = require('../../gateway/lib/sigv4');

const PYTHON = '/usr/bin/python3';
const AWS_CLI = '/usr/bin/aws';
const SIGNER_SCRIPT = path.join(__dirname, 'sign_with_botocore.py');
const MINUTE = 60 * 1000;

// ---- a node:http server on loopback that keeps what arrives ----------------

class Receiver {
  constructor() {
    this.arrived = [];
    this.server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (chunk) => chunks.push(chunk));
      req.on('end', () => {
        this.arrived.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          headersDistinct: req.headersDistinct,
          body: Buffer.concat(chunks),
        });
        // an SQS error, so that an SDK stops at the first attempt
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'received by the test' }));
      });
    });
  }

  listen() {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve(this.server.address().port)));
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }
}

const receiver = new Receiver();
let port;

// The one request a client sent, once it is done: the server takes each
// request before it answers, so by then it has arrived.
async function requestSentBy(sending, client) {
  await sending;
  assert.equal(receiver.arrived.length, 1, `${client} sent ${receiver.arrived.length} requests, not one`);
  return receiver.arrived.shift();
}

test.before(async () => {
  port = await receiver.listen();
});
test.after(() => receiver.close());

// Sends a request as raw bytes (header values in UTF-8) and returns it as
// the server got it.
async function sendRaw({ method, url, headers, body }) {
  const head = [`${method} ${url} HTTP/1.1`, ...headers.map(([name, value]) => `${name}: ${value}`),
    'Connection: close', '', ''].join('\r\n');
  const socket = net.connect(port, '127.0.0.1');
  const closed = new Promise((resolve, reject) => {
    socket.on('close', resolve);
    socket.on('error', reject);
  });
  socket.resume();
  socket.end(Buffer.concat([Buffer.from(head, 'utf8'), body]));
  return requestSentBy(closed, 'a socket');
}

// ---- botocore's requests ---------------------------------------------------

function runBotocoreSigner() {
  const run = spawnSync(PYTHON, ['-I', SIGNER_SCRIPT], { cwd: __dirname, encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message : (run.stderr.trim() || `exit status ${run.status}`);
    throw new Error(`botocore could not sign the test requests (${PYTHON} ${SIGNER_SCRIPT}): ${why}\n` +
      'These tests need Debian\'s botocore: apt-get install -y python3-boto3 awscli');
  }
  return JSON.parse(run.stdout);
}

let botocorePromise;
// botocore's fixture: credentials, time, and each request as node:http gave it
function botocore() {
  botocorePromise ??= (async () => {
    const fixture = runBotocoreSigner();
    const requests = new Map();
    for (const vector of fixture.requests) {
      requests.set(vector.name, await sendRaw({ ...vector, body: Buffer.from(vector.body, 'base64') }));
    }
    return { ...fixture, signedAt: new Date(fixture.signedAt), requests };
  })();
  return botocorePromise;
}

// ---- helpers ---------------------------------------------------------------

function optionsFor(fixture, overrides = {}) {
  return {
    lookupSecret: (id) => (id === fixture.accessKeyId ? fixture.secret : undefined),
    now: new Date(fixture.signedAt.getTime() + MINUTE),
    service: 'sqs',
    ...overrides,
  };
}

function copyOf(request) {
  return {
    method: request.method,
    url: request.url,
    headers: { ...request.headers },
    body: Buffer.from(request.body),
  };
}

function verifyArrived(request, options, headers = request.headers) {
  return verify({ method: request.method, url: request.url, headers }, request.body, options);
}

// Asserts that verify refuses the request with this code and status, and
// that its message gives nothing away: no secret, no signature, one line.
function assertRefused(request, options, code, status, secret) {
  let error;
  try {
    verifyArrived(request, options);
  } catch (err) {
    error = err;
  }
  assert.ok(error, `verify accepted the request; expected ${code}`);
  assert.ok(error instanceof SigV4Error, `not a SigV4Error: ${error.stack}`);
  assert.equal(error.code, code, `${error.code}: ${error.message}`);
  assert.equal(error.status, status, `${error.code}: ${error.message}`);
  assert.ok(!error.message.includes(secret), `the message shows the secret: ${error.message}`);
  assert.ok(!/[0-9a-f]{64}/i.test(error.message), `the message shows a signature: ${error.message}`);
  assert.ok(!error.message.includes('\n'), `the message is more than a line: ${error.message}`);
  return error;
}

const withAuthorization = (request, change) => {
  const spoiled = copyOf(request);
  spoiled.headers.authorization = change(spoiled.headers.authorization);
  return spoiled;
};

// ---- botocore: every request verifies ------------------------------------

test('every request botocore and the AWS CRT sign verifies', async (t) => {
  const fixture = await botocore();
  const options = optionsFor(fixture);
  for (const [name, request] of fixture.requests) {
    await t.test(name, () => {
      // node joins a repeated header with ", "; headersDistinct keeps its values apart
      const headers = name === 'repeated header' ? request.headersDistinct : request.headers;
      const result = verifyArrived(request, options, headers);
      assert.equal(result.accessKeyId, fixture.accessKeyId);
      assert.equal(result.region, fixture.region);
      assert.equal(result.date.toISOString(), fixture.signedAt.toISOString());
      assert.ok(result.signedHeaders.includes('host'));
      assert.deepEqual(Object.keys(result).sort(), ['accessKeyId', 'date', 'region', 'signedHeaders']);
    });
  }
});

test('a repeated header as node joins it does not verify; its headersDistinct does', async () => {
  const fixture = await botocore();
  const request = fixture.requests.get('repeated header');
  assert.equal(request.headers['x-amz-meta-repeated'], 'first, second  value');
  assertRefused(request, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  verifyArrived(request, optionsFor(fixture), request.headersDistinct);
});

test('a request verifies again with the signing key cached', async () => {
  const fixture = await botocore();
  const request = fixture.requests.get('JSON protocol POST');
  for (let i = 0; i < 3; i++) verifyArrived(request, optionsFor(fixture));
});

// ---- what was signed, changed ----------------------------------------------

test('a changed body byte', async () => {
  const fixture = await botocore();
  for (const name of ['query protocol POST', 'JSON protocol POST', 'x-amz-content-sha256 of the body',
    'boto3 client SendMessage']) {
    const spoiled = copyOf(fixture.requests.get(name));
    spoiled.body[spoiled.body.length - 3] ^= 0x01;
    assertRefused(spoiled, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  }
});

test('UNSIGNED-PAYLOAD leaves the body out of the signature', async () => {
  const fixture = await botocore();
  const spoiled = copyOf(fixture.requests.get('UNSIGNED-PAYLOAD'));
  spoiled.body[0] ^= 0x01;
  verifyArrived(spoiled, optionsFor(fixture));
});

test('x-amz-content-sha256 neither a hash nor UNSIGNED-PAYLOAD', async () => {
  const fixture = await botocore();
  const spoiled = copyOf(fixture.requests.get('x-amz-content-sha256 of the body'));
  spoiled.headers['x-amz-content-sha256'] = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
  assertRefused(spoiled, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
});

test('a changed signed header', async () => {
  const fixture = await botocore();
  const json = copyOf(fixture.requests.get('JSON protocol POST'));
  json.headers['x-amz-target'] = 'AmazonSQS.DeleteQueue';
  assertRefused(json, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  const query = copyOf(fixture.requests.get('query protocol POST'));
  query.headers['content-type'] = 'application/x-amz-json-1.0';
  assertRefused(query, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  const token = copyOf(fixture.requests.get('session token'));
  token.headers['x-amz-security-token'] += 'x';
  assertRefused(token, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
});

test('spaces inside a signed header are collapsed, so more of them change nothing', async () => {
  const fixture = await botocore();
  const spaced = copyOf(fixture.requests.get('JSON protocol POST'));
  spaced.headers['x-amz-meta-spaces'] = spaced.headers['x-amz-meta-spaces'].replace(/ /g, ' \t ');
  verifyArrived(spaced, optionsFor(fixture));
});

test('a header dropped from SignedHeaders', async () => {
  const fixture = await botocore();
  const drop = (request, name) => withAuthorization(request, (value) =>
    value.replace(/SignedHeaders=([^,]*)/, (whole, list) =>
      `SignedHeaders=${list.split(';').filter((header) => header !== name).join(';')}`));
  // date is not one that must be signed: the signature no longer matches
  const dated = fixture.requests.get('Date header instead of X-Amz-Date');
  assertRefused(drop(dated, 'date'), optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  // host, content-type and x-amz-* must be signed
  const json = fixture.requests.get('JSON protocol POST');
  for (const name of ['host', 'content-type', 'x-amz-target', 'x-amz-meta-spaces', 'x-amz-date']) {
    const error = assertRefused(drop(json, name), optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
    assert.match(error.message, new RegExp(name));
  }
  const token = fixture.requests.get('session token');
  assertRefused(drop(token, 'x-amz-security-token'), optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
});

test('an unsigned x-amz-* or content-type header added', async () => {
  const fixture = await botocore();
  for (const [name, value] of [['x-amz-target', 'AmazonSQS.DeleteQueue'], ['content-type', 'text/plain'],
    ['x-amz-security-token', 'token']]) {
    const spoiled = copyOf(fixture.requests.get('GET with a query string to encode'));
    spoiled.headers[name] = value;
    assertRefused(spoiled, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
  }
  // other headers may go unsigned (user-agent, amz-sdk-*, x-forwarded-for)
  const other = copyOf(fixture.requests.get('GET with a query string to encode'));
  other.headers['x-forwarded-for'] = '192.0.2.1';
  other.headers['x-amzn-trace-id'] = 'Root=1-00000000-000000000000000000000000';
  verifyArrived(other, optionsFor(fixture));
  // a form's content type too, which libcurl adds after kombu has signed:
  // the body is read as a form with it or without it
  const form = copyOf(fixture.requests.get('GET with a query string to encode'));
  form.headers['content-type'] = 'application/x-www-form-urlencoded; charset=utf-8';
  verifyArrived(form, optionsFor(fixture));
  form.headers['content-type'] = ['application/x-www-form-urlencoded', 'application/x-amz-json-1.0'];
  assertRefused(form, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
});

test('a signed header the request does not have', async () => {
  const fixture = await botocore();
  const spoiled = withAuthorization(fixture.requests.get('JSON protocol POST'),
    (value) => value.replace('SignedHeaders=', 'SignedHeaders=absent;'));
  const error = assertRefused(spoiled, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  assert.match(error.message, /absent/);
});

test('a changed method, path or query parameter', async () => {
  const fixture = await botocore();
  const method = copyOf(fixture.requests.get('JSON protocol POST'));
  method.method = 'PUT';
  assertRefused(method, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);

  const pathChanged = copyOf(fixture.requests.get('path with special characters'));
  pathChanged.url = pathChanged.url.replace('my-queue', 'my-queuf');
  assertRefused(pathChanged, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);

  const presigned = copyOf(fixture.requests.get('presigned URL'));
  presigned.url = presigned.url.replace('MaxNumberOfMessages=10', 'MaxNumberOfMessages=1');
  assertRefused(presigned, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);

  const added = copyOf(fixture.requests.get('presigned URL'));
  added.url += '&DeleteMessage=1';
  assertRefused(added, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);

  const get = fixture.requests.get('GET with a query string to encode');
  const plus = copyOf(get);
  plus.url = plus.url.replace('%2B', '+');     // a plus made a space
  assertRefused(plus, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  const repeated = copyOf(get);
  repeated.url = repeated.url.replace('Repeated=one', 'Repeated=uno');
  assertRefused(repeated, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
});

test('what the canonical request reads the same way verifies the same', async () => {
  const fixture = await botocore();
  const get = fixture.requests.get('GET with a query string to encode');
  // a space as + or %20, the parameters in another order, ~ encoded or not
  const respelled = copyOf(get);
  const params = respelled.url.split('?')[1].replace('a+b', 'a%20b').replace('~e', '%7Ee').split('&').reverse();
  respelled.url = `${respelled.url.split('?')[0]}?${params.join('&')}`;
  verifyArrived(respelled, optionsFor(fixture));
  // dot segments and doubled slashes
  const dotted = copyOf(get);
  dotted.url = dotted.url.replace('/123456789012/my-queue', '/123456789012//x/../my-queue/.');
  verifyArrived(dotted, optionsFor(fixture));
});

// ---- credentials ------------------------------------------------------------

test('a wrong secret', async () => {
  const fixture = await botocore();
  const wrong = optionsFor(fixture, { lookupSecret: () => `${fixture.secret.slice(0, -1)}X` });
  // (a JSON-protocol boto3 presigns no URL of its own: sign_with_botocore.py)
  const names = ['JSON protocol POST', 'presigned URL', 'boto3 client presigned ReceiveMessage'];
  for (const name of names.filter((n) => fixture.requests.has(n))) {
    assertRefused(fixture.requests.get(name), wrong, 'SignatureDoesNotMatch', 403, fixture.secret);
  }
});

test('an unknown access key', async () => {
  const fixture = await botocore();
  const nobody = optionsFor(fixture, { lookupSecret: () => undefined });
  for (const name of ['JSON protocol POST', 'presigned URL']) {
    const error = assertRefused(fixture.requests.get(name), nobody, 'InvalidClientTokenId', 403, fixture.secret);
    assert.match(error.message, new RegExp(fixture.accessKeyId));
  }
});

// ---- time -------------------------------------------------------------------

test('a request signed 16 minutes before or after the server\'s time', async () => {
  const fixture = await botocore();
  const at = (minutes) => optionsFor(fixture, { now: new Date(fixture.signedAt.getTime() + minutes * MINUTE) });
  for (const name of ['JSON protocol POST', 'Date header instead of X-Amz-Date']) {
    const request = fixture.requests.get(name);
    assertRefused(request, at(16), 'RequestExpired', 400, fixture.secret);
    assertRefused(request, at(-16), 'RequestExpired', 400, fixture.secret);
    for (const minutes of [15, 14, 0, -14, -15]) verifyArrived(request, at(minutes));
  }
});

test('a presigned URL used after its X-Amz-Expires, or signed too far ahead', async () => {
  const fixture = await botocore();
  const at = (seconds) => optionsFor(fixture, { now: new Date(fixture.signedAt.getTime() + seconds * 1000) });
  const request = fixture.requests.get('presigned URL');    // X-Amz-Expires=300
  verifyArrived(request, at(300));
  assertRefused(request, at(301), 'RequestExpired', 400, fixture.secret);
  verifyArrived(request, at(-14 * 60));
  assertRefused(request, at(-16 * 60), 'RequestExpired', 400, fixture.secret);
  // a presigned URL is good for its X-Amz-Expires, however much longer than 15 minutes
  const longer = fixture.requests.get('presigned URL with a session token');   // 3600
  verifyArrived(longer, at(3599));
  assertRefused(longer, at(3601), 'RequestExpired', 400, fixture.secret);
});

test('X-Amz-Expires missing, not a number, or more than a week', async () => {
  const fixture = await botocore();
  const request = fixture.requests.get('presigned URL');
  for (const expires of ['', 'X-Amz-Expires=abc&', 'X-Amz-Expires=604801&', 'X-Amz-Expires=0&']) {
    const spoiled = copyOf(request);
    spoiled.url = spoiled.url.replace('X-Amz-Expires=300&', expires);
    assertRefused(spoiled, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
  }
});

test('no date, or a date that is not one', async () => {
  const fixture = await botocore();
  const noDate = copyOf(fixture.requests.get('Date header instead of X-Amz-Date'));
  delete noDate.headers.date;
  assertRefused(noDate, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
  for (const value of ['2024-02-29T23:55:07Z', '20240230T235507Z', '20240229T235507']) {
    const spoiled = copyOf(fixture.requests.get('JSON protocol POST'));
    spoiled.headers['x-amz-date'] = value;
    assertRefused(spoiled, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
  }
  const badHttpDate = copyOf(fixture.requests.get('Date header instead of X-Amz-Date'));
  badHttpDate.headers.date = 'yesterday';
  assertRefused(badHttpDate, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
});

// ---- the credential scope ---------------------------------------------------

test('a scope for another service', async () => {
  const fixture = await botocore();
  const header = withAuthorization(fixture.requests.get('JSON protocol POST'), (value) => value.replace('/sqs/', '/sns/'));
  assertRefused(header, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  const presigned = copyOf(fixture.requests.get('presigned URL'));
  presigned.url = presigned.url.replace('%2Fsqs%2F', '%2Fsns%2F');
  assertRefused(presigned, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  // and the service the gateway expects is another
  assertRefused(fixture.requests.get('JSON protocol POST'), optionsFor(fixture, { service: 'sns' }),
    'SignatureDoesNotMatch', 403, fixture.secret);
});

test('a scope date that is not the date of X-Amz-Date', async () => {
  const fixture = await botocore();
  const header = withAuthorization(fixture.requests.get('JSON protocol POST'),
    (value) => value.replace('/20240229/', '/20240301/'));
  assertRefused(header, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  // X-Amz-Date moved past midnight, the scope left on the day before
  const moved = copyOf(fixture.requests.get('JSON protocol POST'));
  moved.headers['x-amz-date'] = '20240301T000007Z';
  assertRefused(moved, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
  const presigned = copyOf(fixture.requests.get('presigned URL'));
  presigned.url = presigned.url.replace('%2F20240229%2F', '%2F20240228%2F');
  assertRefused(presigned, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
});

test('a scope that does not end in aws4_request', async () => {
  const fixture = await botocore();
  const header = withAuthorization(fixture.requests.get('JSON protocol POST'),
    (value) => value.replace('/aws4_request', '/aws5_request'));
  assertRefused(header, optionsFor(fixture), 'SignatureDoesNotMatch', 403, fixture.secret);
});

// ---- malformed or missing --------------------------------------------------

test('a malformed Authorization header', async (t) => {
  const fixture = await botocore();
  const request = fixture.requests.get('JSON protocol POST');
  const good = request.headers.authorization;
  const signature = /Signature=([0-9a-f]+)/.exec(good)[1];
  const shapes = {
    'another scheme': 'Bearer abc',
    'Signature Version 2': `AWS ${fixture.accessKeyId}:c2lnbmF0dXJl`,
    'the algorithm alone': 'AWS4-HMAC-SHA256',
    'empty': '',
    'another algorithm': good.replace('AWS4-HMAC-SHA256', 'AWS4-HMAC-SHA512'),
    'Signature Version 4A': good.replace('AWS4-HMAC-SHA256', 'AWS4-ECDSA-P256-SHA256'),
    'no Signature': good.replace(/, Signature=[0-9a-f]+/, ''),
    'no SignedHeaders': good.replace(/ SignedHeaders=[^,]*,/, ''),
    'no Credential': good.replace(/ Credential=[^,]*,/, ''),
    'an empty SignedHeaders': good.replace(/SignedHeaders=[^,]*/, 'SignedHeaders='),
    'a credential short of a part': good.replace('/sqs/', '/'),
    'an empty access key ID': good.replace(`Credential=${fixture.accessKeyId}`, 'Credential='),
    'Signature twice': `${good}, Signature=${signature}`,
    'an unknown part': `${good}, Expires=300`,
    'a short signature': good.replace(signature, signature.slice(1)),
    'a signature not in hex': good.replace(signature, `${signature.slice(0, -1)}g`),
    'upper-case signed header names': good.replace(/SignedHeaders=([^,]*)/, (whole, list) => `SignedHeaders=${list.toUpperCase()}`),
    'signed header names with an empty one': good.replace(/SignedHeaders=([^,]*)/, 'SignedHeaders=$1;'),
  };
  for (const [shape, value] of Object.entries(shapes)) {
    await t.test(shape, () => {
      assertRefused(withAuthorization(request, () => value), optionsFor(fixture), 'IncompleteSignature', 400,
        fixture.secret);
    });
  }
});

test('a malformed presigned URL', async () => {
  const fixture = await botocore();
  const request = fixture.requests.get('presigned URL');
  const cut = (pattern, replacement = '') => {
    const spoiled = copyOf(request);
    spoiled.url = spoiled.url.replace(pattern, replacement);
    return spoiled;
  };
  for (const spoiled of [
    cut(/&X-Amz-Signature=[0-9a-f]+/),
    cut(/X-Amz-Credential=[^&]*&/),
    cut(/X-Amz-SignedHeaders=[^&]*&/),
    cut(/X-Amz-Date=[^&]*&/),
    cut('X-Amz-Algorithm=AWS4-HMAC-SHA256', 'X-Amz-Algorithm=AWS4-HMAC-SHA1'),
    cut(/X-Amz-Signature=([0-9a-f]+)/, 'X-Amz-Signature=$1&X-Amz-Signature=$1'),
  ]) {
    assertRefused(spoiled, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
  }
  // signed both ways at once
  const both = copyOf(request);
  both.headers.authorization = fixture.requests.get('JSON protocol POST').headers.authorization;
  assertRefused(both, optionsFor(fixture), 'IncompleteSignature', 400, fixture.secret);
});

test('no signature at all', async () => {
  const fixture = await botocore();
  const header = copyOf(fixture.requests.get('JSON protocol POST'));
  delete header.headers.authorization;
  assertRefused(header, optionsFor(fixture), 'MissingAuthenticationToken', 403, fixture.secret);
  const query = copyOf(fixture.requests.get('presigned URL'));
  query.url = query.url.split('&').filter((param) => !param.startsWith('X-Amz-')).join('&');
  assertRefused(query, optionsFor(fixture), 'MissingAuthenticationToken', 403, fixture.secret);
});

// ---- the AWS CLI ---------------------------------------------------------------

// Runs the AWS CLI against the loopback server; resolves to the request it sent.
async function requestOfAwsCli(args, env) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sigv4-aws-cli-'));
  const cliEnv = { PATH: '/usr/bin:/bin', HOME: home, AWS_DEFAULT_REGION: 'us-west-2', AWS_MAX_ATTEMPTS: '1',
    AWS_EC2_METADATA_DISABLED: 'true', ...env };
  const running = new Promise((resolve, reject) => {
    execFile(AWS_CLI, [...args, '--endpoint-url', `http://127.0.0.1:${port}`], { env: cliEnv }, (err) => {
      // the answer is an error on purpose; not starting at all is not
      if (err && typeof err.code !== 'number') {
        reject(new Error(`${AWS_CLI} did not run (${err.message}): apt-get install -y awscli`));
      } else {
        resolve();
      }
    });
  });
  try {
    return await requestSentBy(running, AWS_CLI);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

test('the AWS CLI', async (t) => {
  const accessKeyId = 'AKIDEXAMPLEAWSCLI';
  const secret = 'aws/cli+SECRET/example0123456789ABCDEF';
  const options = () => ({ lookupSecret: (id) => (id === accessKeyId ? secret : undefined), now: new Date() });
  const queueUrl = `http://127.0.0.1:${port}/123456789012/cli-queue`;
  const runs = {
    'sqs send-message': [['sqs', 'send-message', '--queue-url', queueUrl, '--message-body', 'héllo ✓ +%20&'], {}],
    'sqs receive-message with a session token': [['sqs', 'receive-message', '--queue-url', queueUrl],
      { AWS_SESSION_TOKEN: 'IQoJb3JpZ2luX2VjEXAMPLE/cli+token=' }],
  };
  for (const [name, [args, env]] of Object.entries(runs)) {
    await t.test(name, async () => {
      const arrived = await requestOfAwsCli(args, { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secret, ...env });
      const result = verifyArrived(arrived, options());
      assert.equal(result.region, 'us-west-2');
      const spoiled = copyOf(arrived);
      spoiled.body[spoiled.body.length - 1] ^= 0x01;
      assertRefused(spoiled, options(), 'SignatureDoesNotMatch', 403, secret);
    });
  }
});

// ---- the AWS SDK for JavaScript v3 -----------------------------------------

// The SDK's modules, from test/gateway (or AWS_SDK_DIR); or why not.
function findSdk() {
  const dir = process.env.AWS_SDK_DIR || __dirname;
  const load = (name) => require(require.resolve(name, { paths: [dir] }));
  try {
    return {
      sqs: load('@aws-sdk/client-sqs'),
      SignatureV4: load('@smithy/signature-v4').SignatureV4,
      Hash: load('@smithy/core/serde').Hash,
      HttpRequest: load('@smithy/core/protocols').HttpRequest,
      NodeHttpHandler: load('@smithy/node-http-handler').NodeHttpHandler,
    };
  } catch (err) {
    return { skip: `${dir} lacks the SDK (npm ci in test/gateway): ${err.message.split('\n')[0]}` };
  }
}

const sdk = findSdk();
const SDK_ACCESS_KEY_ID = 'AKIDEXAMPLESDKV3';
const SDK_SECRET = 'sdk/v3+secret/EXAMPLEKEY0123456789abcdef';
const sdkOptions = (now) => ({
  lookupSecret: (id) => (id === SDK_ACCESS_KEY_ID ? SDK_SECRET : undefined),
  now,
  service: 'sqs',
});

test('the SQS client of the AWS SDK for JavaScript v3', { skip: sdk.skip }, async (t) => {
  for (const sessionToken of [undefined, 'IQoJb3JpZ2luX2VjEXAMPLE/token+=']) {
    const client = new sdk.sqs.SQSClient({
      region: 'ap-southeast-2',
      endpoint: `http://127.0.0.1:${port}`,
      credentials: { accessKeyId: SDK_ACCESS_KEY_ID, secretAccessKey: SDK_SECRET, sessionToken },
      maxAttempts: 1,
    });
    const queueUrl = `http://127.0.0.1:${port}/123456789012/sdk-queue`;
    const commands = [
      new sdk.sqs.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'héllo ✓ & a+b=c %20' }),
      new sdk.sqs.ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
      new sdk.sqs.ListQueuesCommand({ QueueNamePrefix: 'a b+c' }),
    ];
    for (const command of commands) {
      await t.test(`${command.constructor.name}${sessionToken ? ' with a session token' : ''}`, async () => {
        const arrived = await requestSentBy(client.send(command).catch(() => {}), 'the SQS client');
        const result = verifyArrived(arrived, sdkOptions(new Date()));
        assert.equal(result.region, 'ap-southeast-2');
        assert.ok(arrived.headers['x-amz-target'].startsWith('AmazonSQS.'));
        const spoiled = copyOf(arrived);
        spoiled.headers['x-amz-target'] = 'AmazonSQS.DeleteQueue';
        assertRefused(spoiled, sdkOptions(new Date()), 'SignatureDoesNotMatch', 403, SDK_SECRET);
      });
    }
    client.destroy();
  }
});

test('@smithy/signature-v4, signed and presigned, sent by the SDK\'s HTTP handler', { skip: sdk.skip }, async () => {
  const signedAt = new Date('2024-12-31T23:59:30Z');
  const signer = new sdk.SignatureV4({
    service: 'sqs',
    region: 'us-east-1',
    credentials: { accessKeyId: SDK_ACCESS_KEY_ID, secretAccessKey: SDK_SECRET },
    sha256: sdk.Hash.bind(null, 'sha256'),
  });
  const handler = new sdk.NodeHttpHandler();
  const send = (request) => requestSentBy(handler.handle(request).then(({ response }) => response.body.resume()),
    'the HTTP handler');
  const request = () => new sdk.HttpRequest({
    method: 'POST',
    protocol: 'http:',
    hostname: '127.0.0.1',
    port,
    path: '/123456789012/my%20queue/a~b',
    query: { Action: 'ListQueues', Prefix: 'a b+c%é~', Repeated: ['2', '1'], Empty: '' },
    headers: {
      host: `127.0.0.1:${port}`,
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.ListQueues',
    },
    body: JSON.stringify({ QueueNamePrefix: 'ünï' }),
  });

  const signed = await send(await signer.sign(request(), { signingDate: signedAt }));
  assert.match(signed.url, /^\/123456789012\/my%20queue\/a~b\?/);
  const result = verifyArrived(signed, sdkOptions(new Date(signedAt.getTime() + MINUTE)));
  assert.equal(result.date.toISOString(), '2024-12-31T23:59:30.000Z');
  const body = copyOf(signed);
  body.body[body.body.length - 2] ^= 0x01;
  assertRefused(body, sdkOptions(new Date(signedAt.getTime() + MINUTE)), 'SignatureDoesNotMatch', 403, SDK_SECRET);

  const presigned = await send(await signer.presign(request(), { signingDate: signedAt, expiresIn: 120 }));
  assert.match(presigned.url, /X-Amz-Signature=/);
  verifyArrived(presigned, sdkOptions(new Date(signedAt.getTime() + 120 * 1000)));
  assertRefused(presigned, sdkOptions(new Date(signedAt.getTime() + 121 * 1000)), 'RequestExpired', 400, SDK_SECRET);
  handler.destroy();
});
