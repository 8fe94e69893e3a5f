'use strict';
// The driver of bench/azure_throughput.sh: CLIENTS clients each loop over
// a put of 32 messages (about 100-byte bodies), a get of up to 32 and a
// delete of each message got, for SECONDS a run, on one queue; either with
// @azure/storage-queue (sendMessage 32 times, receiveMessages with
// numberOfMessages 32, deleteMessage for each: the Queue service has no
// batch put or delete), against the gateway's Azure port or against
// Azurite, or through the Node client directly (putBatch of 32, get of 32,
// deleteBatch). The sides take turns, a run each, ROUNDS times, after an
// unmeasured warm-up run of each; the queue is cleared before every run.
//
// Each client has its own QueueServiceClient (the SDK keeps its sockets
// alive; a client has one request in flight at a time, so one socket) or
// its own Node client (one connection). A run's figure is the messages
// deleted over the time from its start to the end of its last cycle (each
// client ends the cycle under way when the time is up). Every answer is
// checked: the SDK throws on any status but success, and a get must give
// back only messages of this run's bodies.
//
// Prints one line of JSON: per side, the messages/s of each measured run
// in order, and the CPU time per message (µs) of each run of the driver
// (this process), of the side's server process (the gateway or Azurite)
// and of PostgreSQL (the postmaster, POSTMASTER_PID, and its children),
// and the share of the machine's cores that other processes kept busy
// over each run, in %.
// Usage: NODE_PATH=<dirs holding @azure/storage-queue and pg-lease-queue> POSTMASTER_PID=PID \
//   node azure_throughput.js SECONDS ROUNDS CLIENTS DSN SIDE=URL@PID@KEY... direct
// A side named with =URL runs with the SDK against URL
// (http://HOST:PORT/ACCOUNT, path-style), signed with the account's KEY,
// its process id after the first @ for its CPU time; "direct" through the
// Node client on DSN.
const { QueueServiceClient } = require('@azure/storage-queue');
const { Client } = require('pg-lease-queue');
const { timedRun, body: namedBody, directSide } = require('./throughput_run');

// a body of BODY_BYTES characters that names its client and number
const body = (client, n) => namedBody(client, n, BODY_BYTES);

const [seconds, rounds, clients, dsn, ...sideArgs] = process.argv.slice(2);
const SECONDS = Number(seconds);
const ROUNDS = Number(rounds);
const CLIENTS = Number(clients);
const QUEUE = 'bench-azure';
const BATCH = 32;
const BODY_BYTES = 100;

// A side through the Queue service's REST API at url
// (http://HOST:PORT/ACCOUNT): CLIENTS SDK clients.
function azureSide(name, url, pid, key) {
  const account = new URL(url).pathname.split('/')[1];
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=${account};AccountKey=${key};QueueEndpoint=${url};`;
  const queues = Array.from({ length: CLIENTS }, () =>
    QueueServiceClient.fromConnectionString(connectionString, { retryOptions: { maxTries: 1 } }).getQueueClient(QUEUE));
  const warming = Array.from({ length: CLIENTS }, () =>
    QueueServiceClient.fromConnectionString(connectionString, { retryOptions: { maxTries: 3, retryDelayInMs: 10 } }).getQueueClient(QUEUE));
  return {
    name,
    pid,
    // the queue, made by the side (the gateway's is the direct side's too)
    async open() {
      await queues[0].createIfNotExists();
    },
    // Before each run: a request of each client, retried, on the sockets
    // kept alive since the side's last run, which the server may have
    // closed meanwhile (Azurite resets them), so that no measured request
    // meets a dead one; then the queue cleared.
    async clear() {
      await Promise.all(warming.map((queue) => queue.getProperties()));
      await queues[0].clearMessages();
    },
    // one cycle of client i; resolves with the messages it deleted
    async cycle(i, n) {
      const queue = queues[i];
      try {
        for (let k = 0; k < BATCH; k++) await queue.sendMessage(body(i, n + k));
        const got = await queue.receiveMessages({ numberOfMessages: BATCH });
        for (const m of got.receivedMessageItems) {
          if (!m.messageText.startsWith('client ')) throw new Error(`got ${JSON.stringify(m.messageText)}`);
          await queue.deleteMessage(m.messageId, m.popReceipt);
        }
        return got.receivedMessageItems.length;
      } catch (err) {
        err.message = `${name}, client ${i}: ${err.message}`;
        throw err;
      }
    },
    close() {},
  };
}

// One run of a side: messages/s, and the CPU time per message of the
// driver, the side's process and PostgreSQL.
async function run(side) {
  await side.clear();
  return timedRun(side, { seconds: SECONDS, clients: CLIENTS, batch: BATCH });
}

async function main() {
  const sides = sideArgs.map((arg) => {
    if (arg === 'direct') return directSide({ Client, dsn, clients: CLIENTS, queue: QUEUE, batch: BATCH, bodyOf: body });
    const match = /^([a-z_]+)=(http:[^@]+)@([0-9]+)@(.+)$/.exec(arg);
    if (!match) throw new Error(`a side is NAME=URL@PID@KEY or direct, not ${arg}`);
    return azureSide(match[1], match[2], match[3], match[4]);
  });
  for (const side of sides) await side.open();
  // the warm-up: a run of each side, not measured
  for (const side of sides) await run(side);
  const results = Object.fromEntries(sides.map((s) => [s.name, { rates: [], driver: [], process: [], server: [], others: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of sides) {
      const { rate, cpu } = await run(side);
      const result = results[side.name];
      result.rates.push(rate);
      for (const part of ['driver', 'process', 'server', 'others']) if (cpu[part] !== null) result[part].push(cpu[part]);
    }
  }
  for (const side of sides) await side.clear();
  for (const side of sides) await side.close();
  console.log(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
