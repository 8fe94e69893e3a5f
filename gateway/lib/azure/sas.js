'use strict';
/*-------------------------------------------------------------------------
 *
 * sas.js
 *		Account shared access signatures: a request authorized by query
 *		parameters signed with the account's key instead of a Shared Key
 *		header.
 *
 * The parameters: sv (the version signed for), ss (services: q must be
 * among them), srt (resource types: s the service, c queues, o messages),
 * sp (permissions), se (expiry), st (start, optional), sip (an address or
 * a range of IPv4 addresses, optional), spr (protocols, optional: "https"
 * alone is refused, as the gateway speaks http) and sig, the base64
 * HMAC-SHA256 under the account's key of
 *
 *   account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n
 *
 * and, from version 2020-12-06 on, ses (the encryption scope) \n after it.
 * The signature and the time are checked before anything else
 * (verifyAccountSas); the operation's resource type and permission once
 * the operation is known (authorizeOperation).  A service SAS (a queue's
 * own, without ss and srt) is not supported.
 *
 *-------------------------------------------------------------------------
 */
const { createHmac, timingSafeEqual } = require('node:crypto');
const { AzureError } = require('./errors');
const { refuse } = require('./shared_key');

// operation -> [resource type, permissions any one of which allows it]
const GRANTS = {
  ListQueues: ['s', 'l'],
  CreateQueue: ['c', 'wc'],
  DeleteQueue: ['c', 'd'],
  GetQueueMetadata: ['c', 'r'],
  SetQueueMetadata: ['c', 'w'],
  PutMessage: ['o', 'a'],
  GetMessages: ['o', 'p'],
  PeekMessages: ['o', 'r'],
  UpdateMessage: ['o', 'u'],
  DeleteMessage: ['o', 'p'],
  ClearMessages: ['o', 'd'],
};

function refuseSas(detail) {
  return refuse(`Shared access signature: ${detail}`);
}

// "10.0.0.1" or "10.0.0.1-10.0.0.255": whether address is in it.
function inRange(range, address) {
  const number = (ip) => {
    const parts = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
    return parts ? parts.slice(1).reduce((n, p) => n * 256 + Number(p), 0) : null;
  };
  const [low, high = low] = range.split('-');
  const ip = number(String(address).replace(/^::ffff:/, ''));
  return ip !== null && number(low) !== null && number(high) !== null && ip >= number(low) && ip <= number(high);
}

function sasTime(text, name) {
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw refuseSas(`${name} is not an ISO 8601 time.`);
  return time;
}

// The account and what it granted, when query (a Map of the decoded
// parameters) carries a valid account SAS for pathAccount; throws
// AuthenticationFailed otherwise.
function verifyAccountSas(query, pathAccount, accounts, now, remoteAddress) {
  const account = accounts.get(pathAccount);
  const given = (name) => (query.has(name) ? query.get(name) : '');
  if (!query.has('ss') || !query.has('srt')) throw refuseSas('only account SAS (with ss and srt) is supported, not service SAS.');
  for (const name of ['sv', 'sp', 'se', 'sig']) {
    if (given(name) === '') throw refuseSas(`${name} is missing.`);
  }
  if (!account) throw refuseSas(`the account ${pathAccount.slice(0, 64)} is not known here.`);
  const version = given('sv');
  const lines = [pathAccount, given('sp'), given('ss'), given('srt'), given('st'), given('se'), given('sip'), given('spr'), version];
  if (version >= '2020-12-06') lines.push(given('ses'));
  const expected = createHmac('sha256', account.key).update(`${lines.join('\n')}\n`, 'utf8').digest();
  const signature = Buffer.from(given('sig'), 'base64');
  if (!(signature.length === expected.length && timingSafeEqual(signature, expected))) {
    throw refuseSas('Signature did not match.');
  }
  const time = now.getTime();
  if (time >= sasTime(given('se'), 'se')) throw refuseSas('Signed expiry time has passed.');
  if (query.has('st') && time < sasTime(given('st'), 'st')) throw refuseSas('Signed start time is in the future.');
  if (!given('ss').includes('q')) throw new AzureError('AuthorizationServiceMismatch');
  if (query.has('spr') && !given('spr').split(',').includes('http')) throw new AzureError('AuthorizationProtocolMismatch');
  if (query.has('sip') && !inRange(given('sip'), remoteAddress)) throw new AzureError('AuthorizationSourceIPMismatch');
  return { account, resourceTypes: given('srt'), permissions: given('sp') };
}

// Whether the SAS's grant covers operation; throws the 403 Azure answers.
function authorizeOperation(grant, operation) {
  const [resourceType, permissions] = GRANTS[operation];
  if (!grant.resourceTypes.includes(resourceType)) throw new AzureError('AuthorizationResourceTypeMismatch');
  if (![...permissions].some((p) => grant.permissions.includes(p))) throw new AzureError('AuthorizationPermissionMismatch');
}

module.exports = { verifyAccountSas, authorizeOperation, GRANTS };
