'use strict';
// The actions on messages: SendMessage(Batch), ReceiveMessage,
// DeleteMessage(Batch) and ChangeMessageVisibility(Batch).  A message's
// SQS attributes are kept in the extension's headers, under
// "sqs_attributes", binary values in base64; its system attributes
// (MessageGroupId, MessageDeduplicationId, AWSTraceHeader) under
// "sqs_system".  A FIFO queue's messages go into the extension's groups,
// their deduplication ids into its deduplication (fifo_messages.js).
const { SqsError } = require('../errors');
const { queueName } = require('../queue_urls');
const { md5OfBody, md5OfMessageAttributes } = require('../md5');
const { makeHandle, readHandle } = require('../receipt_handles');
const { afterCommit } = require('../../database');
const { isFifoName, leaseSeconds } = require('../queue_attributes');
const { queueRow } = require('../queue_rows');
const { fifoPlacement, sequenceNumber } = require('../fifo_messages');

const ATTRIBUTES_KEY = 'sqs_attributes';
const SYSTEM_KEY = 'sqs_system';
// the characters an SQS message may hold (XML 1.0's)
const BODY_CHARACTERS = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]*$/u;
const BATCH_ID = /^[A-Za-z0-9_-]{1,80}$/;
// SQS's limits on a message's attributes, and on all the messages of a batch
const MAX_ATTRIBUTES = 10;
const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,256}$/;
const NUMBER = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
const MAX_BATCH_BYTES = 1048576;

function checkRange(name, value, min, max) {
  if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) {
    throw new SqsError('InvalidParameterValue', `${name} must be from ${min} to ${max}.`);
  }
}

function checkBody(body) {
  if (body === '') throw new SqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
  if (!BODY_CHARACTERS.test(body)) {
    throw new SqsError('InvalidMessageContents', 'Invalid characters found in the message body.');
  }
}

// A message attribute's name as SQS takes it: letters, digits, _ - and
// dots, no dot first or last or twice in a row, and not AWS's or Amazon's.
function checkAttributeName(name) {
  if (!ATTRIBUTE_NAME.test(name) || name.startsWith('.') || name.endsWith('.') || name.includes('..')) {
    throw new SqsError('InvalidParameterValue', `The message (user) attribute name '${name}' is invalid: it may have 1 to 256 letters, digits, hyphens, underscores and periods, no period first, last or next to another.`);
  }
  if (/^(aws\.|amazon\.)/i.test(name)) {
    throw new SqsError('InvalidParameterValue', `The message (user) attribute name '${name}' is reserved for use by AWS.`);
  }
}

// The attributes as kept in headers: binary values in base64.
function storedAttributes(attributes) {
  const stored = {};
  const count = Object.keys(attributes || {}).length;
  if (count > MAX_ATTRIBUTES) {
    throw new SqsError('InvalidParameterValue', `Number of message attributes [${count}] exceeds the allowed maximum [${MAX_ATTRIBUTES}].`);
  }
  for (const [name, value] of Object.entries(attributes || {})) {
    checkAttributeName(name);
    if (!/^(String|Number|Binary)(\.[^\s]+)?$/.test(value.DataType) || value.DataType.length > 256) {
      throw new SqsError('InvalidParameterValue', `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`);
    }
    const binary = value.DataType.startsWith('Binary');
    if (binary ? !(Buffer.isBuffer(value.BinaryValue) && value.BinaryValue.length > 0) : !value.StringValue) {
      throw new SqsError('InvalidParameterValue', `The message (user) attribute '${name}' must contain a non-empty value of message attribute type '${value.DataType}'.`);
    }
    if (value.DataType.startsWith('Number') && !NUMBER.test(value.StringValue)) {
      throw new SqsError('InvalidParameterValue', `Could not cast message attribute '${name}' value to number.`);
    }
    stored[name] = binary ? { DataType: value.DataType, BinaryValue: value.BinaryValue.toString('base64') }
      : { DataType: value.DataType, StringValue: value.StringValue };
  }
  return stored;
}

