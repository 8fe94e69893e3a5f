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
const http = require('node:http');
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
// a batch of ten messages of 1 MiB in all, form-encoded (three bytes for
// one) or JSON-escaped (six for one), fits
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
// node's own limit on the request line and headers together
const MAX_HEADER_BYTES = 16 * 1024;

function tooLarge() {
  return new SqsError('InvalidParameterValue', `The request is larger than ${MAX_REQUEST_BYTES} bytes.`);
}

// The request's body as a Buffer.  A declared or actual size over the
// limit is refused without keeping more than the limit: the error carries
// closeConnection, and the rest of the body is not kept (lingeringClose).
function readBody(req) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const refuse = (err) => {
      if (settled) return;
      settled = true;
      req.pause();
      reject(err);
    };
    const declared = Number(req.headers['content-length']);
    if (declared > MAX_REQUEST_BYTES) {
      refuse(Object.assign(tooLarge(), { closeConnection: true }));
      return;
    }
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      if (settled) return;
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        chunks.length = 0;
        refuse(Object.assign(tooLarge(), { closeConnection: true }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks));
    });
    // the client went away, or took too long (makeServer answers that):
    // no failure of the gateway's
    req.on('error', (err) => refuse(Object.assign(err, { clientGone: true })));
  });
}

// After an answer to a request whose body was not read: the connection
// is closed, but first what the client still sends is read and thrown
// away for a moment, as closing a socket with bytes unread would reset it
// and lose the answer on its way.
const LINGER_MS = 2000;

function lingeringClose(req) {
  const socket = req.socket;
  req.resume();
  socket.end();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
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
      const body = await readBody(req);
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

// node's 'clientError': the request could not be read, or not in time.
// Answered, unless an answer has begun or the client is gone, and closed.
function onClientError(err, socket) {
  const gone = ['ECONNRESET', 'EPIPE', 'ECONNABORTED'].includes(err.code);
  const inFlight = socket._httpMessage;
  if (!gone && socket.writable && !(inFlight && inFlight.headersSent)) {
    const reply = renderError(guessedProtocol(socket, err), clientErrorOf(err));
    const head = [`HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status]}`,
      ...Object.entries({ ...reply.headers, Date: new Date().toUTCString(), Connection: 'close' }).map(([k, v]) => `${k}: ${v}`)];
    socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), reply.body]));
    // a client that does not read its answer is not waited for
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  socket.destroy();
}

// The HTTP server: requestTimeout (seconds, 60 unless configured) for a
// whole request to arrive, at most 20 of them for its headers.
function makeServer(config, pool, schema) {
  const requestTimeout = Math.round((config.requestTimeout || 60) * 1000);
  const server = http.createServer({
    requestTimeout,
    headersTimeout: Math.min(20_000, requestTimeout),
    // how often node looks for requests past their time
    connectionsCheckingInterval: Math.max(250, Math.min(5000, Math.floor(requestTimeout / 4))),
    maxHeaderSize: MAX_HEADER_BYTES,
  }, makeHandler(config, pool, schema));
  server.on('clientError', onClientError);
  return server;
}

module.exports = { makeHandler, makeServer, MAX_REQUEST_BYTES, MAX_HEADER_BYTES };
