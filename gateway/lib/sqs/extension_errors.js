'use strict';
// The extension's errors (SQLSTATEs, as the Node client's error classes
// carry them) as SQS errors.  Lost connections are ServiceUnavailable, so
// that SDKs retry; anything unknown is InternalFailure, without its text.
const { SqsError } = require('./errors');

function sqsErrorOf(err) {
  if (err instanceof SqsError) return err;
  switch (err && err.code) {
    case '42704': return new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    case '42501': return new SqsError('AccessDenied', 'Access to the resource is denied.');
    case '22023':
    case '22004':
    case '54000':
    // a queue that another names as its dead-letter queue, deleted
    case '2BP01': return new SqsError('InvalidParameterValue', err.message);
    default: break;
  }
  // Node's socket errors (ECONNREFUSED, ENOENT of a socket gone while the
  // server restarts) name their system call
  if (err && (err.code === undefined || err.syscall !== undefined || /^08|^57P0[123]$/.test(err.code))) {
    return new SqsError('ServiceUnavailable', 'The database cannot be reached; try again.');
  }
  return err;
}

module.exports = { sqsErrorOf };
