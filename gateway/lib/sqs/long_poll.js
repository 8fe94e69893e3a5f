'use strict';
// The wait of a ReceiveMessage with WaitTimeSeconds whose immediate get
// found nothing: the receive waits in a line, holding no connection, and
// a poller per line waits in the server on behalf of the line's waiters.
//
// +----------------------------------------------------------------------------+
// | Long polling without a connection per waiter.                              |
// |                                                                            |
// | Lines. A line per (queue, role) holds the receives waiting on that queue   |
// | as that role, in the order they came. A waiter leaves its line when it is  |
// | answered, when its wait runs out (an empty answer), or when its client     |
// | goes away.                                                                 |
// |                                                                            |
// | Pollers. A line with waiters gets a poller when a poller slot is free. The |
// | poller holds one pooled connection and runs waiting gets, each a queue_get |
// | with a wait in a transaction of its own as the line's role, for the line's |
// | head waiter: its MaxNumberOfMessages and VisibilityTimeout, and the wait   |
// | left to it, at most MAX_GET_WAIT_MS. What a get returns goes to the head   |
// | waiter. Messages beyond its MaxNumberOfMessages, or whose waiter went away |
// | before they were given, go to the next waiters (leased again for their     |
// | VisibilityTimeout when it differs); what no waiter takes is made visible   |
// | again at once. A line left with no waiters ends its poller, which gives    |
// | its connection back.                                                       |
// |                                                                            |
// | Connections. The pool holds at most maxConnections, shared by immediate    |
// | calls (sends, deletes, the first get of every receive) and pollers.        |
// | Pollers take at most maxConnections - KEPT_FOR_IMMEDIATE_CALLS of them (at |
// | least one), so that immediate calls find one free. After each get a poller |
// | gives its connection back when a call is waiting for one, and takes one    |
// | again behind that call: whatever maxConnections is, pollers keep an        |
// | immediate call waiting for a connection at most until their gets under way |
// | end.                                                                       |
// |                                                                            |
// | Turns. With more lines than poller slots, the lines without a poller wait  |
// | for a slot in the order they came. A poller that has served its line for   |
// | TURN_MS while such a line waits stops after its get under way and gives    |
// | its slot to the line that has waited longest; its own line, if it still    |
// | has waiters, waits behind the others. No get is longer than a turn, so the |
// | lines get a poller in turn, and every waiter is answered: with what its    |
// | line's poller gets for it, or empty when its wait runs out.                |
// |                                                                            |
// | Restarts. When a get loses its connection (PostgreSQL restarting), its     |
// | waiter waits on and the poller opens another connection, trying every      |
// | RECONNECT_MS while none can be opened. Waiting receives are answered once  |
// | the server is back, or empty when their wait runs out first; a receive    |
// | that comes while the server is down fails at its first get, before it     |
// | waits, with an error the SDKs retry.                                       |
// |                                                                            |
// | Each gateway process has its own lines; nothing here is shared between     |
// | processes.                                                                 |
// +----------------------------------------------------------------------------+
const { setTimeout: sleep } = require('node:timers/promises');
const { inRoleTransaction, releaseConnection, isBroken } = require('../database');

// how long a poller serves its line before it yields to a line without one
const TURN_MS = 1000;
// a poller checks whether its turn is over between gets
const MAX_GET_WAIT_MS = TURN_MS;
// connections pollers leave to the calls that do not wait
const KEPT_FOR_IMMEDIATE_CALLS = 2;
// how often a poller tries to connect while the server cannot be reached
const RECONNECT_MS = 250;

// One receive waiting in a line, until it has its answer.
class Waiter {
  constructor({ maxMessages, visibilityTimeout, waitSeconds, signal }, leave) {
    this.maxMessages = maxMessages;
    this.visibilityTimeout = visibilityTimeout;
    this.deadline = Date.now() + waitSeconds * 1000;
    this.done = false;
    this.answer = new Promise((resolve, reject) => {
      this._resolve = resolve;
      this._reject = reject;
    });
    this._leave = leave;
    this._signal = signal;
    this._timer = setTimeout(() => this.answerWith([]), waitSeconds * 1000);
    this._clientGone = () => this.answerWith([]);
    signal.addEventListener('abort', this._clientGone, { once: true });
  }

