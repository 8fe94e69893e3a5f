'use strict';
// The consumer loop of docs/clients.md ("The worker"): a poll loop that
// fetches batches with a long poll and starts the handlers, and a lease
// loop that, every heartbeat, releases what failed and extends the leases
// about to run out.  What the handlers finished is deleted by the next
// fetch, in its call (queue_delete_and_get), or by the next heartbeat when
// no fetch comes first.
const { ArgumentTypeError, ArgumentRangeError, isConnectionError } = require('./errors');
const { connectClient } = require('./hosts');

const DEFAULTS = {
  batchSize: 16,
  visibilityTimeout: 30,
  extensionThreshold: 5,
  heartbeatInterval: 1,
  maxPollingInterval: 60,
  failureDelay: null,   // null: the queue's retry policy (queue_release)
};
const OPTIONS = [...Object.keys(DEFAULTS), 'newBatchThreshold', 'concurrency', 'logger'];
const BATCH_MAX = 1000;   // entries per batch call
const LONG_POLL_MAX = 20; // seconds: the longest wait of queue_get

const CANCEL_AGAIN = 1000; // ms: a cancel the server ignored is sent again after this

const now = () => performance.now();   // monotonic, in ms

// What a fetch returns when it deleted nothing and got nothing.
const NOTHING_FETCHED = Object.freeze({ deleted: [], messages: [] });

// An option that must be a number: a TypeError if it is not one, a
// RangeError if it is out of range, not finite or (for a count) not an
// integer, as Node's own functions do.
function number(o, key, { min, integer = false, above = false }) {
  const value = o[key];
  const want = `${integer ? 'an integer' : 'a number'} ${above ? 'above' : 'of at least'} ${min}`;
  if (typeof value !== 'number') throw new ArgumentTypeError(`Worker: ${key} must be ${want}, not ${typeof value}`);
  const ok = Number.isFinite(value) && (above ? value > min : value >= min) && (!integer || Number.isInteger(value));
  if (!ok) throw new ArgumentRangeError(`Worker: ${key} must be ${want}, not ${value}`);
  return value;
}

// A sleep that ring() ends early; a ring while nobody sleeps ends the next
// sleep at once, so that no ring is lost.
class Alarm {
  constructor() {
    this._rung = false;
    this._wake = null;
  }

  ring() {
    this._rung = true;
    if (this._wake) this._wake();
  }

  sleep(ms) {   // without ms, until the next ring
    if (this._rung) {
      this._rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = ms === undefined ? null : setTimeout(() => this._wake(), ms);
      this._wake = () => {
        clearTimeout(timer);
        this._wake = null;
        this._rung = false;
        resolve();
      };
    });
  }
}

