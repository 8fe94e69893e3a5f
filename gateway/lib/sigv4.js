'use strict';
// ---------------------------------------------------------------------------
// AWS Signature Version 4, checked on the way in.
//
// The AWS SDKs and the AWS CLI sign every request they send to SQS with
// Signature Version 4 (AWS4-HMAC-SHA256), in an Authorization header or in
// the query string of a presigned URL. The gateway takes their requests
// unchanged, so it checks the same signature AWS would: it rebuilds the
// canonical request from what arrived (method, path, query, the headers the
// client says it signed, the payload hash), derives the signing key from
// the secret of the access key for the credential scope's day, region and
// service, and compares the HMAC with the client's in constant time. It
// also refuses a request whose time is too far from the server's (a
// presigned URL: past its X-Amz-Expires), a scope for another service or
// another day than the request's, and headers that must be signed but are
// not: host, every x-amz-* header (the JSON protocol names its action in
// X-Amz-Target) and a content type other than a form's (it decides how
// the body is read).
//
// The errors carry the code and HTTP status SQS answers with; their
// messages name what is wrong and never the secret, the signature
// expected, or the canonical request.
// ---------------------------------------------------------------------------
const crypto = require('node:crypto');

const ALGORITHM = 'AWS4-HMAC-SHA256';
const SCOPE_TERMINATOR = 'aws4_request';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';
const SIGNATURE_PARAM = 'X-Amz-Signature';
// A request signed this long before or after the server's clock is refused.
const ALLOWED_SKEW_MINUTES = 15;
const ALLOWED_SKEW_MS = ALLOWED_SKEW_MINUTES * 60 * 1000;
// The longest a presigned URL may be valid: a week, as AWS allows.
const MAX_EXPIRES_SECONDS = 7 * 24 * 60 * 60;
const SIGNING_KEY_CACHE_SIZE = 256;

class SigV4Error extends Error {
  constructor(code, status, message) {
    super(message);
    this.name = 'SigV4Error';
    this.code = code;
    this.status = status;
  }
}

// What the client sent, quoted and cut short for a message: a log line
// stays one line.
const shown = (text) => JSON.stringify(String(text).slice(0, 64));

const missingToken = (message) => new SigV4Error('MissingAuthenticationToken', 403, message);
const incomplete = (message) => new SigV4Error('IncompleteSignature', 400, message);
const unknownKey = (message) => new SigV4Error('InvalidClientTokenId', 403, message);
const mismatch = (message) => new SigV4Error('SignatureDoesNotMatch', 403, message);
// SQS documents RequestExpired (400) among its common errors for a request
// that arrives too long before or after its time stamp, or after a presigned
// URL's expiry. The live service has been seen to answer clock skew with
// SignatureDoesNotMatch (403, "Signature expired: ..."); the SDKs take
// either code as a clock-skew error, correct their clock and retry.
// RequestExpired is kept: it tells skew apart from a wrong secret.
const expired = (message) => new SigV4Error('RequestExpired', 400, message);

// ---- the request target: path and query parameters ------------------------

