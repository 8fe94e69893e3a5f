'use strict';
// What the calls return, made from the rows node-postgres gives: camelCase
// names, ids as strings (a bigint comes as a string), counts as numbers,
// durations in seconds.

class Message {
  constructor(queue, row) {
    this.queue = queue;
    this.messageId = row.message_id;
    this.body = row.body;
    this.headers = row.headers;
    this.dequeueCount = row.dequeue_count;
    this.insertedAt = row.inserted_at;
    this.expiresAt = row.expires_at;
    this.visibleAt = row.visible_at;
    this.popReceipt = row.pop_receipt;
    // not in the rows of extension versions before 1.3
    this.groupId = row.group_id === undefined ? null : row.group_id;
    this.priority = row.priority === undefined ? 0 : row.priority;
    // when first handed out; not in the rows of versions before 1.6
    this.firstDequeuedAt = row.first_dequeued_at === undefined ? null : row.first_dequeued_at;
  }

  // The body parsed as JSON (a body that was not a string was stored as JSON).
  json() {
    return JSON.parse(this.body);
  }
}

class Receipt {
  constructor(row) {
    this.messageId = row.message_id;
    this.popReceipt = row.pop_receipt;
    this.visibleAt = row.visible_at;
    this.insertedAt = row.inserted_at;
    this.expiresAt = row.expires_at;
    this.groupId = row.group_id === undefined ? null : row.group_id;
    this.priority = row.priority === undefined ? 0 : row.priority;
  }
}

// An interval as node-postgres parses it, in seconds, counted as PostgreSQL's
// extract(epoch ...) does: a month is 30 days, a year 365.25.
function seconds(interval) {
  if (interval === null || interval === undefined) return null;
  if (typeof interval !== 'object') return interval;   // a type parser of the caller's
  const n = (key) => interval[key] || 0;
  return n('years') * 31557600 + n('months') * 2592000 + n('days') * 86400 +
    n('hours') * 3600 + n('minutes') * 60 + n('seconds') + n('milliseconds') / 1000;
}

const INT8 = 20;
const INTERVAL = 1186;
const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const same = (value) => value;
const count = (value) => (value === null || value === undefined ? value : Number(value));

// The rows of queue_inspect, queue_stats and queue_list as plain objects,
// whatever columns the installed version has: names in camelCase,
// intervals in seconds, bigint counts as numbers (but ids stay strings).
function objects(result) {
  const columns = result.fields.map((field) => {
    let convert = same;
    if (field.dataTypeID === INTERVAL) convert = seconds;
    else if (field.dataTypeID === INT8 && !field.name.endsWith('_id')) convert = count;
    return [field.name, camel(field.name), convert];
  });
  return result.rows.map((row) => {
    const object = {};
    for (const [name, key, convert] of columns) object[key] = convert(row[name]);
    return object;
  });
}

module.exports = { Message, Receipt, objects, seconds };