class Worker {
  constructor(client, queue, handler, opts) {
    if (!client || typeof client._get !== 'function') throw new ArgumentTypeError('Worker: the first argument must be a Client of pg-lease-queue');
    if (typeof queue !== 'string') throw new ArgumentTypeError(`Worker: the queue must be a string, not ${typeof queue}`);
    if (typeof handler !== 'function') throw new ArgumentTypeError('Worker: the handler must be a function');
    if (opts !== undefined && opts !== null && (typeof opts !== 'object' || Array.isArray(opts))) {
      throw new ArgumentTypeError('Worker: the options must be an object');
    }
    const given = opts || {};
    for (const key of Object.keys(given)) {
      if (!OPTIONS.includes(key)) throw new ArgumentTypeError(`Worker: unknown option "${key}"`);
    }
    const o = { ...DEFAULTS };
    for (const [key, value] of Object.entries(given)) if (value !== undefined) o[key] = value;
    this._batchSize = number(o, 'batchSize', { min: 1, integer: true });
    if (this._batchSize > BATCH_MAX) throw new ArgumentRangeError(`Worker: batchSize must be at most ${BATCH_MAX}`);
    if (o.newBatchThreshold === undefined) o.newBatchThreshold = Math.floor(this._batchSize / 2);
    this._newBatchThreshold = number(o, 'newBatchThreshold', { min: 0, integer: true });
    if (o.concurrency === undefined) o.concurrency = this._batchSize + this._newBatchThreshold;
    this._concurrency = number(o, 'concurrency', { min: 1, integer: true });
    this._visibilityTimeout = number(o, 'visibilityTimeout', { min: 0, above: true });
    this._extensionThreshold = number(o, 'extensionThreshold', { min: 0 });
    if (this._extensionThreshold >= this._visibilityTimeout) {
      throw new ArgumentRangeError('Worker: extensionThreshold must be less than visibilityTimeout');
    }
    this._heartbeatInterval = number(o, 'heartbeatInterval', { min: 0, above: true });
    this._maxPollingInterval = number(o, 'maxPollingInterval', { min: 0, above: true });
    this._failureDelay = o.failureDelay === null ? null : number(o, 'failureDelay', { min: 0 });
    this._logger = o.logger === undefined ? console : o.logger;

    this._client = client;
    this._queue = queue;
    this._handler = handler;
    this.metrics = { fetched: 0, processed: 0, failed: 0, lostLeases: 0, extensions: 0, released: 0, errors: 0 };

    // message id -> entry { message, state, leaseEnd }; state: 'pending'
    // (handler not started), 'running', 'done' (to delete), 'deleting' (in
    // the fetch under way), 'failed' (to give back, with the queue's retry
    // policy or after failureDelay),
    // 'release' (to release at once, on stop); 'gone' once deleted,
    // released or lost, and no longer in the map
    this._held = new Map();
    this._pending = [];        // entries to start, in fetch order (those no longer pending are skipped)
    this._deleteAndGet = true; // false on an extension older than 1.7, which has no queue_delete_and_get
    this._release = true;      // false on an extension older than 1.8, which has no queue_release_batch
    this._running = 0;         // handlers running
    this._polling = null;      // the get under way that stop() can cancel (_startPolling)
    this._own = null;          // the connection of our own for the long poll (a client from a connection string)
    this._pollAlarm = new Alarm();
    this._leaseAlarm = new Alarm();
    this._stopping = false;
    this._pollDone = false;
    this._deadline = null;     // when stop(timeout) gives up on running handlers
    this._deadlineTimer = null;
    this._done = null;
  }

  // Runs until stop(); the promise resolves then (it never rejects).
  start() {
    if (this._done === null) {
      const poll = this._pollLoop()
        .catch((err) => this._crashed(err))
        .finally(() => {
          this._pollDone = true;
          this._leaseAlarm.ring();
        });
      const lease = this._leaseLoop().catch((err) => this._crashed(err));
      // the connection of the long poll is closed once the leases are done
      // with, not before: the goodbye to a server out of reach can take a while
      this._done = Promise.all([poll, lease]).then(() => this._closeOwn()).then(() => {
        clearTimeout(this._deadlineTimer);
      });
    }
    return this._done;
  }

  // Fetches no more, releases the messages not started, waits for the
  // running handlers (at most timeoutSeconds, then releases them too),
  // deletes or releases what they finished.
  stop(timeoutSeconds) {
    if (this._done === null) {   // never started
      this._stopping = true;
      return Promise.resolve();
    }
    if (!this._stopping) {
      this._stopping = true;
      if (timeoutSeconds !== undefined && timeoutSeconds !== null) {
        this._deadline = now() + timeoutSeconds * 1000;
        this._deadlineTimer = setTimeout(() => this._leaseAlarm.ring(), timeoutSeconds * 1000);
      }
      this._cancelPoll();
      this._pollAlarm.ring();
      this._leaseAlarm.ring();
    }
    return this._done;
  }

  _warn(message) {
    try {
      if (this._logger) this._logger.warn(`pg-lease-queue worker (${this._queue}): ${message}`);
    } catch (err) {
      // a logger that fails must not stop the worker
    }
  }

  _crashed(err) {
    this._warn(`stopped by an internal error: ${err && err.stack ? err.stack : err}`);
    this._stopping = true;
    this._cancelPoll();
    this._pollAlarm.ring();
  }

  // Messages not finished: what a new batch waits for.
  _inProcess() {
    let n = 0;
    for (const entry of this._held.values()) if (entry.state === 'pending' || entry.state === 'running') n += 1;
    return n;
  }

  async _pollLoop() {
    let pause = 0;
    while (!this._stopping) {
      if (this._inProcess() > this._newBatchThreshold) {
        await this._pollAlarm.sleep();
        continue;
      }
      let messages;
      const done = this._deleteAndGet ? this._finished() : [];
      try {
        const got = await this._fetch(done);
        this._settle(done, got.deleted, 'deleted', (entry) => this._processed(entry));
        messages = got.messages;
        pause = 0;
      } catch (err) {
        for (const entry of done) if (entry.state === 'deleting') entry.state = 'done';
        if (err.code === '42883' && this._deleteAndGet) {
          this._deleteAndGet = false;   // extension older than 1.7: plain gets from now on
          continue;
        }
        if (this._stopping) break;   // the stop cancelled the long poll
        this.metrics.errors += 1;
        pause = pause === 0 ? 1 : Math.min(pause * 2, this._maxPollingInterval);
        this._warn(`get failed (${err.message}); trying again in ${pause} s`);
        const end = now() + pause * 1000;
        while (!this._stopping && now() < end) await this._pollAlarm.sleep(end - now());
        continue;
      }
      this._take(messages);   // also when stopping: they are then released
    }
  }

