'use strict';
// The actions on a queue's messages: Put Message, Get Messages, Peek
// Messages, Update Message, Delete Message and Clear Messages, each one
// call of the extension.  An Azure message id is the extension's
// message_id as a string, a pop receipt the extension's (a uuid).
const { AzureError, badParameter } = require('../errors');
const { integerParameter, requiredParameter } = require('../parameters');
const { readDocument, XmlSyntaxError } = require('../xml_reader');

const SEVEN_DAYS = 7 * 24 * 3600;
// a message's text, in bytes of UTF-8, at most (Azure's 64 KiB)
const MAX_MESSAGE_BYTES = 64 * 1024;
const NEVER = 'Fri, 31 Dec 9999 23:59:59 GMT';
const POP_RECEIPT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// a message_id: a positive bigint
const MESSAGE_ID = /^[1-9][0-9]{0,18}$/;
const MAX_BIGINT = 2n ** 63n - 1n;

// A time as Azure writes it (RFC 1123); a message that never expires,
// as Azure, on 31 December 9999.
function azureTime(date) {
  return date === null || date === undefined ? NEVER : new Date(date).toUTCString();
}

// The MessageText of a <QueueMessage> body; null when the body is empty
// or names none (an update that keeps the text).
function messageText(body) {
  if (body.length === 0) return null;
  let root;
  try {
    root = readDocument(body);
  } catch (err) {
    if (err instanceof XmlSyntaxError) throw new AzureError('InvalidXmlDocument', { details: { Reason: err.message } });
    throw err;
  }
  if (root.name !== 'QueueMessage') {
    throw new AzureError('InvalidXmlDocument', { details: { Reason: `the root element is <${root.name.slice(0, 64)}>, not <QueueMessage>` } });
  }
  const text = root.children.find((c) => c.name === 'MessageText');
  if (!text) return null;
  if (Buffer.byteLength(text.text, 'utf8') > MAX_MESSAGE_BYTES) {
    throw new AzureError('RequestBodyTooLarge', { details: { MaxLimit: String(MAX_MESSAGE_BYTES) } });
  }
  return text.text;
}

function popReceipt(query) {
  const receipt = requiredParameter(query, 'popreceipt');
  if (!POP_RECEIPT.test(receipt)) throw badParameter('InvalidQueryParameterValue', 'popreceipt', receipt);
  return receipt;
}

// The message id of the URL: one that is not a message_id names no message.
function messageId(id) {
  if (!MESSAGE_ID.test(id) || BigInt(id) > MAX_BIGINT) throw new AzureError('MessageNotFound');
  return id;
}

const messagesList = (items) => ['QueueMessagesList', items.map((item) => ['QueueMessage', item])];

// visibilitytimeout 0 to 7 days (0 by default: visible at once, whatever
// the queue's delay); messagettl -1 (never expires) or at least 1 second
// (7 days by default), and longer than the visibility timeout.
async function putMessage({ queue, query, body }, client) {
  const visibilityTimeout = integerParameter(query, 'visibilitytimeout', { min: 0, max: SEVEN_DAYS, fallback: 0 });
  const ttl = integerParameter(query, 'messagettl', { min: 1, max: 2 ** 31 - 1, fallback: SEVEN_DAYS, allowed: [-1] });
  if (ttl !== -1 && visibilityTimeout >= ttl) {
    throw badParameter('OutOfRangeQueryParameterValue', 'visibilitytimeout', String(visibilityTimeout),
      { Reason: 'The visibility timeout must be less than the message time-to-live.' });
  }
  const text = messageText(body);
  if (text === null) throw new AzureError('InvalidXmlDocument', { details: { Reason: 'no <MessageText> in the body' } });
  const receipt = await client.put(queue, text, { delay: visibilityTimeout, ttl });
  return {
    status: 201,
    document: messagesList([[
      ['MessageId', receipt.messageId],
      ['InsertionTime', azureTime(receipt.insertedAt)],
      ['ExpirationTime', azureTime(receipt.expiresAt)],
      ['PopReceipt', receipt.popReceipt],
      ['TimeNextVisible', azureTime(receipt.visibleAt)],
    ]]),
  };
}

// numofmessages 1 to 32 (1 by default); visibilitytimeout 1 second to 7
// days, the queue's visibility_timeout when not given (30 seconds on a
// queue the gateway made, Azure's default).
async function getMessages({ queue, query }, client) {
  const maxMessages = integerParameter(query, 'numofmessages', { min: 1, max: 32, fallback: 1 });
  const visibilityTimeout = integerParameter(query, 'visibilitytimeout', { min: 1, max: SEVEN_DAYS, fallback: null });
  const messages = await client.get(queue, { maxMessages, visibilityTimeout });
  return {
    status: 200,
    document: messagesList(messages.map((m) => [
      ['MessageId', m.messageId],
      ['InsertionTime', azureTime(m.insertedAt)],
      ['ExpirationTime', azureTime(m.expiresAt)],
      ['PopReceipt', m.popReceipt],
      ['TimeNextVisible', azureTime(m.visibleAt)],
      ['DequeueCount', m.dequeueCount],
      ['MessageText', m.body],
    ])),
  };
}

async function peekMessages({ queue, query }, client) {
  const maxMessages = integerParameter(query, 'numofmessages', { min: 1, max: 32, fallback: 1 });
  const messages = await client.peek(queue, { maxMessages });
  return {
    status: 200,
    document: messagesList(messages.map((m) => [
      ['MessageId', m.messageId],
      ['InsertionTime', azureTime(m.insertedAt)],
      ['ExpirationTime', azureTime(m.expiresAt)],
      ['DequeueCount', m.dequeueCount],
      ['MessageText', m.body],
    ])),
  };
}

// A new lease of visibilitytimeout (0 to 7 days, required) and, when the
// body has a MessageText, a new text; answers the new pop receipt.
async function updateMessage({ queue, messageId: id, query, body }, client) {
  const receipt = popReceipt(query);
  requiredParameter(query, 'visibilitytimeout');
  const visibilityTimeout = integerParameter(query, 'visibilitytimeout', { min: 0, max: SEVEN_DAYS });
  const text = messageText(body);
  const message = { queue, messageId: messageId(id), popReceipt: receipt };
  await client.update(message, visibilityTimeout, text === null ? {} : { body: text });
  return {
    status: 204,
    headers: { 'x-ms-popreceipt': message.popReceipt, 'x-ms-time-next-visible': azureTime(message.visibleAt) },
  };
}

async function deleteMessage({ queue, messageId: id, query }, client) {
  const receipt = popReceipt(query);
  await client.delete({ queue, messageId: messageId(id), popReceipt: receipt });
  return { status: 204 };
}

async function clearMessages({ queue }, client) {
  await client.clear(queue);
  return { status: 204 };
}

module.exports = { putMessage, getMessages, peekMessages, updateMessage, deleteMessage, clearMessages, azureTime, MAX_MESSAGE_BYTES };