  // Gives the waiter its messages; false when it had its answer already.
  answerWith(messages) {
    if (!this._finish()) return false;
    this._resolve(messages);
    return true;
  }

  failWith(err) {
    if (this._finish()) this._reject(err);
  }

  _finish() {
    if (this.done) return false;
    this.done = true;
    clearTimeout(this._timer);
    this._signal.removeEventListener('abort', this._clientGone);
    this._leave(this);
    return true;
  }
}

// The receives waiting on one queue as one role, first come first.
class Line {
  constructor(key, queue, role) {
    this.key = key;
    this.queue = queue;
    this.role = role;
    this.waiters = [];
    this.polled = false;        // a poller serves it
    this.awaitingSlot = false;  // it waits for a poller slot
  }

  get head() {
    return this.waiters[0];
  }
}

class LongPolls {
  constructor({ pool, schema, maxConnections }) {
    this._pool = pool;
    this._schema = schema;
    this._pollerSlots = Math.max(1, maxConnections - KEPT_FOR_IMMEDIATE_CALLS);
    this._pollers = 0;
    this._lines = new Map();
    // lines with waiters and no poller, the longest waiting first
    this._linesAwaitingSlot = [];
    this._unreachable = false;
  }

  // Waits up to waitSeconds for messages of queue, got as role: resolves
  // with them, or with none when the wait runs out or the client goes
  // away (signal).
  wait({ queue, role, maxMessages, visibilityTimeout, waitSeconds, signal }) {
    if (signal.aborted) return Promise.resolve([]);
    const line = this._lineOf(queue, role);
    const waiter = new Waiter({ maxMessages, visibilityTimeout, waitSeconds, signal }, (w) => this._leave(line, w));
    line.waiters.push(waiter);
    this._serve(line);
    return waiter.answer;
  }

  _lineOf(queue, role) {
    // a role name may hold any character but NUL
    const key = `${role}\u0000${queue}`;
    let line = this._lines.get(key);
    if (line === undefined) {
      line = new Line(key, queue, role);
      this._lines.set(key, line);
    }
    return line;
  }

  _leave(line, waiter) {
    line.waiters.splice(line.waiters.indexOf(waiter), 1);
    if (line.waiters.length === 0 && !line.polled) this._forget(line);
  }

  _forget(line) {
    this._lines.delete(line.key);
    if (line.awaitingSlot) {
      line.awaitingSlot = false;
      this._linesAwaitingSlot.splice(this._linesAwaitingSlot.indexOf(line), 1);
    }
  }

  // Gives the line a poller, or a place among the lines awaiting one.
  _serve(line) {
    if (line.polled || line.awaitingSlot) return;
    if (this._pollers < this._pollerSlots && this._linesAwaitingSlot.length === 0) {
      this._startPoller(line);
    } else {
      line.awaitingSlot = true;
      this._linesAwaitingSlot.push(line);
    }
  }

  _startPoller(line) {
    this._pollers += 1;
    line.polled = true;
    this._poll(line)
      .catch((err) => console.error(`gateway: the poller of queue ${line.queue}: ${err && err.stack ? err.stack : err}`))
      .finally(() => this._pollerEnded(line));
  }

  _pollerEnded(line) {
    this._pollers -= 1;
    line.polled = false;
    if (line.waiters.length === 0) {
      this._forget(line);
    } else {
      line.awaitingSlot = true;
      this._linesAwaitingSlot.push(line);
    }
    while (this._pollers < this._pollerSlots && this._linesAwaitingSlot.length > 0) {
      const next = this._linesAwaitingSlot.shift();
      next.awaitingSlot = false;
      this._startPoller(next);
    }
  }

  _turnOver(turnEnds) {
    return Date.now() >= turnEnds && this._linesAwaitingSlot.length > 0;
  }

  // The poller of a line: gets for its head waiter, one after the other,
  // until the line has no waiters or its turn is over.
  async _poll(line) {
    const turnEnds = Date.now() + TURN_MS;
    let connection = null;
    try {
      while (line.waiters.length > 0 && !this._turnOver(turnEnds)) {
        connection = connection || await this._connect();
        if (connection === null) continue;
        await this._getForHead(line, connection);
        if (isBroken(connection) || this._pool.waitingCount > 0) {
          releaseConnection(connection);
          connection = null;
        }
      }
    } finally {
      if (connection !== null) releaseConnection(connection);
    }
  }

