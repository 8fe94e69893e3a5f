'use strict';
/*-------------------------------------------------------------------------
 *
 * fifo_messages.js
 *		Where a sent message goes in the extension: group and
 *		deduplication id, by SQS's rules for FIFO and standard queues.
 *
 * A FIFO queue's message needs a MessageGroupId, the extension's group
 * (in order, one in flight at a time), and a MessageDeduplicationId, given
 * or, with ContentBasedDeduplication, the SHA-256 of the body: the
 * extension's deduplication refuses a repeat within the queue's window
 * (5 minutes) and answers with the first message's id.  With
 * DeduplicationScope messageGroup the id is made per group.  A standard
 * queue takes a MessageGroupId (kept with the message, as SQS's fair
 * queues read it) but no MessageDeduplicationId.
 *
 *-------------------------------------------------------------------------
 */
const { createHash } = require('node:crypto');
const { SqsError } = require('./errors');

// 1 to 128 of letters, digits and punctuation, as SQS allows in both ids
const FIFO_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('hex');

function checkId(name, value) {
  if (typeof value !== 'string' || !FIFO_ID.test(value)) {
    throw new SqsError('InvalidParameterValue', `Value ${String(value).slice(0, 200)} for parameter ${name} is invalid. Reason: it must be 1 to 128 letters, digits or punctuation characters.`);
  }
}

function notForQueueType(name, value) {
  return new SqsError('InvalidParameterValue', `Value ${String(value).slice(0, 200)} for parameter ${name} is invalid. Reason: The request include parameter that is not valid for this queue type.`);
}

/*
 * The extension's group and deduplication id of a message (each undefined
 * for none), and for content-based deduplication the id made of the body.
 * fifo: the FIFO queue's attributes, or null for a standard queue.
 */
function fifoPlacement(entry, fifo) {
  if (entry.MessageGroupId !== undefined) checkId('MessageGroupId', entry.MessageGroupId);
  if (entry.MessageDeduplicationId !== undefined) checkId('MessageDeduplicationId', entry.MessageDeduplicationId);
  if (fifo === null) {
    if (entry.MessageDeduplicationId !== undefined) throw notForQueueType('MessageDeduplicationId', entry.MessageDeduplicationId);
    return {};
  }
  if (entry.MessageGroupId === undefined) throw new SqsError('MissingParameter', 'The request must contain the parameter MessageGroupId.');
  if (entry.DelaySeconds > 0) throw notForQueueType('DelaySeconds', entry.DelaySeconds);
  let deduplicationId = entry.MessageDeduplicationId;
  let contentDeduplicationId;
  if (deduplicationId === undefined) {
    if (fifo.ContentBasedDeduplication !== 'true') {
      throw new SqsError('InvalidParameterValue', 'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly');
    }
    contentDeduplicationId = sha256(entry.MessageBody);
    deduplicationId = contentDeduplicationId;
  }
  if (fifo.DeduplicationScope === 'messageGroup') deduplicationId = sha256(`${entry.MessageGroupId}\n${deduplicationId}`);
  return { groupId: entry.MessageGroupId, deduplicationId, contentDeduplicationId };
}

// A FIFO message's SequenceNumber: its id, as the 20 digits SQS writes.
function sequenceNumber(messageId) {
  return String(messageId).padStart(20, '0');
}

module.exports = { fifoPlacement, sequenceNumber };
