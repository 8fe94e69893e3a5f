#!/usr/bin/env node
// A worker for the tests across languages: node worker_cli.js DSN QUEUE
//
// The handler is a stand-in: a body "sleep:S" works S seconds, "fail"
// fails on its first delivery, anything else is done at once. One JSON line
// per message handled, once its handler returned or threw:
//   {"lang":"node","message_id":"..","body":"..","dequeue_count":N,"outcome":"done"|"failed"}
// On SIGTERM (or SIGINT) the worker stops gracefully and prints
//   {"summary":true,"lang":"node","metrics":{...}}   (metrics in snake_case)
// Options from the environment, in seconds: WORKER_VISIBILITY_TIMEOUT,
// WORKER_BATCH_SIZE (a count), WORKER_HEARTBEAT_INTERVAL,
// WORKER_EXTENSION_THRESHOLD, WORKER_FAILURE_DELAY.
'use strict';
const { Client, Worker } = require('..');

const ENV = {
  WORKER_VISIBILITY_TIMEOUT: 'visibilityTimeout',
  WORKER_BATCH_SIZE: 'batchSize',
  WORKER_HEARTBEAT_INTERVAL: 'heartbeatInterval',
  WORKER_EXTENSION_THRESHOLD: 'extensionThreshold',
  WORKER_FAILURE_DELAY: 'failureDelay',
};

const [dsn, queue] = process.argv.slice(2);
if (!dsn || !queue) {
  console.error('usage: node worker_cli.js DSN QUEUE');
  process.exit(2);
}
const options = {};
for (const [name, option] of Object.entries(ENV)) {
  if (process.env[name] !== undefined && process.env[name] !== '') options[option] = Number(process.env[name]);
}

const print = (record) => process.stdout.write(`${JSON.stringify(record)}\n`);
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

async function work(message) {
  if (message.body.startsWith('sleep:')) await sleep(Number(message.body.slice('sleep:'.length)));
  if (message.body === 'fail' && message.dequeueCount === 1) throw new Error('fails on its first delivery');
}

async function handler(message) {
  const record = { lang: 'node', message_id: message.messageId, body: message.body, dequeue_count: message.dequeueCount };
  try {
    await work(message);
  } catch (err) {
    print({ ...record, outcome: 'failed' });
    throw err;
  }
  print({ ...record, outcome: 'done' });
}

const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

async function main() {
  const client = new Client(dsn);
  const worker = new Worker(client, queue, handler, options);
  const stop = () => worker.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await worker.start();
  const metrics = {};
  for (const [key, value] of Object.entries(worker.metrics)) metrics[snake(key)] = value;
  print({ summary: true, lang: 'node', metrics });
  await client.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
