'use strict';
// The errors of the extension as classes of their own, one per SQLSTATE
// (docs/clients.md, "Errors"). A lost connection is not one of them: the
// driver's own error goes on as it is. What the client checks itself,
// before calling the server, throws an ArgumentTypeError (a TypeError) or
// an ArgumentRangeError (a RangeError).

// Marks the client's own argument errors, which `instanceof InvalidArgument`
// and `instanceof QueueError` still recognise.
const CLIENT_SIDE = Symbol('pg-lease-queue.clientSide');

class QueueError extends Error {
  constructor(message, code, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = this.constructor.name;
    this.code = code;
  }

  // A class cannot extend both QueueError and TypeError: the client's own
  // argument errors extend TypeError or RangeError, and count as instances
  // of QueueError and InvalidArgument here (not of the other subclasses).
  static [Symbol.hasInstance](value) {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    return (this === QueueError || this === InvalidArgument) &&
      value !== null && typeof value === 'object' && value[CLIENT_SIDE] === true;
  }
}

class MessageNotFound extends QueueError {}
class ReceiptMismatch extends QueueError {}
class QueueNotFound extends QueueError {}
class QueueExists extends QueueError {}
class PermissionDenied extends QueueError {}
class InvalidArgument extends QueueError {}
class MessageTooLarge extends QueueError {}

// The client's own argument errors: the SQLSTATE the server would give
// (22023) in `code`, as an InvalidArgument has it.
class ArgumentTypeError extends TypeError {
  constructor(message) {
    super(message);
    this.name = 'ArgumentTypeError';
    this.code = '22023';
  }
}
ArgumentTypeError.prototype[CLIENT_SIDE] = true;

class ArgumentRangeError extends RangeError {
  constructor(message) {
    super(message);
    this.name = 'ArgumentRangeError';
    this.code = '22023';
  }
}
ArgumentRangeError.prototype[CLIENT_SIDE] = true;

const BY_CODE = {
  QU404: MessageNotFound,
  QU409: ReceiptMismatch,
  42704: QueueNotFound,
  42710: QueueExists,
  42501: PermissionDenied,
  22023: InvalidArgument,
  22004: InvalidArgument,
  54000: MessageTooLarge,
};

// An error the server sent has a severity and a SQLSTATE; a socket error
// (ECONNRESET, "Connection terminated unexpectedly") has neither.
function isServerError(err) {
  return err instanceof Error && typeof err.severity === 'string' &&
    typeof err.code === 'string' && /^[0-9A-Z]{5}$/.test(err.code);
}

// Class 08 (connection exception) and 57P01-57P03 (the server shuts down,
// crashed, or cannot connect now) mean a lost connection.
function isConnectionError(err) {
  if (!isServerError(err)) return true;
  return err.code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(err.code);
}

// The error to throw for an error of the driver.
function translate(err) {
  if (isConnectionError(err)) return err;
  const Type = BY_CODE[err.code] || QueueError;
  return new Type(err.message, err.code, err);
}

module.exports = {
  QueueError,
  MessageNotFound,
  ReceiptMismatch,
  QueueNotFound,
  QueueExists,
  PermissionDenied,
  InvalidArgument,
  MessageTooLarge,
  ArgumentTypeError,
  ArgumentRangeError,
  translate,
  isConnectionError,
};