  // The finished messages, which the next fetch deletes.
  _finished() {
    const done = [];
    for (const entry of this._held.values()) {
      // one whose lease is being extended waits: its receipt is changing
      if (entry.state === 'done' && !entry.extending && done.length < BATCH_MAX) {
        entry.state = 'deleting';
        done.push(entry);
      }
    }
    return done;
  }

  // A message handled and deleted.
  _processed(entry) {
    this._forget(entry);
    this.metrics.processed += 1;
  }

  // One get, waiting for messages, on a connection that only the long
  // poll uses, so that the lease calls are never held up behind it and
  // stop() can cancel the wait: from a connection string, a connection of
  // the worker's own; with a pool, one of the pool's for the time of the
  // get. A client with one connection shares it: the get then waits no
  // longer than a heartbeat, as the lease calls queue behind it.  It
  // deletes the messages done first, in the same call: { deleted, messages }.
  async _fetch(done) {
    const wait = Math.min(this._maxPollingInterval, LONG_POLL_MAX);
    const opts = { maxMessages: this._batchSize, visibilityTimeout: this._visibilityTimeout, wait };
    const client = this._client;
    const pool = client._pool;
    if (client._dsn === null && pool === null) {
      opts.wait = Math.min(wait, this._heartbeatInterval);
      return this._get(client._db, done, opts);
    }
    // the schema first: looked up on the connection the get takes, it
    // would need a second connection while holding the first
    await client._api();
    if (this._stopping && done.length === 0) return NOTHING_FETCHED;
    if (client._dsn !== null) return this._fetchOwn(done, opts);
    const connection = await pool.connect();
    if (this._stopping && done.length === 0) {   // stopped while the pool had no connection free
      connection.release();
      return NOTHING_FETCHED;
    }
    // a socket error is also an 'error' event of the connection, which
    // would end the process unheard; the get rejects with it anyway
    const ignore = () => {};
    connection.on('error', ignore);
    let broken = false;
    const polling = this._startPolling(connection, false);
    try {
      return await this._get(connection, done, opts);
    } catch (err) {
      broken = isConnectionError(err);
      throw err;
    } finally {
      this._endPolling(polling);
      // A cancelled connection is closed, not given back: a cancel that
      // arrived late would hit the next statement on it.
      connection.release(broken || polling.cancelled ? true : undefined);
      connection.removeListener('error', ignore);
    }
  }

  // queue_delete_and_get, or queue_get before 1.7, on connection.
  async _get(connection, done, opts) {
    const messages = done.map((entry) => entry.message);
    if (this._deleteAndGet) return this._client._deleteAndGet(connection, this._queue, messages, opts);
    return { deleted: [], messages: await this._client._get(connection, this._queue, opts) };
  }

  // The get on the worker's own connection, connected (again) if need be.
  async _fetchOwn(done, opts) {
    let connection = this._own;
    if (connection === null) {
      // on the first listed host that takes writes (hosts.js)
      connection = await connectClient(this._client._dsn, (candidate) => {
        // the server closing it while idle (a restart, pg_terminate_backend)
        // is an 'error' event, which would end the process unheard; the
        // next get connects again
        candidate.on('error', () => {});
        candidate.on('end', () => {
          if (this._own === candidate) this._own = null;
        });
      });
      this._own = connection;
      if (this._stopping && done.length === 0) return NOTHING_FETCHED;   // the end of the poll loop closes it
    }
    const polling = this._startPolling(connection, true);
    try {
      return await this._get(connection, done, opts);
    } catch (err) {
      if (isConnectionError(err)) this._dropOwn(connection);
      throw err;
    } finally {
      this._endPolling(polling);
      // a cancel that arrived late would hit the next get on it
      if (polling.cancelled) this._dropOwn(connection);
    }
  }

  _dropOwn(connection) {
    if (this._own === connection) this._own = null;
    connection.end().catch(() => {});
  }

