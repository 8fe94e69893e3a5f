#!/usr/bin/env node
// A queue consumer in Node (node-postgres), in the pattern of Azure
// Functions' queue trigger and the AWS .NET message processing framework:
//
//  - get a batch of messages with a visibility timeout (the lease);
//  - while a handler works, a heartbeat extends the lease of every message
//    still in flight before it runs out (queue_update_batch);
//  - on success, delete the message with its newest receipt;
//  - on failure, release it with a delay (visible again after a backoff);
//    after max_dequeue_count attempts the queue moves it to <queue>-poison.
//
// Usage: node consumer.js DSN QUEUE [--exit-when-empty]
//
// Every call names the schema the extension is installed in (looked up
// once), so that no function another role created in a schema earlier in
// search_path can stand in for ours.
//
// The handler is a stand-in: a body "sleep:S" works S seconds, "fail"
// fails on its first attempt.  Prints one JSON line per message handled and
// a summary line.
'use strict';
const { Client } = require('pg');

const BATCH = 10;
const LEASE = 4.0;          // seconds
const BEAT = LEASE / 4;     // the heartbeat renews this often: three beats can
                            // be missed (a stalled disk, a busy machine)
                            // before a lease runs out
const RETRY_DELAY = 1.0;    // seconds before a failed message is visible again
const LOST = ['QU404', 'QU409'];  // not found / stale receipt: the lease was lost

const sleep = (s) => new Promise((resolve) => setTimeout(resolve, s * 1000));

async function handle(body, dequeueCount) {
  if (body.startsWith('sleep:')) await sleep(Number(body.split(':')[1]));
  if (body === 'fail' && dequeueCount === 1) throw new Error('failed on the first attempt');
}

// The extension's schema, quoted as an identifier, to qualify calls.
async function apiSchema(db) {
  const { rows } = await db.query(
    'SELECT quote_ident(n.nspname) AS api FROM pg_catalog.pg_extension e ' +
    'JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace ' +
    "WHERE e.extname = 'queue'");
  if (rows.length === 0) throw new Error('the queue extension is not installed in this database');
  return rows[0].api;
}

async function main() {
  const [dsn, queue] = process.argv.slice(2);
  const exitWhenEmpty = process.argv.includes('--exit-when-empty');
  const db = new Client({ connectionString: dsn });
  const beat = new Client({ connectionString: dsn });   // the heartbeat's own connection
  await db.connect();
  await beat.connect();
  const api = await apiSchema(db);

  const receipts = new Map();   // in flight: message id -> pop receipt to renew
  const latest = new Map();     // message id -> newest pop receipt
  let renewals = 0;
  let longestGap = 0;           // seconds between two heartbeat rounds, at most
  let lastBeat = process.hrtime.bigint();
  let beating = Promise.resolve();
  const renew = async () => {
    const ids = [...receipts.keys()];
    if (ids.length === 0) return;
    const { rows } = await beat.query(
      `SELECT message_id, pop_receipt, status FROM ${api}.queue_update_batch($1, $2::bigint[], $3::uuid[], make_interval(secs => $4))`,
      [queue, ids, ids.map((id) => receipts.get(id)), LEASE]);
    for (const row of rows) {
      if (row.status !== 'updated') continue;
      latest.set(row.message_id, row.pop_receipt);
      if (receipts.has(row.message_id)) receipts.set(row.message_id, row.pop_receipt);
      renewals += 1;
    }
  };
  const heartbeat = setInterval(() => {
    const now = process.hrtime.bigint();
    longestGap = Math.max(longestGap, Number(now - lastBeat) / 1e9);
    lastBeat = now;
    // a failed round is reported and the next one tried
    beating = beating.then(renew).catch((e) => console.error(`heartbeat: ${e.code} ${e.message}`));
  }, BEAT * 1000);

  let done = 0;
  let failed = 0;
  for (;;) {
    const { rows: batch } = await db.query(
      `SELECT message_id, pop_receipt, dequeue_count, body FROM ${api}.queue_get($1, $2, make_interval(secs => $3), '2 seconds')`,
      [queue, BATCH, LEASE]);
    if (batch.length === 0) {
      const { rows } = await db.query(`SELECT visible + in_flight + delayed AS left FROM ${api}.queue_stats($1)`, [queue]);
      if (exitWhenEmpty && Number(rows[0].left) === 0) break;
      continue;
    }
    for (const m of batch) {
      receipts.set(m.message_id, m.pop_receipt);
      latest.set(m.message_id, m.pop_receipt);
    }

    for (const m of batch) {
      let outcome = 'done';
      try {
        await handle(m.body, m.dequeue_count);
      } catch (e) {
        outcome = 'failed';
      }
      receipts.delete(m.message_id);       // no more renewals of it ...
      await beating;                       // ... once the one under way is done
      const receipt = latest.get(m.message_id);
      latest.delete(m.message_id);
      try {
        if (outcome === 'done') {
          await db.query(`SELECT ${api}.queue_delete($1, $2, $3)`, [queue, m.message_id, receipt]);
          done += 1;
        } else {
          await db.query(`SELECT ${api}.queue_update($1, $2, $3, make_interval(secs => $4))`,
            [queue, m.message_id, receipt, RETRY_DELAY]);
          failed += 1;
        }
      } catch (e) {
        // Another consumer has the message now (at-least-once): its work
        // here is not acknowledged, and the loop goes on.
        if (!LOST.includes(e.code)) throw e;
        outcome = 'lease_lost';
      }
      console.log(JSON.stringify({ message_id: m.message_id, body: m.body, dequeue_count: m.dequeue_count, outcome }));
    }
  }

  clearInterval(heartbeat);
  await beating;
  console.log(JSON.stringify({
    summary: true, done, failed, renewals, longest_heartbeat_gap: Math.round(longestGap * 1000) / 1000,
  }));
  await db.end();
  await beat.end();
}

main().catch((e) => { console.error(e); process.exit(1); });
