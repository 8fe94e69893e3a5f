'use strict';
// One SQS request, from its bytes to its answer:
//   1. the body, read up to a limit (a larger one is refused unread);
//   2. the signature (sigv4.js), before any database work;
//   3. the action and its parameters, in either wire protocol (protocol.js);
//   4. the action, in one transaction as the access key's role (a
//      ReceiveMessage that waits then waits in long_poll.js, without it);
//   5. the answer or the error, in the protocol the request spoke (render.js).
const { randomUUID } = require('node:crypto');
const { verify, SigV4Error } = require('../sigv4');
const { SqsError } = require('./errors');
const { parseRequest, requestProtocol } = require('./protocol');
const { renderResult, renderError } = require('./render');
const { sqsErrorOf } = require('./extension_errors');
const { asRole } = require('../database');
const { LongPolls } = require('./long_poll');
const ACTIONS = {
  ...require('./actions/queues'),
  ...require('./actions/tags'),
  ...require('./actions/messages'),
  ...require('./actions/move_tasks'),
};
// a batch of ten 1 MiB messages, form-encoded, fits
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

function tooLarge() {
  return new SqsError('InvalidParameterValue', `The request is larger than ${MAX_REQUEST_BYTES} bytes.`);
}

// The request's body as a Buffer; refuses a declared or actual size over
// the limit without keeping more than the limit.
function readBody(req) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (declared > MAX_REQUEST_BYTES) {
      reject(tooLarge());
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(tooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function authenticationError(err) {
  if (err instanceof SigV4Error) return new SqsError(err.code, err.message);
  return err;
}

// A signal that aborts when the client goes away before its answer is
// written, so that a long poll gives its messages to someone else.
function clientGoneSignal(res) {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableEnded) gone.abort();
  });
  return gone.signal;
}

function makeHandler(config, pool, schema) {
  const secrets = new Map(config.credentials.map((c) => [c.accessKeyId, c]));
  const lookupSecret = (id) => (secrets.has(id) ? secrets.get(id).secretAccessKey : undefined);
  const longPolls = new LongPolls({ pool, schema, maxConnections: config.maxConnections });

  async function answer(req, body, clientGone) {
    const request = { method: req.method, url: req.url, headers: req.headersDistinct };
    let signer;
    try {
      signer = verify(request, body, { lookupSecret, now: new Date(), service: 'sqs' });
    } catch (err) {
      throw authenticationError(err);
    }
    const { action, params } = parseRequest({ method: req.method, url: req.url, headers: req.headers }, body);
    const run = ACTIONS[action];
    if (!run) throw new SqsError('UnsupportedOperation', `The action ${action} is not supported by this gateway yet.`);
    const role = secrets.get(signer.accessKeyId).role;
    const context = { params, config, host: req.headers.host || `${config.host}:${config.port}`, role, longPolls, clientGone };
    try {
      return { action, result: await asRole(pool, schema, role, (client) => run(context, client)) };
    } catch (err) {
      throw sqsErrorOf(err);
    }
  }

  return async function handle(req, res) {
    const requestId = randomUUID();
    const protocol = requestProtocol(req.headers);
    const clientGone = clientGoneSignal(res);
    let reply;
    try {
      const body = await readBody(req);
      const { action, result } = await answer(req, body, clientGone);
      reply = renderResult(protocol, action, result, requestId);
    } catch (err) {
      const sqsError = err instanceof SqsError ? err : null;
      if (!sqsError) console.error(`gateway: request ${requestId}: ${err && err.stack ? err.stack : err}`);
      reply = renderError(protocol, err, requestId);
    }
    // a Date lets the SDKs correct a skewed clock
    res.writeHead(reply.status, { ...reply.headers, Date: new Date().toUTCString() });
    res.end(reply.body);
  };
}

module.exports = { makeHandler };