  async _closeOwn() {
    const connection = this._own;
    if (connection === null) return;
    this._own = null;
    let timer;
    // the goodbye, for a second at most: a server out of reach does not answer
    await Promise.race([
      connection.end().catch(() => {}),
      new Promise((resolve) => { timer = setTimeout(resolve, 1000); }),
    ]);
    clearTimeout(timer);
  }

  // The get under way, for stop() to cancel; `ended` resolves when it has.
  _startPolling(connection, own) {
    const polling = { connection, own, cancelled: false, ended: null, finish: null };
    polling.ended = new Promise((resolve) => { polling.finish = resolve; });
    this._polling = polling;
    return polling;
  }

  _endPolling(polling) {
    if (this._polling === polling) this._polling = null;
    polling.finish();
  }

  // Cancels the waiting get with pg_cancel_backend on the client's pool.
  // A get that has claimed its messages is past the cancel: its rows come,
  // and the messages are released as the stop releases what has not
  // started. The cancel is sent again while the get goes on, as the server
  // ignores one that comes before it has read the get. A get on our own
  // connection that still goes on after stop(timeout)'s deadline (the
  // server out of reach) is given up: the connection is closed, and what
  // the get may have claimed comes back after its lease.
  _cancelPoll() {
    const polling = this._polling;
    if (polling === null || polling.cancelled) return;
    polling.cancelled = true;
    (async () => {
      let warned = false;
      while (this._polling === polling) {
        const pid = polling.connection.processID;
        if (pid) {
          try {
            await this._client._db.query('SELECT pg_catalog.pg_cancel_backend($1)', [pid]);
          } catch (err) {
            if (!warned) this._warn(`could not cancel the waiting get (${err.message})`);
            warned = true;
          }
        }
        let timer;
        await Promise.race([polling.ended, new Promise((resolve) => { timer = setTimeout(resolve, CANCEL_AGAIN); })]);
        clearTimeout(timer);
        if (this._polling === polling && polling.own && this._late()) {
          polling.connection.end().catch(() => {});
          return;
        }
      }
    })();
  }

  _take(messages) {
    // the leases began at the claim, just before the rows came; our own
    // clock, not the server's visible_at, so that a clock skew does not matter
    const leaseEnd = now() + this._visibilityTimeout * 1000;
    for (const message of messages) {
      // our own lease ran out and we got it again: the first one is lost
      const old = this._held.get(message.messageId);
      if (old) this._lose(old, 'delivered again');
      const entry = { message, state: 'pending', leaseEnd };
      this._held.set(message.messageId, entry);
      this._pending.push(entry);
    }
    this.metrics.fetched += messages.length;
    this._startHandlers();
  }

  _startHandlers() {
    while (!this._stopping && this._running < this._concurrency && this._pending.length > 0) {
      const entry = this._pending.shift();
      if (entry.state === 'pending') this._handle(entry);
    }
  }

  // Runs the handler of one message; never rejects.
  async _handle(entry) {
    this._running += 1;
    entry.state = 'running';
    // each handler in a turn of its own: between two plain handlers that
    // block, the timers of the heartbeat get their turn
    await new Promise((resolve) => setImmediate(resolve));
    let ok = true;
    if (entry.state === 'running') {
      try {
        await this._handler(entry.message);
      } catch (err) {
        ok = false;
        this.metrics.failed += 1;
        this._warn(`handler failed on message ${entry.message.messageId}: ${err && err.message ? err.message : err}`);
      }
    }
    this._running -= 1;
    // a lost lease, or a stop that gave up waiting, drops the outcome
    if (entry.state === 'running') entry.state = ok ? 'done' : 'failed';
    // a failure is released at once; what is done waits for the next fetch
    // (or heartbeat), which deletes it in its own call
    if (!ok || !this._deleteAndGet || this._stopping) this._leaseAlarm.ring();
    this._pollAlarm.ring();
    this._startHandlers();
  }

  _forget(entry) {
    if (this._held.get(entry.message.messageId) === entry) this._held.delete(entry.message.messageId);
    entry.state = 'gone';
  }

  _lose(entry, status) {
    this._forget(entry);
    this.metrics.lostLeases += 1;
    this._warn(`lost the lease of message ${entry.message.messageId} (${status}): another consumer may have it`);
    this._pollAlarm.ring();
  }

