'use strict';
// pg-lease-queue: the Node client of the queue PostgreSQL extension
// (docs/clients.md in the extension's repository).
const { Client } = require('./lib/client');
const { Worker } = require('./lib/worker');
const { Message, Receipt } = require('./lib/rows');
const errors = require('./lib/errors');

module.exports = {
  Client,
  Worker,
  Message,
  Receipt,
  QueueError: errors.QueueError,
  MessageNotFound: errors.MessageNotFound,
  ReceiptMismatch: errors.ReceiptMismatch,
  QueueNotFound: errors.QueueNotFound,
  QueueExists: errors.QueueExists,
  PermissionDenied: errors.PermissionDenied,
  InvalidArgument: errors.InvalidArgument,
  MessageTooLarge: errors.MessageTooLarge,
  ArgumentTypeError: errors.ArgumentTypeError,
  ArgumentRangeError: errors.ArgumentRangeError,
};
