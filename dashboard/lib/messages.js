'use strict';
// One page of a queue's messages (queue_inspect), paged by message id: a
// page is the messages after the last id of the page before. The messages
// are copied field by field, so that nothing but these fields (never a
// pop receipt) can reach the page.

const PAGE_SIZE = 50;
// Characters of a body sent to the page; the rest is cut off.
const BODY_LIMIT = 2000;
// queue_inspect reads at most this many messages in one call.
const INSPECT_MAX = 10000;
// SQLSTATE undefined_function: queue_inspect without after_message_id (before 1.4).
const UNDEFINED_FUNCTION = '42883';

class BadRequest extends Error {}

// A timestamp for JSON: ISO text, or 'infinity' (a message waiting for
// its group's turn is visible at infinity; node-postgres gives Infinity).
function time(value) {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (value === Infinity) return 'infinity';
  if (value === -Infinity) return '-infinity';
  return String(value);
}

function shape(row) {
  const body = row.body === null || row.body === undefined ? '' : row.body;
  return {
    messageId: row.messageId,
    state: row.state,
    dequeueCount: row.dequeueCount,
    insertedAt: time(row.insertedAt),
    visibleAt: time(row.visibleAt),
    expiresAt: time(row.expiresAt),
    // extension 1.9 on: when a message kept after its delete (state 'deleted') was deleted
    deletedAt: time(row.deletedAt),
    sourceQueue: row.sourceQueue === undefined ? null : row.sourceQueue,
    groupId: row.groupId === undefined ? null : row.groupId,
    priority: row.priority === undefined ? 0 : row.priority,
    headers: row.headers === undefined ? null : row.headers,
    body: body.slice(0, BODY_LIMIT),
    bodyLength: body.length,
    bodyTruncated: body.length > BODY_LIMIT,
  };
}

// The id after which a page starts: null for the first page.
function afterId(text) {
  if (text === null || text === undefined || text === '') return null;
  if (!/^[0-9]{1,19}$/.test(text)) throw new BadRequest(`after must be a message id, not "${text}"`);
  return text;
}

// The messages after `after`, one more than a page to know whether
// another page follows. Before extension 1.4 queue_inspect has no
// after_message_id: the first INSPECT_MAX messages are read and paged here.
async function inspectAfter(client, queue, after) {
  try {
    return { rows: await client.inspect(queue, { maxMessages: PAGE_SIZE + 1, afterMessageId: after }), note: null };
  } catch (err) {
    if (err.code !== UNDEFINED_FUNCTION || after === null) throw err;
    const all = await client.inspect(queue, { maxMessages: INSPECT_MAX });
    const rows = all.filter((row) => BigInt(row.messageId) > BigInt(after)).slice(0, PAGE_SIZE + 1);
    return { rows, note: `the extension is older than 1.4: pages reach the first ${INSPECT_MAX} messages only` };
  }
}

// The JSON of GET /api/messages.
async function messagePage(client, queue, afterText) {
  if (!queue) throw new BadRequest('name a queue');
  const after = afterId(afterText);
  const { rows, note } = await inspectAfter(client, queue, after);
  const messages = rows.slice(0, PAGE_SIZE).map(shape);
  const more = rows.length > PAGE_SIZE;
  return {
    queue,
    after,
    pageSize: PAGE_SIZE,
    messages,
    nextAfter: more ? messages[messages.length - 1].messageId : null,
    note,
  };
}

module.exports = { messagePage, shape, time, BadRequest, PAGE_SIZE, BODY_LIMIT };