  // A pooled connection, or null after RECONNECT_MS when none could be
  // opened. The waiters wait on meanwhile; their timers answer them.
  async _connect() {
    try {
      const connection = await this._pool.connect();
      this._unreachable = false;
      return connection;
    } catch (err) {
      // said once per outage, not every RECONNECT_MS
      if (!this._unreachable) console.error(`gateway: a poller cannot connect to the database, trying again: ${err.message}`);
      this._unreachable = true;
      await sleep(RECONNECT_MS);
      return null;
    }
  }

  _inTransaction(connection, line, work) {
    return inRoleTransaction(connection, this._schema, line.role, work);
  }

  async _getForHead(line, connection) {
    const head = line.head;
    // its waiters may have left while the poller waited for a connection
    if (head === undefined) return;
    const waitMs = Math.min(head.deadline - Date.now(), MAX_GET_WAIT_MS);
    if (waitMs <= 0) {
      // its timer is late; a get without a wait would not be a wait for it
      head.answerWith([]);
      return;
    }
    let messages;
    try {
      messages = await this._inTransaction(connection, line, (client) => client.get(line.queue, {
        maxMessages: head.maxMessages, visibilityTimeout: head.visibilityTimeout, wait: waitMs / 1000,
      }));
    } catch (err) {
      // a lost connection (its rollback failed too): the head waits on for
      // a get on the poller's next one. Had the get committed unanswered,
      // its messages come back when their lease ends, as on any lost answer.
      if (isBroken(connection)) return;
      // a dropped queue, say; the next waiters' gets meet it in turn
      head.failWith(err);
      return;
    }
    await this._handOut(line, connection, messages, head.visibilityTimeout);
  }

  // Gives the messages to the line's waiters in order, each at most its
  // MaxNumberOfMessages, leased for its VisibilityTimeout (leasedFor: what
  // the get asked for). What no waiter takes is made visible again.
  async _handOut(line, connection, messages, leasedFor) {
    let left = messages;
    while (left.length > 0) {
      const waiter = line.head;
      if (waiter === undefined) {
        await this._makeVisible(line, connection, left);
        return;
      }
      const portion = left.slice(0, waiter.maxMessages);
      left = left.slice(waiter.maxMessages);
      const held = await this._leaseFor(line, connection, portion, leasedFor, waiter.visibilityTimeout);
      if (held.length === 0) continue;
      // the client went away while the leases were changed
      if (!waiter.answerWith(held)) await this._handOut(line, connection, held, waiter.visibilityTimeout);
    }
  }

  // The messages leased for wanted seconds (undefined: the queue's own
  // visibility timeout) rather than for leasedFor. A message whose lease
  // could not be changed is no longer held and is left out.
  async _leaseFor(line, connection, messages, leasedFor, wanted) {
    if (wanted === leasedFor) return messages;
    // updateBatch gives the messages their new receipts before the commit
    const receipts = messages.map((m) => m.popReceipt);
    try {
      return await this._inTransaction(connection, line, async (client) => {
        const seconds = wanted === undefined ? await queueVisibilityTimeout(client, line.queue) : wanted;
        const statuses = await client.updateBatch(messages, seconds);
        return messages.filter((_, i) => statuses[i].status === 'updated');
      });
    } catch (err) {
      // rolled back: the leases the get took still hold, with their receipts
      messages.forEach((m, i) => { m.popReceipt = receipts[i]; });
      console.error(`gateway: the leases of ${messages.length} message(s) of ${line.queue} could not be changed: ${err.message}`);
      return messages;
    }
  }

  // Messages no waiter takes are not left leased for a visibility timeout
  // nobody holds: they are made visible again at once (the dequeue count
  // the get gave them stays).
  async _makeVisible(line, connection, messages) {
    try {
      await this._inTransaction(connection, line, (client) => client.updateBatch(messages, 0));
    } catch (err) {
      console.error(`gateway: ${messages.length} message(s) of ${line.queue} nobody waits for any more could not be made visible again, ` +
        `they will be when their lease ends: ${err.message}`);
    }
  }
}

async function queueVisibilityTimeout(client, queue) {
  const row = (await client.listQueues()).find((q) => q.queue === queue);
  if (row === undefined) throw new Error(`the queue ${queue} is gone`);
  return row.visibilityTimeout;
}

module.exports = { LongPolls };