  async _leaseLoop() {
    for (;;) {
      // not before the get under way has ended: it would take back what we release
      if (this._stopping && this._pollDone) this._giveBack();
      const ok = await this._round();
      if (this._stopping && this._pollDone && this._held.size === 0) return;
      if (!ok && this._late()) {
        // what could not be sent is left to its lease, which runs out by itself
        this._warn(`stopped with ${this._held.size} messages left to their leases`);
        return;
      }
      if (ok) {
        await this._leaseAlarm.sleep(this._heartbeatInterval * 1000);
        continue;
      }
      // A failed round is tried again at the next heartbeat, in time for
      // the leases (not after a growing pause, which could outlast them).
      // A handler that finishes meanwhile does not hasten it; a stop and
      // its deadline do.
      const stopping = this._stopping;
      const end = now() + this._heartbeatInterval * 1000;
      while (now() < end && this._stopping === stopping && !this._late()) {
        await this._leaseAlarm.sleep(end - now());
      }
    }
  }

  // Whether stop(timeout)'s deadline has passed.
  _late() {
    return this._deadline !== null && now() >= this._deadline;
  }

  // On stop: the messages not started go back, and once the deadline has
  // passed, those still running too.
  _giveBack() {
    const late = this._late();
    for (const entry of this._held.values()) {
      if (entry.state === 'pending' || (late && entry.state === 'running')) entry.state = 'release';
    }
    this._pending = [];
  }

  // One heartbeat: deletes, releases, extensions. False if a call failed
  // (the rest is left for the next round).
  async _round() {
    // 'deleting' entries, in the fetch under way, are neither sent nor extended
    const by = { done: [], deleting: [], failed: [], release: [], extend: [] };
    const soon = now() + this._extensionThreshold * 1000;
    for (const entry of this._held.values()) {
      if (entry.state in by) by[entry.state].push(entry);
      else if (entry.leaseEnd < soon) by.extend.push(entry);
    }
    const client = this._client;
    // in this round's delete, not the next fetch's
    for (const entry of by.done) entry.state = 'deleting';
    try {
      await this._batch(by.done, (m) => client.deleteBatch(m), ['deleted'], (entry) => this._processed(entry));
      const released = (entry) => {
        this._forget(entry);
        this.metrics.released += 1;
      };
      // released counts what was given back unhandled (at stop), not failures
      await this._batch(by.failed, (m) => this._releaseFailed(m), ['released', 'poisoned', 'updated'],
        (entry) => this._forget(entry));
      await this._batch(by.release, (m) => client.updateBatch(m, 0), ['updated'], released);
      const sent = now();
      for (const entry of by.extend) entry.extending = true;
      try {
        await this._batch(by.extend, (m) => client.updateBatch(m, this._visibilityTimeout), ['updated'], (entry) => {
          entry.leaseEnd = sent + this._visibilityTimeout * 1000;
          this.metrics.extensions += 1;
        });
      } finally {
        for (const entry of by.extend) entry.extending = false;
      }
      return true;
    } catch (err) {
      for (const entry of by.done) if (entry.state === 'deleting') entry.state = 'done';
      this.metrics.errors += 1;
      this._warn(`lease call failed (${err.message}); trying again`);
      return false;
    }
  }

  // Failed messages go back: after failureDelay when given, else with the
  // queue's retry policy (an extension older than 1.8 has none: visible
  // again at once, until the worker is started again after the update).
  async _releaseFailed(messages) {
    const client = this._client;
    if (this._failureDelay !== null) return client.updateBatch(messages, this._failureDelay);
    if (this._release) {
      try {
        return await client.releaseBatch(messages);
      } catch (err) {
        if (err.code !== '42883') throw err;
        this._release = false;
      }
    }
    return client.updateBatch(messages, 0);
  }

  // One batch call over the entries (by 1000), and what each status means.
  async _batch(entries, call, success, onSuccess) {
    for (let i = 0; i < entries.length; i += BATCH_MAX) {
      const chunk = entries.slice(i, i + BATCH_MAX);
      this._settle(chunk, await call(chunk.map((entry) => entry.message)), success, onSuccess);
    }
  }

  // What a call said of each of entries, a result each in their order: a
  // status of success, or a lost lease.  Entries lost meanwhile are left.
  _settle(entries, results, success, onSuccess) {
    results.forEach((result, j) => {
      const entry = entries[j];
      if (entry.state === 'gone') return;
      if (success.includes(result.status)) onSuccess(entry);
      else this._lose(entry, result.status);
    });
  }
}

module.exports = { Worker };
