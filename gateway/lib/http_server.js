'use strict';
// The HTTP server of each protocol's side: requestTimeout (seconds, 60
// unless configured) for a whole request to arrive, at most 20 of them for
// its headers, headers of at most maxHeaderBytes; a request node cannot
// read (too large, malformed, too slow) answered with the side's own error
// (errorReply(err, socket) -> { status, headers, body }) and closed.
const http = require('node:http');

function answerClientError(err, socket, errorReply) {
  const gone = ['ECONNRESET', 'EPIPE', 'ECONNABORTED'].includes(err.code);
  const inFlight = socket._httpMessage;
  // answered, unless an answer has begun or the client is gone
  if (!gone && socket.writable && !(inFlight && inFlight.headersSent)) {
    const reply = errorReply(err, socket);
    const head = [`HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status]}`,
      ...Object.entries({ ...reply.headers, Date: new Date().toUTCString(), Connection: 'close' }).map(([k, v]) => `${k}: ${v}`)];
    socket.end(Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), reply.body]));
    // a client that does not read its answer is not waited for
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  socket.destroy();
}

function makeHttpServer(config, { handler, maxHeaderBytes, errorReply }) {
  const requestTimeout = Math.round((config.requestTimeout || 60) * 1000);
  const server = http.createServer({
    requestTimeout,
    headersTimeout: Math.min(20_000, requestTimeout),
    // how often node looks for requests past their time
    connectionsCheckingInterval: Math.max(250, Math.min(5000, Math.floor(requestTimeout / 4))),
    maxHeaderSize: maxHeaderBytes,
  }, handler);
  server.on('clientError', (err, socket) => answerClientError(err, socket, errorReply));
  return server;
}

module.exports = { makeHttpServer };
