'use strict';
// The TypeScript declarations (index.d.ts) type-check a program that uses
// every call (test/types.ts) with tsc --strict, run by this node. Needs the devDependency
// typescript: without it the test fails.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');

test('index.d.ts: tsc --noEmit --strict test/types.ts', async () => {
  assert.ok(fs.existsSync(tsc), `${tsc} is missing: run npm install in clients/node`);
  const args = [tsc, '--noEmit', '--strict', '--target', 'es2020', '--module', 'commonjs',
    path.join(__dirname, 'types.ts')];
  const { code, output } = await new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, output: `${stdout}${stderr}` });
    });
  });
  assert.equal(code, 0, `tsc failed:\n${output}`);
});
