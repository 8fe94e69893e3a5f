'use strict';
// Requests to the gateway's Azure side made by hand, for what the Azure
// SDKs never send (a bad XML body, no x-ms-version, a stale date, a query
// parameter out of range): signed with Shared Key as the Azure Storage
// REST reference describes it, written here from that description and
// checked against what @azure/storage-queue signs (azure.test.js).
const http = require('node:http');
const { createHmac } = require('node:crypto');

const SIGNED_HEADERS = ['content-encoding', 'content-language', 'content-length', 'content-md5', 'content-type',
  'date', 'if-modified-since', 'if-match', 'if-none-match', 'if-unmodified-since', 'range'];

// The string to sign of a request: method, url (a URL), headers (names
// lower-cased).  Only names without '-' or '_' after x-ms- are used by
// these tests, so a plain sort is the service's order.
function stringToSign(account, method, url, headers) {
  const standard = SIGNED_HEADERS.map((name) => (name === 'content-length' && headers[name] === '0' ? '' : headers[name] || ''));
  const msHeaders = Object.keys(headers).filter((n) => n.startsWith('x-ms-')).sort().map((n) => `${n}:${headers[n]}\n`).join('');
  const params = [...url.searchParams.keys()].map((k) => k.toLowerCase()).sort()
    .map((k) => `\n${k}:${url.searchParams.getAll(k).sort().join(',')}`).join('');
  return `${[method, ...standard].join('\n')}\n${msHeaders}/${account}${url.pathname}${params}`;
}

// Sends a request signed with key (base64) for account; resolves with
// { status, headers, body (text) }.  options: { body, headers (more or
// replaced, null to leave one out), date, version, signWith (another key) }.
function signedRequest(account, key, method, urlText, options = {}) {
  const url = new URL(urlText);
  const body = options.body === undefined ? Buffer.alloc(0) : Buffer.from(options.body);
  const headers = {
    'x-ms-date': (options.date || new Date()).toUTCString(),
    'x-ms-version': options.version === undefined ? '2025-11-05' : options.version,
    'content-length': String(body.length),
  };
  if (body.length > 0) headers['content-type'] = 'application/xml';
  for (const [name, value] of Object.entries(options.headers || {})) headers[name.toLowerCase()] = value;
  for (const name of Object.keys(headers)) if (headers[name] === null) delete headers[name];
  const signature = createHmac('sha256', Buffer.from(options.signWith || key, 'base64'))
    .update(stringToSign(account, method, url, headers), 'utf8').digest('base64');
  if (options.authorization !== null) headers.authorization = options.authorization || `SharedKey ${account}:${signature}`;
  return new Promise((resolve, reject) => {
    // a connection of its own: one the gateway closes after a refused body is not reused
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// The <Code> and the x-ms-error-code of an answer, which must agree.
function errorCode(answer) {
  const match = /<Code>([^<]*)<\/Code>/.exec(answer.body);
  const code = match ? match[1] : null;
  if (code !== answer.headers['x-ms-error-code']) throw new Error(`<Code> ${code} but x-ms-error-code ${answer.headers['x-ms-error-code']}`);
  return code;
}

module.exports = { signedRequest, stringToSign, errorCode };
