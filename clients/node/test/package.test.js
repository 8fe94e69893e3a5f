'use strict';
// The package as npm publishes it: its name, the exports map (the main
// entry and package.json, nothing of lib/), pg as a peer dependency, and
// every export by name from CommonJS and from an ES module. Needs no server.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const NAMES = ['Client', 'Worker', 'Message', 'Receipt', 'QueueError', 'MessageNotFound', 'ReceiptMismatch',
  'QueueNotFound', 'QueueExists', 'PermissionDenied', 'InvalidArgument', 'MessageTooLarge',
  'ArgumentTypeError', 'ArgumentRangeError', 'openPool'];

test('package', async (t) => {
  await t.test('pg is a peer dependency, and a devDependency for the tests', () => {
    assert.equal(pkg.name, 'pg-lease-queue');
    assert.equal(pkg.dependencies, undefined, 'no plain dependency: the application brings pg');
    assert.match(pkg.peerDependencies.pg, /^\^8\./);
    assert.equal(pkg.devDependencies.pg, pkg.peerDependencies.pg);
  });

  await t.test('the exports map: the main entry, its types and package.json', () => {
    assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './package.json']);
    assert.equal(pkg.exports['.'].default, `./${pkg.main}`);
    assert.equal(pkg.exports['.'].types, `./${pkg.types}`);
    assert.equal(Object.keys(pkg.exports['.'])[0], 'types', 'types comes first, as TypeScript reads the conditions in order');
    for (const file of [pkg.exports['.'].default, pkg.exports['.'].types, pkg.exports['./package.json']]) {
      assert.ok(fs.existsSync(path.join(root, file)), `${file} exists`);
      assert.ok(pkg.files.includes(file.slice(2)) || file === './package.json', `${file} is published`);
    }
  });

  await t.test('require by the package name: the main entry and package.json, not lib/', () => {
    // inside the package, its own name resolves through the exports map
    const byName = require('pg-lease-queue');
    assert.equal(byName, require('..'));
    assert.deepEqual(Object.keys(byName).sort(), [...NAMES].sort());
    assert.equal(require('pg-lease-queue/package.json').version, pkg.version);
    assert.throws(() => require('pg-lease-queue/lib/client'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
  });

  await t.test('an ES module imports every export by name', async () => {
    const source = `import { ${NAMES.join(', ')} } from 'pg-lease-queue';\n` +
      `import whole from 'pg-lease-queue';\n` +
      `const found = { ${NAMES.join(', ')} };\n` +
      'console.log(JSON.stringify(Object.entries(found).filter(([n, v]) => typeof v === "function" && whole[n] === v).map(([n]) => n)));';
    const { code, stdout, stderr } = await new Promise((resolve) => {
      execFile(process.execPath, ['--input-type=module', '-e', source], { cwd: root }, (err, out, errOut) => {
        resolve({ code: err ? err.code : 0, stdout: out, stderr: errOut });
      });
    });
    assert.equal(code, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), NAMES);
  });
});
