'use strict';
// One Azure Queue Storage request, from its bytes to its answer:
//   1. the body, read up to a limit (a larger one is refused unread);
//   2. the account of the path and its Shared Key signature
//      (shared_key.js) or account SAS (sas.js), before any database work;
//   3. the service version (x-ms-version), which the answer repeats;
//   4. the operation (routes.js) and the queue name's rules (names.js);
//   5. the operation as the account's role: in one transaction, or as one
//      statement when it is one call of the extension;
//   6. the answer, or the error as Azure writes one (errors.js, and the
//      extension's errors through extension_errors.js).
// And what never becomes a request (makeAzureServer): headers too large,
// bytes that are not HTTP, a client too slow, answered with an Azure error
// and the connection closed.
const { randomUUID } = require('node:crypto');
const { AzureError } = require('./errors');
const { azureErrorOf } = require('./extension_errors');
const { verifySharedKey } = require('./shared_key');
const { verifyAccountSas, authorizeOperation } = require('./sas');
const { readQuery } = require('./parameters');
const { route } = require('./routes');
const { checkQueueName } = require('./names');
const { document } = require('./xml');
const { asRole, asRoleOneStatement } = require('../database');
const { readBody, lingeringClose } = require('../request_body');
const { makeHttpServer } = require('../http_server');

// A message of 64 KiB, each character escaped as a reference, fits.
const MAX_REQUEST_BYTES = 1024 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;
// The version answered when the request's is unknown or bad.
const SERVICE_VERSION = '2025-11-05';
const VERSION = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

function tooLarge() {
  return new AzureError('RequestBodyTooLarge', { details: { MaxLimit: String(MAX_REQUEST_BYTES) } });
}

// The path's segments ("/acct/q/messages/" -> ['acct', 'q', 'messages']),
// the raw path (as signed) and the query string.
function splitUrl(url) {
  const question = url.indexOf('?');
  const path = question < 0 ? url : url.slice(0, question);
  const query = question < 0 ? '' : url.slice(question + 1);
  const segments = path.split('/').slice(1);
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  let decoded;
  try {
    decoded = segments.map(decodeURIComponent);
  } catch {
    throw new AzureError('InvalidUri');
  }
  return { path, query, segments: decoded };
}

function requestVersion(headers) {
  const version = headers['x-ms-version'];
  if (version === undefined) {
    throw new AzureError('MissingRequiredHeader', { details: { HeaderName: 'x-ms-version' } });
  }
  if (!VERSION.test(version)) {
    throw new AzureError('InvalidHeaderValue', { details: { HeaderName: 'x-ms-version', HeaderValue: String(version).slice(0, 64) } });
  }
  return version;
}

// The XML body of an error: Azure's <Error> with the request's id and the
// time in its message.
function errorDocument(err, requestId) {
  const message = `${err.message}\nRequestId:${requestId}\nTime:${new Date().toISOString()}`;
  return document(['Error', [['Code', err.code], ['Message', message],
    ...Object.entries(err.details).map(([name, value]) => [name, value])]]);
}

function makeAzureHandler(config, pool, schema) {
  const accounts = new Map(config.azureAccounts.map((a) => [a.name, { ...a, key: Buffer.from(a.key, 'base64') }]));

  async function answer(req, body, state) {
    const { path, query: rawQuery, segments } = splitUrl(req.url);
    if (segments.length === 0) throw new AzureError('InvalidUri');
    const [accountName, ...rest] = segments;
    const query = readQuery(rawQuery);
    // a request without a Shared Key header may carry an account SAS
    const sas = req.headers.authorization === undefined && query.has('sig')
      ? verifyAccountSas(query, accountName, accounts, new Date(), req.socket.remoteAddress)
      : null;
    const account = sas ? sas.account
      : verifySharedKey({ method: req.method, path, query: rawQuery, headers: req.headers }, accountName, accounts, new Date());
    state.version = requestVersion(req.headers);
    const { operation, action, oneCall, queue, messageId } = route(req.method, rest, query);
    if (sas) authorizeOperation(sas, operation);
    if (queue !== undefined) checkQueueName(queue);
    const host = req.headers.host || `${config.host}:${config.azurePort}`;
    const request = {
      operation, account: accountName, queue, messageId, query, headers: req.headers, body,
      serviceEndpoint: `http://${host}/${accountName}/`,
    };
    try {
      const run = oneCall ? asRoleOneStatement : asRole;
      return await run(pool, schema, account.role, (client) => action(request, client));
    } catch (err) {
      throw azureErrorOf(err);
    }
  }

  return async function handle(req, res) {
    const requestId = randomUUID();
    const state = { version: null };
    let reply;
    let close = false;
    try {
      const body = await readBody(req, MAX_REQUEST_BYTES, tooLarge);
      reply = await answer(req, body, state);
    } catch (err) {
      const azureError = err instanceof AzureError ? err : null;
      if (!azureError && !(err && err.clientGone)) console.error(`gateway: azure request ${requestId}: ${err && err.stack ? err.stack : err}`);
      const shown = azureError || new AzureError('InternalError');
      reply = { status: shown.status, headers: { 'x-ms-error-code': shown.code, ...shown.headers }, error: shown };
      close = Boolean(err && err.closeConnection);
    }
    if (res.headersSent || res.destroyed || !req.socket.writable) return;
    const headers = {
      'x-ms-request-id': requestId,
      'x-ms-version': state.version || SERVICE_VERSION,
      Date: new Date().toUTCString(),
      ...reply.headers,
    };
    const clientRequestId = req.headers['x-ms-client-request-id'];
    if (clientRequestId && /^[\x20-\x7e]{1,1024}$/.test(clientRequestId)) headers['x-ms-client-request-id'] = clientRequestId;
    let bytes = null;
    if (reply.error) bytes = errorDocument(reply.error, requestId);
    else if (reply.document) bytes = document([reply.document[0], reply.document[1]], reply.document[2]);
    if (bytes) headers['Content-Type'] = 'application/xml';
    headers['Content-Length'] = bytes && req.method !== 'HEAD' ? bytes.length : 0;
    res.writeHead(reply.status, headers);
    if (close) res.once('finish', () => lingeringClose(req));
    res.end(req.method === 'HEAD' ? undefined : bytes || undefined);
  };
}

function clientErrorOf(err) {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AzureError('OperationTimedOut', { message: 'The request was not received within the time allowed; the connection is closed.' });
    case 'HPE_HEADER_OVERFLOW':
      return new AzureError('InvalidInput', { message: `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.` });
    default:
      return new AzureError('InvalidInput', { message: `The request is not valid HTTP/1.1 (${String(err.code).slice(0, 40)}).` });
  }
}

// The HTTP server of the Azure side, with the SQS side's limits of time.
function makeAzureServer(config, pool, schema) {
  return makeHttpServer(config, {
    handler: makeAzureHandler(config, pool, schema),
    maxHeaderBytes: MAX_HEADER_BYTES,
    errorReply: (err) => {
      const error = clientErrorOf(err);
      const body = errorDocument(error, randomUUID());
      return { status: error.status, body,
        headers: { 'x-ms-error-code': error.code, 'Content-Type': 'application/xml', 'Content-Length': body.length } };
    },
  });
}

module.exports = { makeAzureServer, makeAzureHandler, MAX_REQUEST_BYTES, SERVICE_VERSION };
