// While a node-postgres client waits in queue_get (the extended protocol,
// with parameters), its backend holds no xmin, so vacuum is not held back;
// the message put during the wait still reaches it.  Prints TAP lines.
// Usage: NODE_PATH=examples/node/node_modules node wait_xmin.js DSN QUEUE
'use strict';
const { Client } = require('pg');

async function main() {
  const [dsn, queue] = process.argv.slice(2);
  const getter = new Client({ connectionString: dsn });
  const watcher = new Client({ connectionString: dsn });
  await getter.connect();
  await watcher.connect();
  const pid = (await getter.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  const waiting = getter.query(
    "SELECT message_id, body FROM queue.queue_get($1, 1, NULL, make_interval(secs => $2))", [queue, 5]);
  // five looks, 50 ms apart: one may fall on the getter's look at the queue
  await new Promise((resolve) => setTimeout(resolve, 300));
  let waitingLooks = 0;
  let freeLooks = 0;
  for (let i = 0; i < 5; i++) {
    const seen = (await watcher.query(
      'SELECT backend_xmin IS NULL AS free, wait_event_type FROM pg_stat_activity WHERE pid = $1',
      [pid])).rows[0];
    if (seen.wait_event_type === 'Extension') waitingLooks++;
    if (seen.free === true) freeLooks++;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await watcher.query('SELECT queue.queue_put($1, $2)', [queue, 'while waiting']);
  const got = (await waiting).rows;

  const checks = [
    [`node: the waiting get sleeps in the extension (${waitingLooks} of 5 looks)`, waitingLooks >= 4],
    [`node: no xmin while it waits (${freeLooks} of 5 looks)`, freeLooks >= 4],
    ['node: the message put during the wait reaches it',
      got.length === 1 && got[0].body === 'while waiting'],
  ];
  checks.forEach(([label, passed], i) => console.log(`${passed ? 'ok' : 'not ok'} ${i + 1} - ${label}`));
  await getter.end();
  await watcher.end();
  process.exit(checks.every(([, passed]) => passed) ? 0 : 1);
}

main().catch((err) => { console.log(`not ok 1 - node wait check: ${err.message}`); process.exit(1); });
