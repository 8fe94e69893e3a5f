'use strict';
// One SQS request, from its bytes to its answer:
//   1. the body, read up to a limit (a larger one is refused unread);
//   2. the signature (sigv4.js), before any database work;
//   3. the action and its parameters, in either wire protocol (protocol.js);
//   4. the action, in one transaction as the access key's role (a
//      ReceiveMessage that waits then waits in long_poll.js, without it);
//   5. the answer or the error, in the protocol the request spoke (render.js).
// And what never becomes a request (makeServer): headers too large, bytes
// that are not HTTP, a client too slow to send its request, each answered
// with an error of the protocol it seems to speak, and the connection closed.
const { randomUUID } = require('node:crypto');
const { verify, SigV4Error } = require('../sigv4');
const { SqsError } = require('./errors');
const { parseRequest, requestProtocol } = require('./protocol');
const { renderResult, renderError } = require('./render');
const { sqsErrorOf } = require('./extension_errors');
const { asRole } = require('../database');
const { readBody, lingeringClose } = require('../request_body');
const { makeHttpServer } = require('../http_server');
const { LongPolls } = require('./long_poll');
const ACTIONS = {
  ...require('./actions/queues'),
  ...require('./actions/tags'),
  ...require('./actions/messages'),
  ...require('./actions/move_tasks'),
};
// a batch of ten messages of 1 MiB in all, form-encoded (three bytes for
// one) or JSON-escaped (six for one), fits
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
// node's own limit on the request line and headers together
const MAX_HEADER_BYTES = 16 * 1024;

function tooLarge() {
  return new SqsError('InvalidParameterValue', `The request is larger than ${MAX_REQUEST_BYTES} bytes.`);
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
    let close = false;
    try {
      const body = await readBody(req, MAX_REQUEST_BYTES, tooLarge);
      const { action, result } = await answer(req, body, clientGone);
      reply = renderResult(protocol, action, result, requestId);
    } catch (err) {
      const sqsError = err instanceof SqsError ? err : null;
      if (!sqsError && !(err && err.clientGone)) console.error(`gateway: request ${requestId}: ${err && err.stack ? err.stack : err}`);
      reply = renderError(protocol, err, requestId);
      close = Boolean(err && err.closeConnection);
    }
    // the client is gone, or was answered already (a request too slow)
    if (res.headersSent || res.destroyed || !req.socket.writable) return;
    // a Date lets the SDKs correct a skewed clock
    res.writeHead(reply.status, { ...reply.headers, Date: new Date().toUTCString() });
    // not "Connection: close", with which node would close the socket at once
    if (close) res.once('finish', () => lingeringClose(req));
    res.end(reply.body);
  };
}

/* ---------------------------------------------------------------- */
/* What never becomes a request                                      */
/* ---------------------------------------------------------------- */

// The protocol a request that could not be read seems to speak: its
// headers if node read them, else the bytes it had.
function guessedProtocol(socket, err) {
  const inFlight = socket._httpMessage;
  if (inFlight && inFlight.req) return requestProtocol(inFlight.req.headers);
  const raw = Buffer.isBuffer(err.rawPacket) ? err.rawPacket.toString('latin1').toLowerCase() : '';
  return /\r\nx-amz-target:|\r\ncontent-type:\s*application\/x-amz-json-1\.0/.test(raw) ? 'json' : 'query';
}

function clientErrorOf(err) {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SqsError('RequestTimeout');
    case 'HPE_HEADER_OVERFLOW':
      return new SqsError('InvalidParameterValue', `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.`);
    default:
      return new SqsError('InvalidParameterValue', `The request is not valid HTTP/1.1 (${String(err.code).slice(0, 40)}).`);
  }
}

// The HTTP server of the SQS side.
function makeServer(config, pool, schema) {
  return makeHttpServer(config, {
    handler: makeHandler(config, pool, schema),
    maxHeaderBytes: MAX_HEADER_BYTES,
    errorReply: (err, socket) => renderError(guessedProtocol(socket, err), clientErrorOf(err)),
  });
}

module.exports = { makeHandler, makeServer, MAX_REQUEST_BYTES, MAX_HEADER_BYTES };