function attributesOf(headers) {
  const stored = (headers && headers[ATTRIBUTES_KEY]) || {};
  const attributes = {};
  for (const [name, value] of Object.entries(stored)) {
    attributes[name] = value.BinaryValue !== undefined
      ? { DataType: value.DataType, BinaryValue: Buffer.from(value.BinaryValue, 'base64') }
      : { DataType: value.DataType, StringValue: value.StringValue };
  }
  return attributes;
}

// The system attributes a sender may give: AWSTraceHeader, a String.
function storedSystemAttributes(attributes) {
  const system = {};
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name !== 'AWSTraceHeader' || value.DataType !== 'String' || typeof value.StringValue !== 'string') {
      throw new SqsError('InvalidParameterValue', `The message system attribute ${name} is not valid: only AWSTraceHeader, a String, may be sent.`);
    }
    system.AWSTraceHeader = value.StringValue;
  }
  return system;
}

/*
 * One message to put: its body, delay (undefined: the queue's), group,
 * deduplication id and headers; and its digests.  fifo: the FIFO queue's
 * attributes, or null for a standard queue.
 */
function outgoing(entry, fifo) {
  checkBody(entry.MessageBody);
  checkRange('DelaySeconds', entry.DelaySeconds, 0, 900);
  const stored = storedAttributes(entry.MessageAttributes);
  const system = storedSystemAttributes(entry.MessageSystemAttributes);
  const placement = fifoPlacement(entry, fifo);
  if (entry.MessageGroupId !== undefined) system.MessageGroupId = entry.MessageGroupId;
  if (placement.deduplicationId !== undefined) system.MessageDeduplicationId = entry.MessageDeduplicationId || placement.contentDeduplicationId;
  const digests = { MD5OfMessageBody: md5OfBody(entry.MessageBody) };
  const md5 = md5OfMessageAttributes(entry.MessageAttributes || {});
  if (md5 !== undefined) digests.MD5OfMessageAttributes = md5;
  const systemMd5 = md5OfMessageAttributes(entry.MessageSystemAttributes || {});
  if (systemMd5 !== undefined) digests.MD5OfMessageSystemAttributes = systemMd5;
  const headers = {};
  if (Object.keys(stored).length > 0) headers[ATTRIBUTES_KEY] = stored;
  if (Object.keys(system).length > 0) headers[SYSTEM_KEY] = system;
  return {
    body: entry.MessageBody,
    delay: entry.DelaySeconds,
    groupId: placement.groupId,
    deduplicationId: placement.deduplicationId,
    headers: Object.keys(headers).length > 0 ? headers : null,
    digests,
  };
}

// The attributes of a FIFO queue its sends need, or null for a standard one.
async function fifoAttributes(client, queue) {
  return isFifoName(queue) ? (await queueRow(client, queue)).attributes || {} : null;
}

// A receipt as SendMessage and a SendMessageBatch entry answer it.
function sent(message, receipt) {
  const answer = { ...message.digests, MessageId: String(receipt.messageId) };
  if (message.groupId !== undefined) answer.SequenceNumber = sequenceNumber(receipt.messageId);
  return answer;
}

function putOptions(message) {
  return { delay: message.delay, headers: message.headers, groupId: message.groupId, deduplicationId: message.deduplicationId };
}

async function sendMessage({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  const message = outgoing(params, await fifoAttributes(client, queue));
  return sent(message, await client.put(queue, message.body, putOptions(message)));
}

// The entries of a batch: 1 to 10, each with an Id of its own.
function checkEntries(entries) {
  if (!entries || entries.length === 0) throw new SqsError('EmptyBatchRequest', 'There should be at least one entry in the request.');
  if (entries.length > 10) throw new SqsError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are 10. You have sent ${entries.length}.`);
  const ids = new Set();
  for (const entry of entries) {
    if (typeof entry.Id !== 'string' || !BATCH_ID.test(entry.Id)) {
      throw new SqsError('InvalidBatchEntryId', 'A batch entry id can only contain alphanumeric characters, hyphens and underscores, 1 to 80 of them.');
    }
    if (ids.has(entry.Id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${entry.Id} repeated.`);
    ids.add(entry.Id);
  }
}

