'use strict';
// The gateway's configuration: a JSON file, read and checked once at start.
//
//   {
//     "database": "postgresql://gateway@/app",   the login the gateway connects as
//     "host": "127.0.0.1", "port": 9324,          where it listens
//     "region": "us-east-1",                      in queue URLs and ARNs
//     "accountId": "000000000000",
//     "receiptSecret": "...",                     signs receipt handles: the same
//                                                 for every gateway behind one balancer
//     "maxConnections": 20,                       PostgreSQL connections at most
//     "requestTimeout": 60,                       seconds for a request to arrive whole
//     "credentials": [
//       { "accessKeyId": "AKID...", "secretAccessKey": "...", "role": "app" }
//     ],
//     "azurePort": 10001,                         Azure Queue Storage, when given
//     "azureAccounts": [                          (docs/azure.md)
//       { "name": "myaccount", "key": "<base64>", "role": "app" }
//     ]
//   }
//
// The SQS side (port, receiptSecret, credentials) is served when
// credentials are given, the Azure side when azurePort and azureAccounts
// are; at least one of them.
//
// Each access key, and each Azure account, maps to a PostgreSQL role: a
// request signed with it runs as that role (the login must be a member of
// it), so the extension's per-queue grants decide what it may do.
const fs = require('node:fs');

const DEFAULTS = { host: '127.0.0.1', port: 9324, region: 'us-east-1', accountId: '000000000000', maxConnections: 20, requestTimeout: 60 };

function fail(file, message) {
  throw new Error(`gateway: ${file}: ${message}`);
}

function checkString(file, value, what, pattern) {
  if (typeof value !== 'string' || value === '' || (pattern && !pattern.test(value))) {
    fail(file, `${what} must be ${pattern ? `a string matching ${pattern}` : 'a non-empty string'}`);
  }
}

function checkCredentials(file, credentials) {
  if (!Array.isArray(credentials) || credentials.length === 0) fail(file, 'credentials must list at least one access key');
  const seen = new Set();
  for (const [i, entry] of credentials.entries()) {
    const what = `credentials[${i}]`;
    if (entry === null || typeof entry !== 'object') fail(file, `${what} must be an object`);
    checkString(file, entry.accessKeyId, `${what}.accessKeyId`, /^[A-Za-z0-9]{4,128}$/);
    checkString(file, entry.secretAccessKey, `${what}.secretAccessKey`);
    checkString(file, entry.role, `${what}.role`);
    if (seen.has(entry.accessKeyId)) fail(file, `${what}.accessKeyId ${entry.accessKeyId} is listed twice`);
    seen.add(entry.accessKeyId);
  }
}

// Azure's storage account names: 3 to 24 lower-case letters and digits.
const AZURE_ACCOUNT_NAME = /^[a-z0-9]{3,24}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function checkAzureAccounts(file, config) {
  const { azurePort, azureAccounts } = config;
  if (azurePort === undefined && azureAccounts === undefined) return;
  if (!Number.isInteger(azurePort) || azurePort < 0 || azurePort > 65535) fail(file, 'azurePort must be 0 to 65535');
  if (!Array.isArray(azureAccounts) || azureAccounts.length === 0) fail(file, 'azureAccounts must list at least one account');
  const seen = new Set();
  for (const [i, entry] of azureAccounts.entries()) {
    const what = `azureAccounts[${i}]`;
    if (entry === null || typeof entry !== 'object') fail(file, `${what} must be an object`);
    checkString(file, entry.name, `${what}.name`, AZURE_ACCOUNT_NAME);
    // the key is not shown: a message may end up in a log
    if (typeof entry.key !== 'string' || !BASE64.test(entry.key) || Buffer.from(entry.key, 'base64').length < 16) {
      fail(file, `${what}.key must be a base64 string of at least 16 bytes`);
    }
    checkString(file, entry.role, `${what}.role`);
    if (seen.has(entry.name)) fail(file, `${what}.name ${entry.name} is listed twice`);
    seen.add(entry.name);
  }
}

// The configuration in FILE, with the defaults; throws on anything wrong.
function readConfig(file) {
  let given;
  try {
    given = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    fail(file, `cannot be read as JSON: ${err.message}`);
  }
  const config = { ...DEFAULTS, ...given };
  checkString(file, config.database, 'database');
  checkString(file, config.host, 'host');
  if (!Number.isInteger(config.port) || config.port < 0 || config.port > 65535) fail(file, 'port must be 0 to 65535');
  checkString(file, config.region, 'region', /^[a-z0-9-]{1,32}$/);
  checkString(file, config.accountId, 'accountId', /^[0-9]{12}$/);
  if (!Number.isInteger(config.maxConnections) || config.maxConnections < 1) fail(file, 'maxConnections must be a positive integer');
  if (!(typeof config.requestTimeout === 'number' && config.requestTimeout > 0 && config.requestTimeout <= 3600)) {
    fail(file, 'requestTimeout must be a number of seconds, more than 0 and at most 3600');
  }
  const azure = config.azurePort !== undefined || config.azureAccounts !== undefined;
  if (config.credentials === undefined && !azure) {
    fail(file, 'give credentials (the SQS side), azurePort and azureAccounts (the Azure side), or both');
  }
  if (config.credentials !== undefined) {
    checkString(file, config.receiptSecret, 'receiptSecret', /^.{32,}$/);
    checkCredentials(file, config.credentials);
  }
  checkAzureAccounts(file, config);
  return config;
}

module.exports = { readConfig };
