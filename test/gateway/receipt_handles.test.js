'use strict';
// Receipt handles (gateway/lib/sqs/receipt_handles.js): read back by a
// gateway with the same secret, for the same queue only; any change to a
// handle, another queue or another secret is ReceiptHandleIsInvalid; and a
// handle shows nothing of what it holds.
const test = require('node:test');
const assert = require('node:assert/strict');
const { makeHandle, readHandle } = require('../../gateway/lib/sqs/receipt_handles');

const SECRET = 'a receipt secret of at least thirty-two characters';
const POP_RECEIPT = '6f1c2a4e-0d5b-4c3a-9e8f-7a6b5c4d3e2f';

function refused(work) {
  assert.throws(work, { code: 'ReceiptHandleIsInvalid' });
}

test('a handle reads back what it was made of', () => {
  const handle = makeHandle(SECRET, 'Orders_1', '42', POP_RECEIPT);
  assert.deepEqual(readHandle(SECRET, 'Orders_1', handle), { messageId: '42', popReceipt: POP_RECEIPT });
});

test('two handles of one message differ, and both read back', () => {
  const a = makeHandle(SECRET, 'q', '1', POP_RECEIPT);
  const b = makeHandle(SECRET, 'q', '1', POP_RECEIPT);
  assert.notEqual(a, b);
  assert.equal(readHandle(SECRET, 'q', b).messageId, '1');
});

test('a handle shows nothing of the queue, the id or the pop receipt', () => {
  const handle = makeHandle(SECRET, 'visible-queue-name', '123456789', POP_RECEIPT);
  const decoded = Buffer.from(handle, 'base64url').toString('latin1');
  for (const secretPart of ['visible-queue-name', '123456789', POP_RECEIPT, POP_RECEIPT.slice(0, 8)]) {
    assert.ok(!handle.includes(secretPart) && !decoded.includes(secretPart), secretPart);
  }
});

test('every changed character, another queue, another secret: ReceiptHandleIsInvalid', () => {
  const handle = makeHandle(SECRET, 'q', '7', POP_RECEIPT);
  for (let i = 0; i < handle.length; i++) {
    const other = handle[i] === 'A' ? 'B' : 'A';
    refused(() => readHandle(SECRET, 'q', handle.slice(0, i) + other + handle.slice(i + 1)));
  }
  refused(() => readHandle(SECRET, 'q2', handle));
  refused(() => readHandle(`${SECRET}!`, 'q', handle));
  for (const bad of ['', 'short', 'x'.repeat(3000), 'not base64 !', undefined, 42]) refused(() => readHandle(SECRET, 'q', bad));
});
