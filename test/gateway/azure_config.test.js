'use strict';
// The gateway's configuration of its Azure side (gateway/lib/config.js):
// azurePort and azureAccounts together or not at all, Azure's account
// names, keys in base64, no account twice, and no key in any message.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { readConfig } = require('../../gateway/lib/config');

const KEY = Buffer.alloc(64, 7).toString('base64');
const BASE = {
  database: 'postgresql://gateway@/app', receiptSecret: 'a test secret of at least thirty-two characters',
  credentials: [{ accessKeyId: 'AKIDTEST', secretAccessKey: 'secret', role: 'app' }],
};

function read(settings) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-config-'));
  const file = path.join(dir, 'gateway.json');
  fs.writeFileSync(file, JSON.stringify({ ...BASE, ...settings }));
  try {
    return readConfig(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('an Azure account on a port', () => {
  const config = read({ azurePort: 10001, azureAccounts: [{ name: 'myaccount', key: KEY, role: 'app' }] });
  assert.equal(config.azurePort, 10001);
  assert.equal(config.azureAccounts[0].name, 'myaccount');
});

test('no Azure side: neither azurePort nor azureAccounts', () => {
  assert.equal(read({}).azurePort, undefined);
});

test('the Azure side alone: no credentials, no receiptSecret', () => {
  const config = read({ receiptSecret: undefined, credentials: undefined, azurePort: 10001,
    azureAccounts: [{ name: 'myaccount', key: KEY, role: 'app' }] });
  assert.equal(config.credentials, undefined);
  assert.equal(config.azureAccounts.length, 1);
  assert.throws(() => read({ receiptSecret: undefined, credentials: undefined }),
    /give credentials \(the SQS side\), azurePort and azureAccounts \(the Azure side\), or both/);
  assert.throws(() => read({ receiptSecret: undefined }), /receiptSecret/, 'the SQS side still needs its secret');
});

test('what is refused, without showing the key', () => {
  const cases = [
    [{ azureAccounts: [{ name: 'myaccount', key: KEY, role: 'app' }] }, /azurePort must be 0 to 65535/],
    [{ azurePort: 10001 }, /azureAccounts must list at least one account/],
    [{ azurePort: 10001, azureAccounts: [] }, /azureAccounts must list at least one account/],
    [{ azurePort: 70000, azureAccounts: [{ name: 'myaccount', key: KEY, role: 'app' }] }, /azurePort/],
    [{ azurePort: 1, azureAccounts: [{ name: 'My_Account', key: KEY, role: 'app' }] }, /azureAccounts\[0\]\.name/],
    [{ azurePort: 1, azureAccounts: [{ name: 'ab', key: KEY, role: 'app' }] }, /azureAccounts\[0\]\.name/],
    [{ azurePort: 1, azureAccounts: [{ name: 'myaccount', key: 'not base64!', role: 'app' }] }, /azureAccounts\[0\]\.key must be a base64 string/],
    [{ azurePort: 1, azureAccounts: [{ name: 'myaccount', key: 'c2hvcnQ=', role: 'app' }] }, /at least 16 bytes/],
    [{ azurePort: 1, azureAccounts: [{ name: 'myaccount', key: KEY }] }, /azureAccounts\[0\]\.role/],
    [{ azurePort: 1, azureAccounts: [{ name: 'myaccount', key: KEY, role: 'a' }, { name: 'myaccount', key: KEY, role: 'b' }] },
      /azureAccounts\[1\]\.name myaccount is listed twice/],
    [{ azurePort: 1, azureAccounts: [null] }, /azureAccounts\[0\] must be an object/],
  ];
  for (const [settings, message] of cases) {
    assert.throws(() => read(settings), (err) => {
      assert.match(err.message, message);
      assert.ok(!err.message.includes(KEY), 'the key is not shown');
      return true;
    }, JSON.stringify(settings));
  }
});
