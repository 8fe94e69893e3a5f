'use strict';
// Samples of queue_stats, taken at every refresh interval and whenever a
// page asks for figures fresher than the last sample; callers at the same
// moment share one sample. The counters of the recent samples are kept for
// the rates (lib/rates.js). A sample that fails (the database is down)
// leaves the last good one in place and is reported in `failure`.
const { COUNTERS } = require('./rates');

// Who the dashboard is connected as, shown in the page's header.
const IDENTITY = 'SELECT current_user AS role, pg_catalog.current_database() AS database, ' +
  "(SELECT extversion FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'queue') AS version";

class Sampler {
  // client: a pgqueue Client; db: its pg.Pool, for the identity query.
  constructor({ client, db, refreshMs, keepMs }) {
    this.client = client;
    this.db = db;
    this.refreshMs = refreshMs;
    this.keepMs = keepMs;
    this.latest = null;    // { at, stats, queues, identity }: the last good sample
    this.history = [];     // { at, counters: Map(queue -> [puts, gets, deletes, poisoned]) }, oldest first
    this.failure = null;   // { message, since, at } while samples fail
    this._taking = null;
    this._timer = null;
  }

  start() {
    this.fresh(0);
    this._timer = setInterval(() => this.fresh(this.refreshMs / 2), this.refreshMs);
  }

  stop() {
    clearInterval(this._timer);
  }

  // Resolves once there is a sample (or a failure) at most maxAgeMs old;
  // never rejects.
  fresh(maxAgeMs) {
    if (this._taking !== null) return this._taking;
    const last = Math.max(this.latest ? this.latest.at : 0, this.failure ? this.failure.at : 0);
    if (Date.now() - last <= maxAgeMs) return Promise.resolve();
    this._taking = this._take().finally(() => { this._taking = null; });
    return this._taking;
  }

  async _take() {
    // the time the statements start: what their snapshot shows
    const at = Date.now();
    try {
      const [stats, queues, identity] = await Promise.all([
        this.client.stats(), this.client.listQueues(), this.db.query(IDENTITY),
      ]);
      this.latest = { at, stats, queues, identity: identity.rows[0] };
      this.failure = null;
      this._remember(at, stats);
    } catch (err) {
      const since = this.failure ? this.failure.since : at;
      this.failure = { message: err.message || String(err), since, at };
    }
  }

  // Keeps the counters, at most about two samples per refresh interval,
  // for keepMs (and one older sample: the base of the oldest rate).
  _remember(at, stats) {
    const last = this.history[this.history.length - 1];
    if (last && at - last.at < this.refreshMs / 2) return;
    const counters = new Map(stats.map((row) => [row.queue, COUNTERS.map((name) => row[name])]));
    this.history.push({ at, counters });
    while (this.history.length > 2 && this.history[1].at < at - this.keepMs) this.history.shift();
  }
}

module.exports = { Sampler };
