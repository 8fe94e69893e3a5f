'use strict';
// The client: one method per SQL function of the extension
// (docs/clients.md, "The client"). Every statement is static text with
// parameters; the only thing put into the text is the extension's schema,
// read from the catalog and quoted by pg (escapeIdentifier). Every function
// and operator is named with its schema (the extension's, or pg_catalog),
// so that nothing a role put in the search_path (a quote_ident(name) in
// public, say) runs.
const { createHash } = require('node:crypto');
const pg = require('pg');
const { QueueError, ArgumentTypeError, ArgumentRangeError, translate } = require('./errors');
const { openPool } = require('./hosts');
const { Message, Receipt, objects } = require('./rows');

const FIND_SCHEMA =
  'SELECT n.nspname FROM pg_catalog.pg_extension e ' +
  'JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace ' +
  "WHERE e.extname OPERATOR(pg_catalog.=) 'queue'";

// s: the quoted schema
const SQL = {
  put: (s) => `SELECT * FROM ${s}.queue_put($1, $2, coalesce(pg_catalog.make_interval(secs => $3::float8), '0'), pg_catalog.make_interval(secs => $4::float8), $5::jsonb, $6, $7, coalesce($8::int, 0))`,
  putBatch: (s) => `SELECT * FROM ${s}.queue_put_batch($1, $2::text[], coalesce(pg_catalog.make_interval(secs => $3::float8), '0'), pg_catalog.make_interval(secs => $4::float8), $5::jsonb[], $6::text[], $7::text[], $8::int[])`,
  // without visibility_timeout: the queue's delay (from 1.6 on; 0 before)
  putQueueDelay: (s) => `SELECT * FROM ${s}.queue_put(queue => $1, body => $2, ttl => pg_catalog.make_interval(secs => $3::float8), headers => $4::jsonb, group_id => $5, deduplication_id => $6, priority => coalesce($7::int, 0))`,
  putBatchQueueDelay: (s) => `SELECT * FROM ${s}.queue_put_batch(queue => $1, bodies => $2::text[], ttl => pg_catalog.make_interval(secs => $3::float8), headers => $4::jsonb[], group_ids => $5::text[], deduplication_ids => $6::text[], priorities => $7::int[])`,
  get: (s) => `SELECT * FROM ${s}.queue_get($1, coalesce($2::int, 1), pg_catalog.make_interval(secs => $3::float8), coalesce(pg_catalog.make_interval(secs => $4::float8), '0'), coalesce($5::bool, false))`,
  update: (s) => `SELECT * FROM ${s}.queue_update($1, $2::bigint, $3::uuid, pg_catalog.make_interval(secs => $4::float8), $5, $6::jsonb)`,
  delete: (s) => `SELECT ${s}.queue_delete($1, $2::bigint, $3::uuid)`,
  deleteBatch: (s) => `SELECT * FROM ${s}.queue_delete_batch($1, $2::bigint[], $3::uuid[])`,
  // extension 1.7 on
  // the rows of the deletes that went well stay on the server: the others
  // say by their place (ordinality) which entry they answer
  deleteAndGet: (s) => `SELECT * FROM ${s}.queue_delete_and_get($1, $2::bigint[], $3::uuid[], coalesce($4::int, 1), pg_catalog.make_interval(secs => $5::float8), coalesce(pg_catalog.make_interval(secs => $6::float8), '0'), coalesce($7::bool, false)) WITH ORDINALITY AS r WHERE r.status OPERATOR(pg_catalog.<>) 'deleted'`,
  updateBatch: (s) => `SELECT * FROM ${s}.queue_update_batch($1, $2::bigint[], $3::uuid[], pg_catalog.make_interval(secs => $4::float8))`,
  updateBatchKeep: (s) => `SELECT * FROM ${s}.queue_update_batch($1, $2::bigint[], $3::uuid[], pg_catalog.make_interval(secs => $4::float8), true)`,
  peek: (s) => `SELECT * FROM ${s}.queue_peek($1, coalesce($2::int, 1))`,
  inspect: (s) => `SELECT * FROM ${s}.queue_inspect($1, coalesce($2::int, 100))`,
  // extension 1.4 on: only the messages after that id (keyset paging)
  inspectAfter: (s) => `SELECT * FROM ${s}.queue_inspect($1, coalesce($2::int, 100), $3::bigint)`,
  stats: (s) => `SELECT * FROM ${s}.queue_stats($1)`,
  list: (s) => `SELECT * FROM ${s}.queue_list()`,
  drop: (s) => `SELECT ${s}.queue_drop($1)`,
  clear: (s) => `SELECT ${s}.queue_clear($1) AS n`,
  redrive: (s) => `SELECT ${s}.queue_redrive($1, $2, $3::bigint) AS n`,
  // extension 1.8 on
  release: (s) => `SELECT * FROM ${s}.queue_release($1, $2::bigint, $3::uuid)`,
  releaseBatch: (s) => `SELECT * FROM ${s}.queue_release_batch($1, $2::bigint[], $3::uuid[])`,
  pause: (s) => `SELECT ${s}.queue_pause($1)`,
  resume: (s) => `SELECT ${s}.queue_resume($1)`,
  // extension 1.9 on
  replay: (s) => `SELECT ${s}.queue_replay($1, $2::timestamptz, $3::timestamptz, $4::bigint[], $5::bigint) AS n`,
  // extension 1.10 on: topics
  topicCreate: (s) => `SELECT ${s}.queue_topic_create($1)`,
  topicDrop: (s) => `SELECT ${s}.queue_topic_drop($1)`,
  subscribe: (s) => `SELECT ${s}.queue_subscribe($1, $2, $3::jsonb)`,
  unsubscribe: (s) => `SELECT ${s}.queue_unsubscribe($1, $2)`,
  // without a delay or a ttl (NULL): each queue's own
  publish: (s) => `SELECT * FROM ${s}.queue_publish($1, $2, $3::jsonb, pg_catalog.make_interval(secs => $4::float8), pg_catalog.make_interval(secs => $5::float8), $6, $7, coalesce($8::int, 0))`,
  topics: (s) => `SELECT * FROM ${s}.queue_topics()`,
  // and schedules
  schedule: (s) => `SELECT ${s}.queue_schedule($1, $2, $3, $4, $5::jsonb, coalesce($6::text, 'UTC'))`,
  unschedule: (s) => `SELECT ${s}.queue_unschedule($1)`,
  schedules: (s) => `SELECT * FROM ${s}.queue_schedules()`,
  cronNext: (s) => `SELECT ${s}.queue_cron_next($1, $2::timestamptz, coalesce($3::text, 'UTC')) AS next_at`,
};

