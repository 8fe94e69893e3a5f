'use strict';
// Receipt handles: what a client gets with a received message and gives
// back to delete it.  A handle carries the queue, the message id and the
// extension's pop receipt, and an HMAC of them under the gateway's
// receiptSecret, so it is opaque to the client and cannot be forged or
// moved to another queue; gateways that share the secret read each
// other's handles.
const { createHmac, timingSafeEqual } = require('node:crypto');
const { SqsError } = require('./errors');

const MAC_BYTES = 16;

function mac(secret, text) {
  return createHmac('sha256', secret).update(text).digest().subarray(0, MAC_BYTES);
}

function makeHandle(secret, queue, messageId, popReceipt) {
  const text = JSON.stringify([queue, String(messageId), popReceipt]);
  return Buffer.concat([mac(secret, text), Buffer.from(text, 'utf8')]).toString('base64url');
}

// { messageId, popReceipt } of a handle for queue; ReceiptHandleIsInvalid
// for anything else.
function readHandle(secret, queue, handle) {
  const invalid = () => new SqsError('ReceiptHandleIsInvalid', `The receipt handle "${String(handle).slice(0, 80)}" is not valid for this queue.`);
  if (typeof handle !== 'string' || !/^[A-Za-z0-9_-]{20,2048}$/.test(handle)) throw invalid();
  const bytes = Buffer.from(handle, 'base64url');
  const text = bytes.subarray(MAC_BYTES).toString('utf8');
  const expected = mac(secret, text);
  if (bytes.length <= MAC_BYTES || !timingSafeEqual(bytes.subarray(0, MAC_BYTES), expected)) throw invalid();
  const [handleQueue, messageId, popReceipt] = JSON.parse(text);
  if (handleQueue !== queue) throw invalid();
  return { messageId, popReceipt };
}

module.exports = { makeHandle, readHandle };
