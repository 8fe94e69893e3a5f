'use strict';
/*-------------------------------------------------------------------------
 *
 * shared_key.js
 *		Azure Storage's Shared Key authorization, checked as the Queue
 *		service checks it.
 *
 * A request carries "Authorization: SharedKey <account>:<signature>", the
 * signature being the base64 HMAC-SHA256, under the account's key, of
 *
 *   VERB \n Content-Encoding \n Content-Language \n Content-Length \n
 *   Content-MD5 \n Content-Type \n Date \n If-Modified-Since \n If-Match \n
 *   If-None-Match \n If-Unmodified-Since \n Range \n
 *   <canonicalized x-ms- headers><canonicalized resource>
 *
 * with an empty line for a header not sent (and for a Content-Length of
 * 0).  The x-ms- headers are "name:value\n" each, names lower-cased, in
 * the service's order (below).  The resource is "/<account><path>" (on a
 * path-style URL such as ours the path starts with the account again),
 * then "\n<name>:<value>" for each query parameter, names lower-cased and
 * in order, values decoded, a repeated name's values sorted and joined
 * with commas.  The Azure SDKs leave out a parameter with an empty value,
 * which the service's rules do not say: both forms are accepted.
 *
 * The request's x-ms-date (or else Date) must be within 15 minutes of the
 * gateway's clock.  Nothing here is logged, and no error names a key or
 * the signature the gateway computed.
 *
 *-------------------------------------------------------------------------
 */
const { createHmac, timingSafeEqual } = require('node:crypto');
const { AzureError } = require('./errors');

const CLOCK_WINDOW_MS = 15 * 60 * 1000;
const STANDARD_HEADERS = ['content-encoding', 'content-language', 'content-length', 'content-md5', 'content-type',
  'date', 'if-modified-since', 'if-match', 'if-none-match', 'if-unmodified-since', 'range'];

function refuse(detail) {
  return new AzureError('AuthenticationFailed', { details: { AuthenticationErrorDetail: detail } });
}

// The weight of a character in the service's order of header names: a
// hyphen or an apostrophe counts for nothing, other punctuation comes
// before digits, digits before letters, and letters ignore their case.
function weight(c) {
  if (c === '-' || c === "'") return 0;
  if (/[a-z]/i.test(c)) return 300 + c.toLowerCase().charCodeAt(0);
  if (/[0-9]/.test(c)) return 200 + c.charCodeAt(0);
  const code = c.codePointAt(0);
  return code < 128 ? 100 + code : 1000 + code;
}

// A header name's weights, the hyphens and apostrophes left out.
const weights = (name) => [...name].map(weight).filter((w) => w !== 0);

// The service's order of two header names, each with its weights (what the
// Azure SDKs sort the x-ms- headers by); names that weigh the same fall
// back to code points.
function compareWeighed([a, wa], [b, wb]) {
  for (let i = 0; i < Math.min(wa.length, wb.length); i++) {
    if (wa[i] !== wb[i]) return wa[i] - wb[i];
  }
  if (wa.length !== wb.length) return wa.length - wb.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

// each name weighed once, not at every comparison of the sort
function canonicalizedHeaders(headers) {
  return Object.keys(headers)
    .filter((name) => name.startsWith('x-ms-'))
    .map((name) => [name, weights(name)])
    .sort(compareWeighed)
    .map(([name]) => `${name}:${headers[name]}\n`)
    .join('');
}

function decode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    throw refuse('The query string of the request is not correctly percent-encoded.');
  }
}

// The query's parameters, name (lower-cased) -> its values in order.
function queryParameters(query) {
  const parameters = new Map();
  for (const part of query.split('&')) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    const name = decode(equals < 0 ? part : part.slice(0, equals)).toLowerCase();
    const value = equals < 0 ? '' : decode(part.slice(equals + 1));
    if (!parameters.has(name)) parameters.set(name, []);
    parameters.get(name).push(value);
  }
  return parameters;
}

// The canonicalized resource, with (and, when it differs, without) the
// parameters whose value is empty.
function canonicalizedResources(account, path, query) {
  const parameters = queryParameters(query);
  const names = [...parameters.keys()].sort();
  const withEmpty = names.map((name) => `\n${name}:${parameters.get(name).slice().sort().join(',')}`).join('');
  const withoutEmpty = names
    .map((name) => [name, parameters.get(name).filter((v) => v !== '')])
    .filter(([, values]) => values.length > 0)
    .map(([name, values]) => `\n${name}:${values.sort().join(',')}`)
    .join('');
  const base = `/${account}${path}`;
  return withEmpty === withoutEmpty ? [base + withEmpty] : [base + withEmpty, base + withoutEmpty];
}

// The strings a request may have signed (request: { method, path, query,
// headers } with node's lower-cased headers).
function stringsToSign(account, request) {
  const { headers } = request;
  const standard = STANDARD_HEADERS.map((name) => {
    const value = headers[name] === undefined ? '' : String(headers[name]);
    return name === 'content-length' && value === '0' ? '' : value;
  });
  const head = [request.method.toUpperCase(), ...standard].join('\n') + '\n' + canonicalizedHeaders(headers);
  return canonicalizedResources(account, request.path, request.query).map((resource) => head + resource);
}

// When the request says it was made, checked against now.
function checkClock(headers, now) {
  const stamp = headers['x-ms-date'] || headers.date;
  if (!stamp) throw refuse('The request has neither an x-ms-date nor a Date header.');
  const made = Date.parse(stamp);
  if (Number.isNaN(made)) throw refuse('The date of the request is not an HTTP date.');
  if (Math.abs(now.getTime() - made) > CLOCK_WINDOW_MS) {
    throw refuse(`Request date header too old or too far in the future: '${String(stamp).slice(0, 64)}'; the gateway's clock reads ${now.toUTCString()}.`);
  }
}

// The account (an entry of accounts, a Map name -> { name, key: Buffer,
// role }) that signed request, whose path names pathAccount; throws
// AuthenticationFailed otherwise.
function verifySharedKey(request, pathAccount, accounts, now) {
  const authorization = request.headers.authorization;
  const match = /^SharedKey ([^:\s]+):([A-Za-z0-9+/=]+)$/.exec(authorization || '');
  if (!match) {
    throw refuse(authorization ? 'The Authorization header is not of the form "SharedKey account:signature".'
      : 'The request has no Authorization header and no shared access signature.');
  }
  const [, name, signature] = match;
  const account = accounts.get(name);
  if (!account || name !== pathAccount) throw refuse(`The account ${name.slice(0, 64)} is not the account of this URL.`);
  checkClock(request.headers, now);
  const given = Buffer.from(signature, 'base64');
  const candidates = stringsToSign(name, request);
  const signed = candidates.some((text) => {
    const expected = createHmac('sha256', account.key).update(text, 'utf8').digest();
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!signed) {
    throw refuse(`The MAC signature found in the HTTP request is not the same as any computed signature. Server used following string to sign: '${candidates[0]}'.`);
  }
  return account;
}

module.exports = { verifySharedKey, stringsToSign, checkClock, refuse, CLOCK_WINDOW_MS };
