'use strict';
// The driver of bench/gateway_long_poll.sh: WAITERS receives long-poll
// QUEUES queues of the gateway with the AWS SDK for JavaScript, each
// receiving again as soon as it has its answer (as the SDK's pollers do),
// while one sender sends SENDS messages, one at a time, round the queues.
// After each send it waits for the message to reach a waiter (or for
// GIVE_UP_MS), then for SPACING_MS, so that each send meets waiters at rest.
//
// Times are taken when a response's headers reach the SDK, below its
// parsing (a middleware innermost in the deserialize step), the same way
// for the send and for the receive it wakes. The send's commit is taken
// as the arrival of its response: the gateway commits, then writes the
// response, so the figures leave out that write and its trip over
// loopback, and are low by that much.
//
// Prints one line of JSON: the latency figures, the waiters answered
// per send, and the checks (each message received once).
// Usage: NODE_PATH=<dir holding @aws-sdk/client-sqs> node gateway_long_poll.js URL KEY SECRET
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { setTimeout: sleep } = require('node:timers/promises');
const sqs = require('@aws-sdk/client-sqs');

const [url, accessKeyId, secretAccessKey] = process.argv.slice(2);
const setting = (name, value) => Number(process.env[name] || value);
const QUEUES = setting('QUEUES', 10);
const WAITERS = setting('WAITERS', 1000);
const SENDS = setting('SENDS', 300);
const SPACING_MS = setting('SPACING_MS', 30);
const GIVE_UP_MS = setting('GIVE_UP_MS', 2000);
const WAIT_SECONDS = 20;
// received messages must not come back during the run
const LEASE_SECONDS = 3600;
// an empty answer this close to the end of its wait is its wait running out
const RAN_OUT_MARGIN_MS = 250;

const agent = new http.Agent({ keepAlive: true, maxSockets: WAITERS + 50 });
const client = new sqs.SQSClient({ endpoint: url, region: 'us-east-1', credentials: { accessKeyId, secretAccessKey },
  requestHandler: { httpAgent: agent }, maxAttempts: 1 });

// The command, and the time its response's headers arrive (stamp.arrived).
function timed(command) {
  const stamp = { arrived: NaN };
  command.middlewareStack.add((next) => async (args) => {
    const result = await next(args);
    stamp.arrived = performance.now();
    return result;
  }, { step: 'deserialize', priority: 'low', name: 'responseArrival' });
  return { command, stamp };
}

const answers = [];          // every receive's answer: { arrived, issued, waited, bodies }
const deliveries = new Map(); // body -> { arrived } of the receive that got it
const waitingFor = new Map(); // body -> resolve, while the sender waits for it
let stopping = false;
const stopAll = new AbortController();

async function waiter(i, queueUrl) {
  // the first waits spread over a whole wait, so that they run out and
  // begin again as those of pollers that have polled a while do, not at once
  let waitSeconds = 1 + (i % WAIT_SECONDS);
  while (!stopping) {
    const { command, stamp } = timed(new sqs.ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: waitSeconds,
      MaxNumberOfMessages: 1, VisibilityTimeout: LEASE_SECONDS }));
    const issued = performance.now();
    let result;
    try {
      result = await client.send(command, { abortSignal: stopAll.signal });
    } catch (err) {
      if (stopping) return;
      throw err;
    }
    const bodies = (result.Messages || []).map((m) => m.Body);
    answers.push({ arrived: stamp.arrived, issued, waited: waitSeconds, bodies });
    for (const body of bodies) {
      if (deliveries.has(body)) deliveries.get(body).again = true;
      else deliveries.set(body, { arrived: stamp.arrived });
      if (waitingFor.has(body)) waitingFor.get(body)();
    }
    waitSeconds = WAIT_SECONDS;
  }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const queueUrls = [];
  for (let q = 0; q < QUEUES; q++) {
    queueUrls.push((await client.send(new sqs.CreateQueueCommand({ QueueName: `bench-long-poll-${q}` }))).QueueUrl);
  }
  const waiters = Array.from({ length: WAITERS }, (_, i) => waiter(i, queueUrls[i % QUEUES]));
  // every waiter's first receive in its line (their immediate gets done)
  await sleep(5000);

  const sends = [];
  for (let s = 0; s < SENDS; s++) {
    const body = `message ${s}`;
    const reached = new Promise((resolve) => waitingFor.set(body, resolve));
    const { command, stamp } = timed(new sqs.SendMessageCommand({ QueueUrl: queueUrls[s % QUEUES], MessageBody: body }));
    const issued = performance.now();
    await client.send(command);
    await Promise.race([reached, sleep(GIVE_UP_MS)]);
    waitingFor.delete(body);
    sends.push({ body, issued, committed: stamp.arrived });
    await sleep(SPACING_MS);
  }
  // the last answers of the window of the last send
  await sleep(SPACING_MS);
  stopping = true;
  stopAll.abort();
  await Promise.all(waiters);

  const latencies = [];
  let missed = 0;
  let twice = 0;
  for (const send of sends) {
    const delivery = deliveries.get(send.body);
    if (delivery === undefined) missed += 1;
    else latencies.push(delivery.arrived - send.committed);
    if (delivery && delivery.again) twice += 1;
  }
  // the answers of each send's window, from its issue to the next one's
  const woken = [];
  let emptyEarly = 0;
  let ranOut = 0;
  const inWindow = (a, i) => a.arrived >= sends[i].issued && (i + 1 === sends.length || a.arrived < sends[i + 1].issued);
  for (let i = 0; i < sends.length; i++) {
    const window = answers.filter((a) => inWindow(a, i));
    woken.push(window.filter((a) => a.bodies.length > 0).length);
    for (const a of window.filter((x) => x.bodies.length === 0)) {
      if (a.arrived - a.issued >= a.waited * 1000 - RAN_OUT_MARGIN_MS) ranOut += 1;
      else emptyEarly += 1;
    }
  }
  latencies.sort((a, b) => a - b);
  const round = (x) => Math.round(x * 100) / 100;
  const histogram = {};
  for (const n of woken) histogram[n] = (histogram[n] || 0) + 1;
  console.log(JSON.stringify({
    sends: sends.length,
    received: latencies.length,
    missed,
    twice,
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies[latencies.length - 1]),
    wokenPerSend: histogram,
    emptyBeforeWaitRanOut: emptyEarly,
    emptyAtEndOfWait: ranOut,
    answers: answers.length,
  }));
  client.destroy();
  agent.destroy();
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
