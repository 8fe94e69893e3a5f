'use strict';
// test/worker_cli.js, the worker the tests across languages run: one JSON
// line per message handled, a summary after SIGTERM.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { DSN, sql, freshQueue, stats, until } = require('./helpers');

test('worker_cli.js: a line per message, a summary on SIGTERM', async () => {
  const q = await freshQueue('node-worker-cli');
  await sql("SELECT queue.queue_put_batch($1, ARRAY['ok', 'fail', 'sleep:3'])", [q]);
  const child = spawn(process.execPath, [path.join(__dirname, 'worker_cli.js'), DSN, q], {
    env: {
      ...process.env,
      WORKER_VISIBILITY_TIMEOUT: '2',
      WORKER_EXTENSION_THRESHOLD: '1',
      WORKER_HEARTBEAT_INTERVAL: '0.25',
      WORKER_FAILURE_DELAY: '0.5',
      WORKER_BATCH_SIZE: '4',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    assert.ok(await until(async () => (await stats(q)).total === 0, 20), `stderr: ${stderr}`);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, `stderr: ${stderr}`);

  const records = stdout.trim().split('\n').map((line) => JSON.parse(line));
  const summary = records.pop();
  const handled = records.map((r) => [r.body, r.dequeue_count, r.outcome]).sort();
  assert.deepEqual(handled, [['fail', 1, 'failed'], ['fail', 2, 'done'], ['ok', 1, 'done'], ['sleep:3', 1, 'done']]);
  assert.ok(records.every((r) => r.lang === 'node' && typeof r.message_id === 'string'));
  assert.equal(summary.summary, true);
  assert.equal(summary.lang, 'node');
  assert.equal(summary.metrics.processed, 3);
  assert.equal(summary.metrics.failed, 1);
  assert.equal(summary.metrics.lost_leases, 0);
  assert.ok(summary.metrics.extensions > 0, 'the 3 s task outlived its 2 s lease');
});