function splitTarget(url) {
  const question = url.indexOf('?');
  if (question === -1) return { path: url, query: '' };
  return { path: url.slice(0, question), query: url.slice(question + 1) };
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

// RFC 3986 percent-encoding as SigV4 wants it: every byte but the
// unreserved characters as %XY, upper-case hex.
function uriEncodeBytes(bytes, keepSlash = false) {
  let text = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && (UNRESERVED.test(char) || (keepSlash && char === '/'))) {
      text += char;
    } else {
      text += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return text;
}

// The bytes a query component stands for, read the way a form is: + is a
// space, %XY a byte. The gateway reads the parameters this way too, so the
// signature covers the values it acts on. A % not followed by two hex
// digits stands for itself.
function decodeComponent(text) {
  const pieces = text.match(/%[0-9A-Fa-f]{2}|\+|[^%+]+|%/g) ?? [];
  return Buffer.concat(pieces.map((piece) => {
    if (piece === '+') return Buffer.from(' ');
    if (piece.length === 3 && piece[0] === '%') return Buffer.from([parseInt(piece.slice(1), 16)]);
    return Buffer.from(piece, 'utf8');
  }));
}

// The query's parameters in their order, each with its name and value as
// text and in canonical encoding.
function parseQuery(query) {
  const params = [];
  for (const piece of query.split('&')) {
    if (piece === '') continue;
    const equals = piece.indexOf('=');
    const rawName = equals === -1 ? piece : piece.slice(0, equals);
    const rawValue = equals === -1 ? '' : piece.slice(equals + 1);
    const name = decodeComponent(rawName);
    const value = decodeComponent(rawValue);
    params.push({
      name: name.toString('utf8'),
      value: value.toString('utf8'),
      encodedName: uriEncodeBytes(name),
      encodedValue: uriEncodeBytes(value),
    });
  }
  return params;
}

// Sorted by encoded name, then encoded value; the signature itself left out.
function canonicalQuery(params) {
  return params
    .filter((param) => param.name !== SIGNATURE_PARAM)
    .map((param) => [param.encodedName, param.encodedValue])
    .sort(([nameA, valueA], [nameB, valueB]) =>
      compareStrings(nameA, nameB) || compareStrings(valueA, valueB))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const compareStrings = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// RFC 3986 dot segments removed, and empty segments, as AWS services want;
// a leading and a trailing slash kept.
function normalizePath(path) {
  if (path === '') return '/';
  const segments = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const lead = path.startsWith('/') ? '/' : '';
  const trail = path.endsWith('/') && segments.length > 0 ? '/' : '';
  return lead + segments.join('/') + trail;
}

// Services other than S3 encode the path as sent once more: a %20 on the
// wire is %2520 in the canonical request. botocore and the JavaScript SDK
// both do so.
function canonicalPath(path) {
  return uriEncodeBytes(Buffer.from(normalizePath(path), 'utf8'), true);
}

// ---- headers ---------------------------------------------------------------

// node:http gives one value per name; a caller may also pass its
// headersDistinct, every value of a repeated header apart.
function headerValues(headers, name) {
  const value = headers[name];
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

function singleHeader(headers, name) {
  const values = headerValues(headers, name);
  if (values.length > 1) throw incomplete(`The request has more than one ${name} header.`);
  return values[0];
}

const trimAll = (value) => value.replace(/[ \t]+/g, ' ').replace(/^ | $/g, '');

// node:http decodes header bytes as latin1; encoding them back the same way
// gives the bytes the client signed (UTF-8, for text beyond ASCII). A value
// that cannot have come from node (a character past U+00FF) is UTF-8.
function headerBytes(text) {
  return /[^\u0000-\u00ff]/.test(text) ? Buffer.from(text, 'utf8') : Buffer.from(text, 'latin1');
}

function canonicalHeaders(headers, signedHeaders) {
  const lines = [];
  for (const name of signedHeaders) {
    const values = headerValues(headers, name);
    if (values.length === 0) {
      throw mismatch(`SignedHeaders names ${name}, which the request does not have.`);
    }
    lines.push(Buffer.from(`${name}:`), headerBytes(values.map(trimAll).join(',')), Buffer.from('\n'));
  }
  return Buffer.concat(lines);
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function parseSignedHeaders(text) {
  const names = text.split(';');
  for (const name of names) {
    if (!HEADER_NAME.test(name)) {
      throw incomplete('SignedHeaders must be lower-case header names separated by semicolons.');
    }
  }
  return names;
}

// A form's content type may go unsigned, as SQS allows: a body without a
// content type is read as a form anyway, so the header changes nothing,
// and libcurl adds it to a POST unasked (kombu's SQS client signs its
// request without one, then curl sends it).
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

function isFormContentType(headers) {
  const values = headerValues(headers, 'content-type');
  return values.length > 0 && values.every((value) => value.split(';')[0].trim().toLowerCase() === FORM_CONTENT_TYPE);
}

function mustBeSigned(headers, name) {
  if (name === 'content-type') return !isFormContentType(headers);
  return name.startsWith('x-amz-');
}

// host must be signed (it ties the signature to this endpoint), and so must
// every x-amz-* header the request has and any other content type.
function checkSignedHeaderSet(headers, signedHeaders) {
  const signed = new Set(signedHeaders);
  if (!signed.has('host')) throw incomplete('The host header must be among the signed headers.');
  const unsigned = Object.keys(headers).filter((name) => mustBeSigned(headers, name) && !signed.has(name));
  if (unsigned.length > 0) {
    throw incomplete(`These headers must be signed and are not: ${unsigned.sort().join(', ')}.`);
  }
}

// ---- payload ---------------------------------------------------------------

const sha256Hex = (data) => crypto.createHash('sha256').update(data).digest('hex');

// The hash the client put in the canonical request: x-amz-content-sha256 if
// it sent one (a hash must be the body's), else the body's.
function payloadHash(headers, body) {
  const bodyHash = () => sha256Hex(body ?? Buffer.alloc(0));
  const declared = singleHeader(headers, 'x-amz-content-sha256');
  if (declared === undefined) return bodyHash();
  if (declared === UNSIGNED_PAYLOAD) return declared;
  if (!/^[0-9a-fA-F]{64}$/.test(declared)) {
    throw incomplete(`x-amz-content-sha256 must be the body's SHA-256 in hex or ${UNSIGNED_PAYLOAD}.`);
  }
  if (declared.toLowerCase() !== bodyHash()) {
    throw mismatch('The body does not match its x-amz-content-sha256.');
  }
  return declared;
}

// ---- time ------------------------------------------------------------------

const BASIC_FORMAT = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

// A Date from a UTC calendar time; null if some field is out of range.
function utcDate(year, month, day, hour, minute, second) {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day ||
    date.getUTCHours() !== hour || date.getUTCMinutes() !== minute || date.getUTCSeconds() !== second) {
    return null;
  }
  return date;
}

function parseBasicFormat(text) {
  const match = BASIC_FORMAT.exec(text);
  return match ? utcDate(...match.slice(1).map(Number)) : null;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const HTTP_DATE = new RegExp('^(?:[A-Za-z]{3}, *)?(\\d{1,2}) (' + MONTHS.join('|') +
  ') (\\d{4}) (\\d{2}):(\\d{2}):(\\d{2}) (GMT|UTC|UT|Z|[+-]\\d{4})$');

// A Date header as HTTP and RFC 2822 write it ("Mon, 01 Jan 2024 12:00:00
// GMT"; botocore writes the zone as -0000).
function parseHttpDate(text) {
  const match = HTTP_DATE.exec(text.trim());
  if (!match) return null;
  const [, day, month, year, hour, minute, second, zone] = match;
  const date = utcDate(Number(year), MONTHS.indexOf(month) + 1, Number(day),
    Number(hour), Number(minute), Number(second));
  if (date === null || !/^[+-]/.test(zone)) return date;
  const offsetMinutes = (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3))) * (zone[0] === '-' ? -1 : 1);
  return new Date(date.getTime() - offsetMinutes * 60 * 1000);
}

const toBasicFormat = (date) => date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');

// The time the header form was signed at: X-Amz-Date, else Date (in the
// basic format or as an HTTP date).
function headerRequestTime(headers) {
  const amzDate = singleHeader(headers, 'x-amz-date');
  if (amzDate !== undefined) {
    const date = parseBasicFormat(amzDate);
    if (date === null) throw incomplete('X-Amz-Date must be in the basic format, as 20240101T120000Z.');
    return date;
  }
  const httpDate = singleHeader(headers, 'date');
  if (httpDate === undefined) throw incomplete('The request needs an X-Amz-Date or a Date header.');
  const date = parseBasicFormat(httpDate) ?? parseHttpDate(httpDate);
  if (date === null) throw incomplete('The Date header is not a date.');
  return date;
}

function checkSkew(date, now) {
  const skew = now.getTime() - date.getTime();
  if (skew > ALLOWED_SKEW_MS) {
    throw expired(`The request was signed at ${toBasicFormat(date)}, more than ${ALLOWED_SKEW_MINUTES} minutes before the server's time ${toBasicFormat(now)}.`);
  }
  if (-skew > ALLOWED_SKEW_MS) {
    throw expired(`The request was signed at ${toBasicFormat(date)}, more than ${ALLOWED_SKEW_MINUTES} minutes after the server's time ${toBasicFormat(now)}.`);
  }
}

function checkPresignedWindow(date, expiresSeconds, now) {
  if (date.getTime() - now.getTime() > ALLOWED_SKEW_MS) {
    throw expired(`The URL was signed at ${toBasicFormat(date)}, more than ${ALLOWED_SKEW_MINUTES} minutes after the server's time ${toBasicFormat(now)}.`);
  }
  const end = new Date(date.getTime() + expiresSeconds * 1000);
  if (now.getTime() > end.getTime()) {
    throw expired(`The URL expired at ${toBasicFormat(end)}; the server's time is ${toBasicFormat(now)}.`);
  }
}

// ---- what the client claims: the two forms ---------------------------------

// AKID/20240101/us-east-1/sqs/aws4_request
function parseCredential(text) {
  const parts = text.split('/');
  if (parts.length < 5 || parts.slice(0, -4).join('/') === '' || parts.slice(-4).some((part) => part === '')) {
    throw incomplete('The credential must be access-key-id/date/region/service/aws4_request.');
  }
  const [day, region, service, terminator] = parts.slice(-4);
  return { accessKeyId: parts.slice(0, -4).join('/'), day, region, service, terminator };
}

function checkSignatureFormat(signature) {
  if (!/^[0-9a-fA-F]{64}$/.test(signature)) {
    throw incomplete('The signature must be 64 hexadecimal digits.');
  }
}

function checkAlgorithm(algorithm) {
  if (algorithm !== ALGORITHM) {
    throw incomplete(`The signing algorithm must be ${ALGORITHM}, not ${shown(algorithm)}.`);
  }
}

const AUTHORIZATION_FIELDS = ['Credential', 'SignedHeaders', 'Signature'];

// Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...
function parseAuthorizationHeader(header, headers) {
  const text = header.trim();
  const space = text.indexOf(' ');
  checkAlgorithm(space === -1 ? text : text.slice(0, space));
  const fields = new Map();
  for (const piece of (space === -1 ? '' : text.slice(space + 1)).split(',')) {
    const field = piece.trim();
    if (field === '') continue;
    const equals = field.indexOf('=');
    const name = equals === -1 ? field : field.slice(0, equals);
    if (!AUTHORIZATION_FIELDS.includes(name)) {
      throw incomplete(`The Authorization header has an unknown part ${shown(name)}.`);
    }
    if (fields.has(name)) throw incomplete(`The Authorization header has ${shown(name)} twice.`);
    fields.set(name, field.slice(equals + 1));
  }
  const absent = AUTHORIZATION_FIELDS.filter((name) => !fields.get(name));
  if (absent.length > 0) throw incomplete(`The Authorization header lacks ${absent.join(', ')}.`);
  checkSignatureFormat(fields.get('Signature'));
  return {
    credential: parseCredential(fields.get('Credential')),
    signedHeaders: parseSignedHeaders(fields.get('SignedHeaders')),
    signature: fields.get('Signature').toLowerCase(),
    date: headerRequestTime(headers),
    expiresSeconds: null,
  };
}

const PRESIGNED_PARAMS = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires',
  'X-Amz-SignedHeaders', SIGNATURE_PARAM];

function parsePresignedQuery(params) {
  const values = new Map();
  for (const name of PRESIGNED_PARAMS) {
    const found = params.filter((param) => param.name === name);
    if (found.length > 1) throw incomplete(`The query string has ${name} more than once.`);
    if (found.length === 0 || found[0].value === '') throw incomplete(`The query string lacks ${name}.`);
    values.set(name, found[0].value);
  }
  checkAlgorithm(values.get('X-Amz-Algorithm'));
  checkSignatureFormat(values.get(SIGNATURE_PARAM));
  const date = parseBasicFormat(values.get('X-Amz-Date'));
  if (date === null) throw incomplete('X-Amz-Date must be in the basic format, as 20240101T120000Z.');
  const expires = values.get('X-Amz-Expires');
  if (!/^\d{1,7}$/.test(expires) || Number(expires) < 1 || Number(expires) > MAX_EXPIRES_SECONDS) {
    throw incomplete(`X-Amz-Expires must be a number of seconds from 1 to ${MAX_EXPIRES_SECONDS}.`);
  }
  return {
    credential: parseCredential(values.get('X-Amz-Credential')),
    signedHeaders: parseSignedHeaders(values.get('X-Amz-SignedHeaders')),
    signature: values.get(SIGNATURE_PARAM).toLowerCase(),
    date,
    expiresSeconds: Number(expires),
  };
}

// The query parameters that make a URL presigned.
const PRESIGNED_MARKERS = ['X-Amz-Algorithm', 'X-Amz-Credential', SIGNATURE_PARAM];

function readClaim(headers, params) {
  const header = singleHeader(headers, 'authorization');
  const presigned = params.some((param) => PRESIGNED_MARKERS.includes(param.name));
  if (header !== undefined && presigned) {
    throw incomplete('The request is signed both in an Authorization header and in its query string.');
  }
  if (header !== undefined) return parseAuthorizationHeader(header, headers);
  if (presigned) return parsePresignedQuery(params);
  throw missingToken('The request is not signed: it has no Authorization header and no X-Amz-Signature parameter.');
}

// The scope names the day, region and service the signing key is for.
function checkScope(credential, date, service) {
  if (credential.terminator !== SCOPE_TERMINATOR) {
    throw mismatch(`The credential scope must end in ${SCOPE_TERMINATOR}, not ${shown(credential.terminator)}.`);
  }
  if (credential.service !== service) {
    throw mismatch(`The credential scope must name the service ${shown(service)}, not ${shown(credential.service)}.`);
  }
  const day = toBasicFormat(date).slice(0, 8);
  if (credential.day !== day) {
    throw mismatch(`The credential scope's date ${shown(credential.day)} is not the request's date ${day}.`);
  }
}

// ---- the signature ---------------------------------------------------------

const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();

// The derived keys, most recently made last; each is good for a day.
const signingKeys = new Map();

function signingKey(secret, day, region, service) {
  const cacheKey = JSON.stringify([secret, day, region, service]);
  let key = signingKeys.get(cacheKey);
  if (key === undefined) {
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), SCOPE_TERMINATOR);
    if (signingKeys.size >= SIGNING_KEY_CACHE_SIZE) signingKeys.delete(signingKeys.keys().next().value);
    signingKeys.set(cacheKey, key);
  }
  return key;
}

