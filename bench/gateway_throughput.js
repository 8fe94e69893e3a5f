'use strict';
// The driver of bench/gateway_throughput.sh: CLIENTS clients each loop over
// a send of a batch of 10 messages (about 100-byte bodies), a receive of
// up to 10 and a delete of what it received, for SECONDS a run, on one
// queue; either through an SQS gateway with the AWS SDK for JavaScript
// (SendMessageBatch, ReceiveMessage with MaxNumberOfMessages 10,
// DeleteMessageBatch) or through the Node client directly (putBatch, get
// of 10, deleteBatch). The sides take turns, a run each, ROUNDS times,
// after an unmeasured warm-up run of each; the queue is cleared before
// every run.
//
// Each client has its own SDK client (one keep-alive socket) or its own
// Node client (one connection). A run's figure is the messages deleted
// over the time from its start to the end of its last cycle (each client
// ends the cycle under way when the time is up). Every answer is checked:
// a batch sent must succeed whole, and the SDK checks the MD5 digests of
// what it sends and receives.
//
// Prints one line of JSON: per side, the messages/s of each measured run
// in order, and the CPU time per message (µs) of each run of the driver
// (this process), of the side's gateway process and of PostgreSQL (the
// postmaster, POSTMASTER_PID, and its children: backends, WAL writer and
// the others; a process that ends within a run, such as a pooled
// connection closed while idle, leaves that run's share of it out), and
// the share of the machine's cores that other processes kept busy over
// each run (the machine's busy time less those), in %.
// Usage: NODE_PATH=<dirs holding @aws-sdk/client-sqs and pg-lease-queue> POSTMASTER_PID=PID \
//   node gateway_throughput.js SECONDS ROUNDS CLIENTS DSN KEY SECRET SIDE=URL[@PID]... direct
// A side named with =URL runs through the gateway at URL (its process id
// after @, for its CPU time); "direct" through the Node client on DSN.
const http = require('node:http');
const sqs = require('@aws-sdk/client-sqs');
const { Client } = require('pg-lease-queue');
const { timedRun, body: namedBody, directSide } = require('./throughput_run');

// a body of BODY_BYTES characters that names its client and number
const body = (client, n) => namedBody(client, n, BODY_BYTES);

const [seconds, rounds, clients, dsn, accessKeyId, secretAccessKey, ...sideArgs] = process.argv.slice(2);
const SECONDS = Number(seconds);
const ROUNDS = Number(rounds);
const CLIENTS = Number(clients);
const QUEUE = 'bench-throughput';
const BATCH = 10;
const BODY_BYTES = 100;

// A side through a gateway: CLIENTS SDK clients, each on its own socket.
function gatewaySide(name, url, pid) {
  const agents = [];
  const sdks = [];
  for (let i = 0; i < CLIENTS; i++) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    sdks.push(new sqs.SQSClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey },
      requestHandler: { httpAgent: agent }, maxAttempts: 1 }));
  }
  let queueUrl;
  return {
    name,
    pid,
    // the queue, made by the first side that opens (a CreateQueue of a
    // queue that exists fails in the gateway of 89d2b95)
    async open() {
      try {
        queueUrl = (await sdks[0].send(new sqs.GetQueueUrlCommand({ QueueName: QUEUE }))).QueueUrl;
      } catch (err) {
        if (err.name !== 'QueueDoesNotExist') throw err;
        queueUrl = (await sdks[0].send(new sqs.CreateQueueCommand({ QueueName: QUEUE }))).QueueUrl;
      }
    },
    // one cycle of client i; resolves with the messages it deleted
    async cycle(i, n) {
      const sdk = sdks[i];
      const entries = Array.from({ length: BATCH }, (_, k) => ({ Id: `m${k}`, MessageBody: body(i, n + k) }));
      const sent = await sdk.send(new sqs.SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      if ((sent.Failed || []).length > 0 || sent.Successful.length !== BATCH) {
        throw new Error(`${name}: SendMessageBatch: ${JSON.stringify(sent.Failed)}`);
      }
      const got = await sdk.send(new sqs.ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: BATCH }));
      const messages = got.Messages || [];
      if (messages.length === 0) return 0;
      const deleted = await sdk.send(new sqs.DeleteMessageBatchCommand({ QueueUrl: queueUrl,
        Entries: messages.map((m, k) => ({ Id: `d${k}`, ReceiptHandle: m.ReceiptHandle })) }));
      if ((deleted.Failed || []).length > 0) throw new Error(`${name}: DeleteMessageBatch: ${JSON.stringify(deleted.Failed)}`);
      return deleted.Successful.length;
    },
    close() {
      for (const sdk of sdks) sdk.destroy();
      for (const agent of agents) agent.destroy();
    },
  };
}

// One run of a side: messages/s, and the CPU time per message of the
// driver, the side's gateway and PostgreSQL.
async function run(side, admin) {
  await admin.clear(QUEUE);
  return timedRun(side, { seconds: SECONDS, clients: CLIENTS, batch: BATCH });
}

async function main() {
  const sides = sideArgs.map((arg) => {
    if (arg === 'direct') return directSide({ Client, dsn, clients: CLIENTS, queue: QUEUE, batch: BATCH, bodyOf: body });
    const match = /^([a-z_]+)=(http:[^@]+)(?:@([0-9]+))?$/.exec(arg);
    if (!match) throw new Error(`a side is NAME=URL[@PID] or direct, not ${arg}`);
    return gatewaySide(match[1], match[2], match[3]);
  });
  const admin = new Client(dsn);
  for (const side of sides) await side.open();
  // the warm-up: a run of each side, not measured
  for (const side of sides) await run(side, admin);
  const results = Object.fromEntries(sides.map((s) => [s.name, { rates: [], driver: [], process: [], server: [], others: [] }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of sides) {
      const { rate, cpu } = await run(side, admin);
      const result = results[side.name];
      result.rates.push(rate);
      for (const part of ['driver', 'process', 'server', 'others']) if (cpu[part] !== null) result[part].push(cpu[part]);
    }
  }
  await admin.clear(QUEUE);
  for (const side of sides) await side.close();
  await admin.close();
  console.log(JSON.stringify(results));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
