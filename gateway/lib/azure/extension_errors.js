'use strict';
// The extension's errors (SQLSTATEs, as the Node client's error classes
// carry them) as Azure Queue Storage errors, in one table.  Lost
// connections and a server that cannot take more work now are ServerBusy,
// which the Azure SDKs retry; a mistake of the gateway's own code (a
// TypeError and its kind) and anything unknown are InternalError, without
// their text.
const { AzureError } = require('./errors');

// SQLSTATE -> the Azure error code
const BY_SQLSTATE = {
  42704: 'QueueNotFound',             // no such queue, or one the role may not see
  42710: 'QueueAlreadyExists',        // made meanwhile by another request
  QU404: 'MessageNotFound',           // deleted, expired or moved to a poison queue
  QU409: 'PopReceiptMismatch',        // handed out again since
  42501: 'AuthorizationPermissionMismatch',   // the role lacks the grant
  54000: 'RequestBodyTooLarge',       // over the queue's max_message_size
  22023: 'InvalidInput',              // a value the extension refuses
  22004: 'InvalidInput',
  40001: 'ServerBusy',                // a concurrent request: worth another try
  '40P01': 'ServerBusy',
  '2BP01': 'InvalidInput',            // a queue another names as its poison queue
};

// A SQLSTATE: five digits or capitals, never starting with E as a Node
// socket's error codes do (EPIPE).
const SQLSTATE = /^(?!E)[0-9A-Z]{5}$/;
const PROGRAM_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError, URIError, EvalError];

function sqlstateError(err) {
  const code = BY_SQLSTATE[err.code];
  if (code === 'RequestBodyTooLarge') {
    return new AzureError(code, { details: { MaxLimit: maximumSizeOf(err) || '65536' } });
  }
  if (code) return new AzureError(code);
  if (err.code.startsWith('22')) return new AzureError('InvalidInput');
  // connection exceptions, too many connections, a server shutting down
  if (/^08|^53|^57P0[123]$/.test(err.code)) return new AzureError('ServerBusy');
  return err;
}

// "The queue's max_message_size is 1024 bytes; ..." -> '1024'
function maximumSizeOf(err) {
  const detail = (err.cause && err.cause.detail) || err.detail || '';
  const match = /max_message_size is ([0-9]+) bytes/.exec(detail);
  return match ? match[1] : null;
}

function azureErrorOf(err) {
  if (err instanceof AzureError) return err;
  if (err && typeof err.code === 'string' && SQLSTATE.test(err.code)) return sqlstateError(err);
  if (!(err instanceof Error) || PROGRAM_ERRORS.some((type) => err instanceof type)) return err;
  // a socket's error, or the driver's "Connection terminated unexpectedly"
  return new AzureError('ServerBusy');
}

module.exports = { azureErrorOf, BY_SQLSTATE };