// The name a statement is prepared under: one per text, the same in every
// connection and process (node-postgres keeps which names a connection has
// prepared, and refuses one name for two texts).
const statementNames = new Map();
function statementName(sql) {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `queue_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
    statementNames.set(sql, name);
  }
  return name;
}

// A connection whose prepared statement the server no longer runs takes a
// new name for that text: connection -> Map(text -> name).  That happens
// after ALTER EXTENSION UPDATE changed a function's result columns
// (0A000), or when the session lost its statements (26000: DISCARD ALL, a
// pooler that moved the client to another server connection).
const renamed = new WeakMap();
let renames = 0;

function nameOn(connection, sql) {
  const names = renamed.get(connection);
  return (names && names.get(sql)) || statementName(sql);
}

function rename(connection, sql) {
  let names = renamed.get(connection);
  if (names === undefined) renamed.set(connection, (names = new Map()));
  renames += 1;
  names.set(sql, `${statementName(sql)}_${renames}`);
}

// The server refused the prepared statement before running it.
function staleStatement(err) {
  return (err.code === '0A000' && /cached plan must not change result type/.test(err.message)) || err.code === '26000';
}

const isPool = (db) => typeof db.connect === 'function' && typeof db.totalCount === 'number';

// Whether a statement may be sent again at once on connection: not inside
// a transaction of the caller's, which the error has aborted.
function outsideTransaction(connection, ours) {
  if (typeof connection.getTransactionStatus === 'function') return connection.getTransactionStatus() === 'I';
  return ours;
}

// The settings of queue_create and queue_alter: option, SQL name, type,
// and whether queue_alter alone has it (from 1.6 on).
const SETTINGS = [
  ['visibilityTimeout', 'visibility_timeout', 'interval'],
  ['messageTtl', 'message_ttl', 'interval'],
  ['maxDequeueCount', 'max_dequeue_count', 'int'],
  ['maxMessageSize', 'max_message_size', 'int'],
  ['deduplicationWindow', 'deduplication_window', 'interval'],
  ['delay', 'delay', 'interval', 'alter'],
  ['poisonQueue', 'poison_queue', 'text', 'alter'],
  ['attributes', 'attributes', 'jsonb', 'alter'],
  ['tags', 'tags', 'jsonb', 'alter'],
  // the retry policy, from 1.8 on
  ['retryDelay', 'retry_delay', 'interval'],
  ['retryBackoff', 'retry_backoff', 'boolean'],
  ['retryDelayMax', 'retry_delay_max', 'interval'],
  // how long a message a consumer deleted is kept for replay, from 1.9 on
  ['retention', 'retention', 'interval'],
];

// The options object of a call, refused if it names an option the call
// does not have (a misspelt option would otherwise be ignored).
function options(given, allowed, call) {
  if (given === undefined || given === null) return {};
  if (typeof given !== 'object' || Array.isArray(given)) throw new ArgumentTypeError(`${call}: the options must be an object`);
  for (const key of Object.keys(given)) {
    if (!allowed.includes(key)) throw new ArgumentTypeError(`${call}: unknown option "${key}"`);
  }
  return given;
}

// A duration in seconds: a number, or null / undefined for none. The
// server checks its range.
function seconds(value, call, what) {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number') throw new ArgumentTypeError(`${call}: ${what} must be a number of seconds, not ${typeof value}`);
  return value;
}

// A point in time: a Date, or null / undefined for none.
function timestamp(value, call, what) {
  if (value === undefined || value === null) return null;
  if (!(value instanceof Date)) throw new ArgumentTypeError(`${call}: ${what} must be a Date`);
  return value;
}

const orNull = (value) => (value === undefined ? null : value);
const text = (body) => (typeof body === 'string' ? body : orNull(JSON.stringify(body)));
const json = (value) => (value === undefined || value === null ? null : JSON.stringify(value));

function array(value, call, what) {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new ArgumentTypeError(`${call}: ${what} must be an array`);
  return value;
}

// The results of a batch call, one row per message in their order: a
// message whose row's status is one of changed gets its receipt and
// visibleAt.
function refreshed(messages, rows, changed) {
  rows.forEach((row, i) => {
    if (changed.includes(row.status)) {
      messages[i].popReceipt = row.pop_receipt;
      messages[i].visibleAt = row.visible_at;
    }
  });
  return rows.map((row) => ({ messageId: row.message_id, status: row.status }));
}

// The queue of a batch of messages: they must all be of one queue.
function queueOf(messages, call) {
  const queue = messages[0].queue;
  if (messages.some((m) => m.queue !== queue)) throw new ArgumentRangeError(`${call}: the messages are of different queues`);
  return queue;
}

class Client {
  constructor(dsnOrConnection, opts) {
    const o = options(opts, ['schema', 'prepare'], 'Client');
    if (typeof dsnOrConnection === 'string') {
      // several hosts listed: each new connection finds the one that takes
      // writes (target_session_attrs=read-write), as libpq does (hosts.js)
      this._db = openPool(dsnOrConnection, { max: 4 });
      // A pooled connection the server closes while idle (a restart,
      // pg_terminate_backend) is an 'error' event of the pool, which would
      // end the process unheard; the pool drops it and connects again.
      this._db.on('error', () => {});
      this._owned = true;
      // for the workers, which open a connection of their own for the long poll
      this._dsn = dsnOrConnection;
    } else if (dsnOrConnection && typeof dsnOrConnection.query === 'function') {
      this._db = dsnOrConnection;
      this._owned = false;
      this._dsn = null;
    } else {
      throw new ArgumentTypeError('Client: give a connection string, a pg.Pool or a pg.Client');
    }
    this._schema = o.schema === undefined || o.schema === null ? null : pg.escapeIdentifier(String(o.schema));
    this._prepare = o.prepare === undefined || o.prepare === null ? true : Boolean(o.prepare);
    this._finding = null;   // the look-up of the schema under way
    this._closed = false;
  }

  // For the worker: the pool to take connections from, or null when the
  // client has one connection (a pg.Client, or a pool of one).
  get _pool() {
    const db = this._db;
    const max = isPool(db) && db.options && db.options.max !== undefined ? db.options.max : 10;
    return isPool(db) && max > 1 ? db : null;
  }

  // The quoted schema of the extension, looked up once; calls that come
  // while the look-up is under way wait for it rather than look too.
  async _api() {
    if (this._schema !== null) return this._schema;
    if (this._finding === null) {
      this._finding = this._findSchema().finally(() => { this._finding = null; });
    }
    return this._finding;
  }

  async _findSchema() {
    let rows;
    try {
      ({ rows } = await this._db.query(FIND_SCHEMA));
    } catch (err) {
      throw translate(err);
    }
    if (rows.length === 0) throw new QueueError('the queue extension is not installed in this database', '55000');
    this._schema = pg.escapeIdentifier(rows[0].nspname);
    return this._schema;
  }

  // Runs a statement of SQL on db (the client's connection by default).
  async _run(statement, params, db = this._db) {
    const sql = statement(await this._api());
    if (!this._prepare) {
      try {
        return await db.query(sql, params);
      } catch (err) {
        throw translate(err);
      }
    }
    let connection = db;
    if (isPool(db)) {
      try {
        connection = await db.connect();
      } catch (err) {
        throw translate(err);
      }
    }
    let failure;
    try {
      return await this._prepared(connection, sql, params, connection !== db);
    } catch (err) {
      failure = err;
      throw translate(err);
    } finally {
      // a connection that failed, not the statement, is not given back
      if (connection !== db) connection.release(failure !== undefined && !(failure instanceof pg.DatabaseError));
    }
  }

  // The statement sql, prepared on connection; sent once more under a new
  // name when the server refused the prepared one, which it does before
  // running it, unless that would be inside the caller's transaction.
  async _prepared(connection, sql, params, ours) {
    try {
      return await connection.query({ name: nameOn(connection, sql), text: sql, values: params });
    } catch (err) {
      if (!staleStatement(err)) throw err;
      rename(connection, sql);
      if (!outsideTransaction(connection, ours)) throw err;
      return connection.query({ name: nameOn(connection, sql), text: sql, values: params });
    }
  }

  async _rows(statement, params, db) {
    return (await this._run(statement, params, db)).rows;
  }

  // Without a delay, the message waits the queue's delay (0 unless set).
  async put(queue, body, opts) {
    const o = options(opts, ['delay', 'ttl', 'headers', 'groupId', 'deduplicationId', 'priority'], 'put');
    const rest = [seconds(o.ttl, 'put', 'ttl'), json(o.headers), orNull(o.groupId), orNull(o.deduplicationId), orNull(o.priority)];
    const rows = o.delay === undefined || o.delay === null
      ? await this._rows(SQL.putQueueDelay, [queue, text(body), ...rest])
      : await this._rows(SQL.put, [queue, text(body), seconds(o.delay, 'put', 'delay'), ...rest]);
    return new Receipt(rows[0]);
  }

  async putBatch(queue, bodies, opts) {
    const call = 'putBatch';
    const o = options(opts, ['delay', 'ttl', 'headers', 'groupIds', 'deduplicationIds', 'priorities'], call);
    const headers = array(o.headers, call, 'headers');
    const rest = [seconds(o.ttl, call, 'ttl'), headers && headers.map(json), array(o.groupIds, call, 'groupIds'),
      array(o.deduplicationIds, call, 'deduplicationIds'), array(o.priorities, call, 'priorities')];
    const texts = array(bodies, call, 'bodies').map(text);
    const rows = o.delay === undefined || o.delay === null
      ? await this._rows(SQL.putBatchQueueDelay, [queue, texts, ...rest])
      : await this._rows(SQL.putBatch, [queue, texts, seconds(o.delay, call, 'delay'), ...rest]);
    return rows.map((row) => new Receipt(row));
  }

  async get(queue, opts) {
    return this._get(this._db, queue, opts);
  }

  async _get(db, queue, opts) {
    const o = options(opts, ['maxMessages', 'visibilityTimeout', 'wait', 'releaseOnDisconnect'], 'get');
    const rows = await this._rows(SQL.get, [queue, orNull(o.maxMessages), seconds(o.visibilityTimeout, 'get', 'visibilityTimeout'),
      seconds(o.wait, 'get', 'wait'), orNull(o.releaseOnDisconnect)], db);
    return rows.map((row) => new Message(queue, row));
  }

  // Extends or releases the lease; the message gets its new receipt.
  async update(message, visibilityTimeout, opts) {
    const o = options(opts, ['body', 'headers'], 'update');
    const body = o.body === undefined || o.body === null ? null : text(o.body);
    const rows = await this._rows(SQL.update, [message.queue, message.messageId, message.popReceipt,
      seconds(visibilityTimeout, 'update', 'visibilityTimeout'), body, json(o.headers)]);
    message.popReceipt = rows[0].pop_receipt;
    message.visibleAt = rows[0].visible_at;
    if (body !== null) message.body = body;
    if (o.headers !== undefined && o.headers !== null) message.headers = o.headers;
    return message;
  }

  async delete(message) {
    await this._run(SQL.delete, [message.queue, message.messageId, message.popReceipt]);
  }

  // Gives the message back as failed: visible again after the queue's retry
  // delay for its delivery, or moved to the poison queue at the dequeue
  // limit (its receipt is then null).  Extension 1.8 on.
  async release(message) {
    const rows = await this._rows(SQL.release, [message.queue, message.messageId, message.popReceipt]);
    message.popReceipt = rows[0].pop_receipt;
    message.visibleAt = rows[0].visible_at;
    return message;
  }

  // Deletes the messages done with and gets the next ones, in one call and
  // one transaction: { deleted: [{ messageId, status }], messages }.  A call
  // with messages to delete does not wait: when none is visible it returns
  // at once, so that its deletes commit.  Extension 1.7 on.
  async deleteAndGet(queue, done, opts) {
    return this._deleteAndGet(this._db, queue, done, opts);
  }

  async _deleteAndGet(db, queue, done, opts) {
    const call = 'deleteAndGet';
    const o = options(opts, ['maxMessages', 'visibilityTimeout', 'wait', 'releaseOnDisconnect'], call);
    const messages = array(done, call, 'done') || [];
    if (messages.some((m) => m.queue !== queue)) throw new ArgumentRangeError(`${call}: a message to delete is not of queue ${queue}`);
    const rows = await this._rows(SQL.deleteAndGet, [queue, messages.map((m) => m.messageId), messages.map((m) => m.popReceipt),
      orNull(o.maxMessages), seconds(o.visibilityTimeout, call, 'visibilityTimeout'), seconds(o.wait, call, 'wait'),
      orNull(o.releaseOnDisconnect)], db);
    const failed = new Map();
    const result = { deleted: [], messages: [] };
    for (const row of rows) {
      if (row.status === 'claimed') result.messages.push(new Message(queue, row));
      else failed.set(Number(row.ordinality), row.status);
    }
    result.deleted = messages.map((m, i) => ({ messageId: m.messageId, status: failed.get(i + 1) || 'deleted' }));
    return result;
  }

  async deleteBatch(messages) {
    if (array(messages, 'deleteBatch', 'messages').length === 0) return [];
    const rows = await this._rows(SQL.deleteBatch, [queueOf(messages, 'deleteBatch'),
      messages.map((m) => m.messageId), messages.map((m) => m.popReceipt)]);
    return rows.map((row) => ({ messageId: row.message_id, status: row.status }));
  }

  // Extends or releases many leases; the messages updated get their new
  // receipts, or keep theirs with keepPopReceipts (from 1.6 on).
  async updateBatch(messages, visibilityTimeout, opts) {
    const o = options(opts, ['keepPopReceipts'], 'updateBatch');
    if (array(messages, 'updateBatch', 'messages').length === 0) return [];
    const rows = await this._rows(o.keepPopReceipts ? SQL.updateBatchKeep : SQL.updateBatch, [queueOf(messages, 'updateBatch'),
      messages.map((m) => m.messageId), messages.map((m) => m.popReceipt),
      seconds(visibilityTimeout, 'updateBatch', 'visibilityTimeout')]);
    return refreshed(messages, rows, ['updated']);
  }

  // Gives many messages back as failed: a status each, released, poisoned
  // or why not.  Extension 1.8 on.
  async releaseBatch(messages) {
    if (array(messages, 'releaseBatch', 'messages').length === 0) return [];
    const rows = await this._rows(SQL.releaseBatch, [queueOf(messages, 'releaseBatch'),
      messages.map((m) => m.messageId), messages.map((m) => m.popReceipt)]);
    return refreshed(messages, rows, ['released', 'poisoned']);
  }

  async peek(queue, opts) {
    const o = options(opts, ['maxMessages'], 'peek');
    const rows = await this._rows(SQL.peek, [queue, orNull(o.maxMessages)]);
    return rows.map((row) => new Message(queue, row));
  }

  // afterMessageId is passed only when given, so that inspect without it
  // still works on an extension older than 1.4.  From 1.9 on the rows
  // have deletedAt, and the messages a queue keeps after their delete are
  // among them, in state 'deleted'.
  async inspect(queue, opts) {
    const o = options(opts, ['maxMessages', 'afterMessageId'], 'inspect');
    if (o.afterMessageId === undefined || o.afterMessageId === null) {
      return objects(await this._run(SQL.inspect, [queue, orNull(o.maxMessages)]));
    }
    return objects(await this._run(SQL.inspectAfter, [queue, orNull(o.maxMessages), o.afterMessageId]));
  }

  // One queue's statistics, or without a queue a list of every queue's.
  async stats(queue) {
    const all = objects(await this._run(SQL.stats, [orNull(queue)]));
    return queue === undefined || queue === null ? all : all[0];
  }

  async listQueues() {
    return objects(await this._run(SQL.list, []));
  }

  async createQueue(queue, settings) {
    await this._settings('queue_create', 'createQueue', queue, settings, SETTINGS.filter((s) => !s[3]));
  }

  async alterQueue(queue, settings) {
    await this._settings('queue_alter', 'alterQueue', queue, settings, SETTINGS);
  }

  // queue_create or queue_alter with named arguments for the settings
  // given; the text is made of our fixed names only, the values are
  // parameters.
  async _settings(fn, call, queue, settings, known) {
    const o = options(settings, known.map(([option]) => option), call);
    const params = [queue];
    const args = ['$1'];
    for (const [option, name, type] of known) {
      if (o[option] === undefined) continue;
      params.push(type === 'interval' ? seconds(o[option], call, option) : type === 'jsonb' ? json(o[option]) : o[option]);
      const p = `$${params.length}`;
      args.push(type === 'interval' ? `${name} => pg_catalog.make_interval(secs => ${p}::float8)` : `${name} => ${p}::${type}`);
    }
    await this._run((s) => `SELECT ${s}.${fn}(${args.join(', ')})`, params);
  }

  // Pauses the queue: gets hand out nothing until resume.  Extension 1.8 on.
  async pause(queue) {
    await this._run(SQL.pause, [queue]);
  }

  // Resumes a paused queue; its waiting gets are served.
  async resume(queue) {
    await this._run(SQL.resume, [queue]);
  }

  async dropQueue(queue) {
    await this._run(SQL.drop, [queue]);
  }

  // Deletes every message of the queue; returns how many.
  async clear(queue) {
    return Number((await this._rows(SQL.clear, [queue]))[0].n);
  }

  // Moves a poison queue's messages back; returns how many.
  async redrive(source, opts) {
    const o = options(opts, ['destination', 'maxMessages'], 'redrive');
    return Number((await this._rows(SQL.redrive, [source, orNull(o.destination), orNull(o.maxMessages)]))[0].n);
  }

  // Puts messages the queue kept after their delete (its retention) back
  // into it, visible at once with their ids and a dequeue count of 0: those
  // deleted from since (included) until until (not), only messageIds if
  // given, the oldest deletion first, at most maxMessages; returns how
  // many.  Extension 1.9 on.
  async replay(queue, opts) {
    const call = 'replay';
    const o = options(opts, ['since', 'until', 'messageIds', 'maxMessages'], call);
    return Number((await this._rows(SQL.replay, [queue, timestamp(o.since, call, 'since'), timestamp(o.until, call, 'until'),
      array(o.messageIds, call, 'messageIds'), orNull(o.maxMessages)]))[0].n);
  }

  // Creates a topic; its name may be no queue's (42710).  Extension 1.10 on.
  async createTopic(topic) {
    await this._run(SQL.topicCreate, [topic]);
  }

  // Drops the topic, its subscriptions and its grants; the queues and the
  // messages it put stay.
  async dropTopic(topic) {
    await this._run(SQL.topicDrop, [topic]);
  }

  // Subscribes the queue to the topic: a publish puts a message into it
  // when the headers match filter, an SNS filter policy (left out or null:
  // every message).  Subscribing again replaces the filter; one that is no
  // valid policy is refused (22023) and changes nothing.
  async subscribe(topic, queue, filter) {
    await this._run(SQL.subscribe, [topic, queue, json(filter)]);
  }

  // Ends the subscription, if there is one.
  async unsubscribe(topic, queue) {
    await this._run(SQL.unsubscribe, [topic, queue]);
  }

  // Puts the message into every queue subscribed to the topic whose filter
  // the headers match, each as put would (without a delay or a ttl, that
  // queue's), in one statement: [{ queue, messageId }], in the order of
  // the queues' names, none if no filter matched.
  async publish(topic, body, opts) {
    const o = options(opts, ['headers', 'delay', 'ttl', 'groupId', 'deduplicationId', 'priority'], 'publish');
    const rows = await this._rows(SQL.publish, [topic, text(body), json(o.headers), seconds(o.delay, 'publish', 'delay'),
      seconds(o.ttl, 'publish', 'ttl'), orNull(o.groupId), orNull(o.deduplicationId), orNull(o.priority)]);
    return rows.map((row) => ({ queue: row.queue, messageId: row.message_id }));
  }

  // The topics the role holds some permission on: { topic, queue, filter }
  // per subscription, and one with queue null for a topic without any.
  async topics() {
    return objects(await this._run(SQL.topics, []));
  }

  // Puts body into queue each time the five-field cron expression is due
  // on the wall clock of timeZone (default UTC); the background worker puts
  // it.  Scheduling a name again replaces its schedule.  Extension 1.10 on.
  async schedule(name, queue, cron, body, opts) {
    const o = options(opts, ['headers', 'timeZone'], 'schedule');
    await this._run(SQL.schedule, [name, queue, cron, text(body), json(o.headers), orNull(o.timeZone)]);
  }

  // Removes the schedule (42704 if there is none); its messages stay.
  async unschedule(name) {
    await this._run(SQL.unschedule, [name]);
  }

  // The schedules of the queues the role may see: { schedule, queue, cron,
  // timeZone, nextAt, lastAt } (lastAt null before the first message).
  async schedules() {
    return objects(await this._run(SQL.schedules, []));
  }

  // The first time cron is due in timeZone (default UTC) strictly after
  // the Date after, as a schedule's message would be put.
  async cronNext(cron, after, timeZone) {
    const rows = await this._rows(SQL.cronNext, [cron, timestamp(after, 'cronNext', 'after'), orNull(timeZone)]);
    return rows[0].next_at;
  }

  // Closes the pool the client opened; a connection given to it stays open.
  async close() {
    if (this._owned && !this._closed) {
      this._closed = true;
      await this._db.end();
    }
  }
}

module.exports = { Client };
