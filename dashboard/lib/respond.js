'use strict';
// JSON answers, and the HTTP status of an error.
const { QueueError } = require('pg-lease-queue');
const { BadRequest } = require('./messages');

// The SQLSTATEs a page may cause, as HTTP statuses.
const STATUS_OF_CODE = {
  42501: 403,   // permission denied on the queue
  42704: 404,   // no such queue
  22023: 400,   // a bad argument
  22004: 400,
  22003: 400,   // a number out of range (a page's after id)
};

// Every answer of the dashboard carries these: the page loads nothing from
// elsewhere, runs no inline script, and is framed by no other site.
const SECURITY_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

function send(res, status, contentType, body) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': contentType });
  res.end(body);
}

function sendJson(res, status, value) {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

// A QueueError keeps its SQLSTATE; an error of the connection (no
// SQLSTATE of the extension) means the database cannot be reached: 503.
function sendError(res, err) {
  let status = 500;
  if (err instanceof BadRequest) status = 400;
  else if (err instanceof QueueError) status = STATUS_OF_CODE[err.code] || 500;
  else status = 503;
  const code = err instanceof QueueError ? err.code : null;
  sendJson(res, status, { error: err.message || String(err), code });
}

module.exports = { send, sendJson, sendError, SECURITY_HEADERS };
