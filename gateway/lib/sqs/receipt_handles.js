'use strict';
// Receipt handles: what a client gets with a received message and gives
// back to delete it.  A handle holds the queue, the message id and the
// extension's pop receipt, sealed with AES-256-GCM under a key derived
// from the gateway's receiptSecret: the client can neither read it nor
// forge it nor move it to another queue, and gateways that share the
// secret read each other's handles.
const { createCipheriv, createDecipheriv, createHash, randomBytes } = require('node:crypto');
const { SqsError } = require('./errors');

const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyOf(secret) {
  return createHash('sha256').update(`queue gateway receipt handles\0${secret}`).digest();
}

function makeHandle(secret, queue, messageId, popReceipt) {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify([queue, String(messageId), popReceipt]), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

// { messageId, popReceipt } of a handle for queue; ReceiptHandleIsInvalid
// for anything else.
function readHandle(secret, queue, handle) {
  const invalid = () => new SqsError('ReceiptHandleIsInvalid', `The receipt handle "${String(handle).slice(0, 80)}" is not valid for this queue.`);
  if (typeof handle !== 'string' || !/^[A-Za-z0-9_-]{40,2048}$/.test(handle)) throw invalid();
  const bytes = Buffer.from(handle, 'base64url');
  // one spelling per handle: unused low bits of the last character set is another
  if (bytes.toString('base64url') !== handle) throw invalid();
  let fields;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    fields = JSON.parse(text);
  } catch {
    throw invalid();
  }
  const [handleQueue, messageId, popReceipt] = fields;
  if (handleQueue !== queue) throw invalid();
  return { messageId, popReceipt };
}

module.exports = { makeHandle, readHandle };
