'use strict';
// pg-lease-queue: the Node client of the queue PostgreSQL extension
// (docs/clients.md in the extension's repository). Every export is named
// in the object below (shorthand), so that an ES module's
// `import { Client } from 'pg-lease-queue'` finds each of them.
const { Client } = require('./lib/client');
const { Worker } = require('./lib/worker');
const { Message, Receipt } = require('./lib/rows');
const { openPool } = require('./lib/hosts');
const {
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
} = require('./lib/errors');

module.exports = {
  Client,
  Worker,
  Message,
  Receipt,
  openPool,
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
};