function canonicalRequest({ method, path, params, headers, signedHeaders, hash }) {
  return Buffer.concat([
    Buffer.from(`${method}\n${canonicalPath(path)}\n${canonicalQuery(params)}\n`),
    canonicalHeaders(headers, signedHeaders),
    Buffer.from(`\n${signedHeaders.join(';')}\n${hash}`),
  ]);
}

function stringToSign(date, credential, canonical) {
  const scope = [credential.day, credential.region, credential.service, SCOPE_TERMINATOR].join('/');
  return `${ALGORITHM}\n${toBasicFormat(date)}\n${scope}\n${sha256Hex(canonical)}`;
}

function lookUp(lookupSecret, accessKeyId) {
  const secret = lookupSecret(accessKeyId);
  if (secret === undefined || secret === null) {
    throw unknownKey(`The access key ID ${shown(accessKeyId)} is not known.`);
  }
  if (typeof secret !== 'string') throw new TypeError('lookupSecret must return a string or undefined');
  return secret;
}

// Checks the signature of a request as node:http gives it: method, url (the
// request target, path and query) and headers (lower-case names; a value
// may be an array, as in headersDistinct), and body, a Buffer of the whole
// body. Returns the access key ID, the scope's region, the time the
// request was signed at (a Date) and the names of the signed headers;
// throws a SigV4Error.
function verify(request, body, { lookupSecret, now = new Date(), service = 'sqs' }) {
  const { headers } = request;
  const { path, query } = splitTarget(request.url);
  const params = parseQuery(query);
  const claim = readClaim(headers, params);
  const { credential, signedHeaders, date } = claim;
  checkScope(credential, date, service);
  if (claim.expiresSeconds === null) checkSkew(date, now);
  else checkPresignedWindow(date, claim.expiresSeconds, now);
  checkSignedHeaderSet(headers, signedHeaders);
  const hash = payloadHash(headers, body);
  const secret = lookUp(lookupSecret, credential.accessKeyId);

  const canonical = canonicalRequest({ method: request.method, path, params, headers, signedHeaders, hash });
  const key = signingKey(secret, credential.day, credential.region, credential.service);
  const expected = hmac(key, stringToSign(date, credential, canonical));
  if (!crypto.timingSafeEqual(expected, Buffer.from(claim.signature, 'hex'))) {
    throw mismatch('The signature does not match the request: check the secret access key and how the request is signed.');
  }
  return { accessKeyId: credential.accessKeyId, region: credential.region, date, signedHeaders };
}

module.exports = { verify, SigV4Error };
