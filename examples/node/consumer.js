#!/usr/bin/env node
// A queue consumer with the pg-lease-queue worker (clients/node, docs/clients.md):
// batches, leases extended while a handler runs, delete when it returns,
// release when it throws (after max_dequeue_count tries: <queue>-poison).
// Usage: npm install && node consumer.js DSN QUEUE   (Ctrl-C stops it gracefully)
'use strict';
const { Client, Worker } = require('pg-lease-queue');

const [dsn, queue] = process.argv.slice(2);
const client = new Client(dsn);
const worker = new Worker(client, queue, async (message) => {
  if (message.body === 'fail') throw new Error('this one fails');
  console.log(message.messageId, message.body);
}, { failureDelay: 5 });
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => worker.stop());
worker.start().then(() => client.close());
