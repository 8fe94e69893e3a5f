'use strict';
// The extension's errors (SQLSTATEs, as the Node client's error classes
// carry them) as SQS errors.  Lost connections and a server that cannot
// take more work now are ServiceUnavailable, so that SDKs retry; a mistake
// of the gateway's own code (a TypeError and its kind) and anything
// unknown are InternalFailure, without their text.
const { SqsError } = require('./errors');

// A SQLSTATE: five digits or capitals.  No class of them starts with E,
// as every error code of a Node socket does (EPIPE, EPERM).
const SQLSTATE = /^(?!E)[0-9A-Z]{5}$/;
// Errors of JavaScript itself: a bug of the gateway, not a lost database.
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, URIError, EvalError];

// "The queue's max_message_size is 1024 bytes; ..." -> 1024
function maximumSizeOf(err) {
  const detail = (err.cause && err.cause.detail) || err.detail || '';
  const match = /max_message_size is ([0-9]+) bytes/.exec(detail);
  return match ? match[1] : null;
}

// SQS's words for a message over the queue's MaximumMessageSize.
function tooLarge(err) {
  const size = maximumSizeOf(err);
  return new SqsError('InvalidParameterValue', size
    ? `One or more parameters are invalid. Reason: Message must be shorter than ${size} bytes.`
    : `One or more parameters are invalid. Reason: ${err.message}`);
}

function sqlstateError(err) {
  const code = err.code;
  switch (code) {
    case '42704': return new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    case '42501': return new SqsError('AccessDenied', 'Access to the resource is denied.');
    // a queue made meanwhile by another request, or one the role cannot see
    case '42710': return new SqsError('QueueNameExists', 'A queue already exists with the same name.');
    case '54000': return tooLarge(err);
    // deadlocks and serialization failures, too many connections, a
    // server shutting down: worth another try
    case '40001':
    case '40P01':
      return new SqsError('ServiceUnavailable', 'The request met a concurrent one; try again.');
    // a queue that another names as its dead-letter queue, deleted
    case '2BP01': return new SqsError('InvalidParameterValue', err.message);
    default: break;
  }
  // data exceptions: a value the extension refuses (22023), a NUL in a
  // text (22021, 22P05), a number out of range (22003)...
  if (code.startsWith('22')) return new SqsError('InvalidParameterValue', err.message);
  if (/^08|^53|^57P0[123]$/.test(code)) return new SqsError('ServiceUnavailable', 'The database cannot be reached; try again.');
  return err;
}

function sqsErrorOf(err) {
  if (err instanceof SqsError) return err;
  if (err && typeof err.code === 'string' && SQLSTATE.test(err.code)) return sqlstateError(err);
  if (!(err instanceof Error) || PROGRAM_ERRORS.some((type) => err instanceof type)) return err;
  // a socket's error (ECONNREFUSED, ECONNRESET) or the driver's
  // "Connection terminated unexpectedly", which has no code
  return new SqsError('ServiceUnavailable', 'The database cannot be reached; try again.');
}

module.exports = { sqsErrorOf };