function failedEntry(id, err) {
  return { Id: id, SenderFault: true, Code: err.code, Message: err.message };
}

// A message's size as SQS counts it: the body, and each attribute's name,
// type and value, in bytes.
function sqsSize(entry) {
  let size = Buffer.byteLength(entry.MessageBody || '', 'utf8');
  for (const [name, value] of Object.entries(entry.MessageAttributes || {})) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType || '', 'utf8');
    size += Buffer.isBuffer(value.BinaryValue) ? value.BinaryValue.length : Buffer.byteLength(value.StringValue || '', 'utf8');
  }
  return size;
}

function checkBatchSize(entries) {
  const size = entries.reduce((sum, entry) => sum + sqsSize(entry), 0);
  if (size > MAX_BATCH_BYTES) {
    throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${MAX_BATCH_BYTES} bytes. You have sent ${size} bytes.`);
  }
}

// One member of the messages for putBatch: undefined when none has it,
// else one value per message (null where it has none).
function perMessage(messages, key) {
  return messages.some((m) => m[key] !== undefined && m[key] !== null) ? messages.map((m) => m[key] ?? null) : undefined;
}

// Entries that cannot be read fail alone; the others are put in one
// transaction, with one putBatch per DelaySeconds (in the order of each
// one's first entry, entries in input order within it). An entry without
// DelaySeconds takes the queue's delay, which may be another entry's: in
// a batch with both kinds, a putBatch takes only consecutive entries of
// one DelaySeconds, so that messages visible at one time (a FIFO group's
// among them) keep the order of the request. The answer lists the entries
// in input order.
async function sendMessageBatch({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  checkEntries(params.Entries);
  checkBatchSize(params.Entries);
  const fifo = await fifoAttributes(client, queue);
  const answers = [];
  const groups = [];
  const mixed = params.Entries.some((e) => e.DelaySeconds === undefined) && params.Entries.some((e) => e.DelaySeconds !== undefined);
  params.Entries.forEach((entry, index) => {
    try {
      const message = outgoing(entry, fifo);
      const group = mixed ? groups[groups.length - 1] : groups.find((g) => g.delay === message.delay);
      if (group && group.delay === message.delay) group.entries.push({ index, id: entry.Id, message });
      else groups.push({ delay: message.delay, entries: [{ index, id: entry.Id, message }] });
    } catch (err) {
      if (!(err instanceof SqsError)) throw err;
      answers[index] = { failed: failedEntry(entry.Id, err) };
    }
  });
  for (const { delay, entries } of groups) {
    const messages = entries.map((e) => e.message);
    const receipts = await client.putBatch(queue, messages.map((m) => m.body), { delay, headers: perMessage(messages, 'headers'),
      groupIds: perMessage(messages, 'groupId'), deduplicationIds: perMessage(messages, 'deduplicationId') });
    entries.forEach((e, k) => {
      answers[e.index] = { successful: { Id: e.id, ...sent(e.message, receipts[k]) } };
    });
  }
  return {
    Successful: answers.filter((a) => a.successful).map((a) => a.successful),
    Failed: answers.filter((a) => a.failed).map((a) => a.failed),
  };
}

// Whether a message attribute name is asked for: "All", ".*", a prefix
// ending in ".*", or the name itself.
function wanted(names, name) {
  return names.some((asked) => asked === 'All' || asked === '.*' || asked === name ||
    (asked.endsWith('.*') && name.startsWith(asked.slice(0, -1))));
}

function systemAttributes(message, names) {
  const system = (message.headers && message.headers[SYSTEM_KEY]) || {};
  const all = {
    ApproximateReceiveCount: String(message.dequeueCount),
    SentTimestamp: String(new Date(message.insertedAt).getTime()),
    ...system,
  };
  if (message.firstDequeuedAt) all.ApproximateFirstReceiveTimestamp = String(new Date(message.firstDequeuedAt).getTime());
  if (message.groupId !== null && message.groupId !== undefined) all.SequenceNumber = sequenceNumber(message.messageId);
  const attributes = {};
  for (const [key, value] of Object.entries(all)) {
    if (names.includes('All') || names.includes(key)) attributes[key] = value;
  }
  return attributes;
}

function incoming(config, queue, message, params) {
  const result = {
    MessageId: String(message.messageId),
    ReceiptHandle: makeHandle(config.receiptSecret, queue, message.messageId, message.popReceipt),
    MD5OfBody: md5OfBody(message.body),
    Body: message.body,
  };
  const system = systemAttributes(message, [...(params.AttributeNames || []), ...(params.MessageSystemAttributeNames || [])]);
  if (Object.keys(system).length > 0) result.Attributes = system;
  const names = params.MessageAttributeNames || [];
  const chosen = {};
  for (const [name, value] of Object.entries(attributesOf(message.headers))) {
    if (wanted(names, name)) chosen[name] = value;
  }
  if (Object.keys(chosen).length > 0) {
    result.MessageAttributes = chosen;
    result.MD5OfMessageAttributes = md5OfMessageAttributes(chosen);
  }
  return result;
}

// A get that waits for nothing first, in the request's transaction; when
// it finds nothing and the request may wait, the wait happens once that
// transaction has committed, in the line of the queue (long_poll.js),
// which holds no connection of the request's.
async function receiveMessage({ params, config, role, longPolls, clientGone }, client) {
  const queue = queueName(config, params.QueueUrl);
  checkRange('MaxNumberOfMessages', params.MaxNumberOfMessages, 1, 10);
  checkRange('VisibilityTimeout', params.VisibilityTimeout, 0, 43200);
  checkRange('WaitTimeSeconds', params.WaitTimeSeconds, 0, 20);
  const asked = { maxMessages: params.MaxNumberOfMessages || 1,
    visibilityTimeout: params.VisibilityTimeout === undefined ? undefined : leaseSeconds(params.VisibilityTimeout) };
  const answer = (messages) => (messages.length > 0 ? { Messages: messages.map((m) => incoming(config, queue, m, params)) } : {});
  const found = await client.get(queue, { ...asked, wait: 0 });
  if (found.length > 0) return answer(found);
  // without WaitTimeSeconds, the queue's ReceiveMessageWaitTimeSeconds
  const waitSeconds = params.WaitTimeSeconds !== undefined ? params.WaitTimeSeconds
    : Number(((await queueRow(client, queue)).attributes || {}).ReceiveMessageWaitTimeSeconds || 0);
  if (!waitSeconds) return answer(found);
  return afterCommit(async () => answer(await longPolls.wait({
    queue, role, ...asked, waitSeconds, signal: clientGone,
  })));
}

// The message a request's receipt handle names; a handle that cannot be
// read is ReceiptHandleIsInvalid, on a queue that exists (else
// QueueDoesNotExist, as SQS looks the queue up first).
async function handleOf(config, client, queue, receiptHandle) {
  try {
    return readHandle(config.receiptSecret, queue, receiptHandle);
  } catch (err) {
    await queueRow(client, queue);
    throw err;
  }
}

/*
 * The entries of a batch whose receipt handles can be read, as { entry,
 * message }; an entry whose handle cannot be read, or that check (an
 * entry's own checks) refuses, goes to failed.  With none left, the queue
 * must still exist.
 */
async function readableEntries(config, client, queue, entries, failed, check = () => {}) {
  const readable = [];
  for (const entry of entries) {
    try {
      check(entry);
      readable.push({ entry, message: { queue, ...readHandle(config.receiptSecret, queue, entry.ReceiptHandle) } });
    } catch (err) {
      if (!(err instanceof SqsError)) throw err;
      failed.push(failedEntry(entry.Id, err));
    }
  }
  if (readable.length === 0) await queueRow(client, queue);
  return readable;
}

// A handle of a message already deleted, or received again since, deletes
// nothing and is no error, as in SQS.
async function deleteMessage({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  const { messageId, popReceipt } = await handleOf(config, client, queue, params.ReceiptHandle);
  try {
    await client.delete({ queue, messageId, popReceipt });
  } catch (err) {
    if (err.code !== 'QU404' && err.code !== 'QU409') throw err;
  }
  return {};
}

async function deleteMessageBatch({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  checkEntries(params.Entries);
  const Failed = [];
  const readable = await readableEntries(config, client, queue, params.Entries, Failed);
  if (readable.length > 0) await client.deleteBatch(readable.map((r) => r.message));
  return { Successful: readable.map((r) => ({ Id: r.entry.Id })), Failed };
}

// A handle whose message was deleted, moved, or received again since.
function notAvailable(handle) {
  return new SqsError('InvalidParameterValue', `Value ${String(handle).slice(0, 200)} for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.`);
}

// The leases of messages, each kept with its receipt handle (SQS leaves it
// valid): one call of queue_update_batch per visibility timeout.  changes:
// [{ message: { queue, messageId, popReceipt }, timeout }]; gives the
// status of each, in order.
async function changeVisibilities(client, changes) {
  const statuses = new Array(changes.length);
  const timeouts = new Set(changes.map((c) => c.timeout));
  for (const timeout of timeouts) {
    const chosen = changes.map((c, i) => [c, i]).filter(([c]) => c.timeout === timeout);
    const results = await client.updateBatch(chosen.map(([c]) => c.message), timeout, { keepPopReceipts: true });
    results.forEach((r, k) => { statuses[chosen[k][1]] = r.status; });
  }
  return statuses;
}

async function changeMessageVisibility({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  checkRange('VisibilityTimeout', params.VisibilityTimeout, 0, 43200);
  const handle = await handleOf(config, client, queue, params.ReceiptHandle);
  const [status] = await changeVisibilities(client, [{ message: { queue, ...handle }, timeout: params.VisibilityTimeout }]);
  if (status !== 'updated') throw notAvailable(params.ReceiptHandle);
  return {};
}

async function changeMessageVisibilityBatch({ params, config }, client) {
  const queue = queueName(config, params.QueueUrl);
  checkEntries(params.Entries);
  const Successful = [];
  const Failed = [];
  const readable = await readableEntries(config, client, queue, params.Entries, Failed, (entry) => {
    if (entry.VisibilityTimeout === undefined) throw new SqsError('MissingParameter', 'The request must contain the parameter VisibilityTimeout.');
    checkRange('VisibilityTimeout', entry.VisibilityTimeout, 0, 43200);
  });
  const statuses = await changeVisibilities(client, readable.map((r) => ({ message: r.message, timeout: r.entry.VisibilityTimeout })));
  readable.forEach(({ entry }, i) => {
    if (statuses[i] === 'updated') Successful.push({ Id: entry.Id });
    else Failed.push(failedEntry(entry.Id, notAvailable(entry.ReceiptHandle)));
  });
  return { Successful, Failed };
}

module.exports = {
  ChangeMessageVisibility: changeMessageVisibility,
  ChangeMessageVisibilityBatch: changeMessageVisibilityBatch,
  SendMessage: sendMessage,
  SendMessageBatch: sendMessageBatch,
  ReceiveMessage: receiveMessage,
  DeleteMessage: deleteMessage,
  DeleteMessageBatch: deleteMessageBatch,
};
