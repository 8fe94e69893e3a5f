'use strict';
// Connection strings that list several servers, as libpq reads them:
//   postgresql://app@db1:5432,db2:5432,db3:5432/app?target_session_attrs=read-write
// node-postgres connects to one host only. Here each new connection tries
// the listed hosts in turn, starting with the one that served last, and
// keeps the first that connects and, for target_session_attrs=read-write
// (or primary), can write: after a failover it finds the new primary.
// The rest of the string (user, password, database, other parameters) is
// node-postgres's to read, once per host; connect_timeout (seconds, per
// host, as libpq) is given to it as connectionTimeoutMillis, which it does
// not read from a string.
const { EventEmitter } = require('node:events');
const pg = require('pg');
const { isConnectionError } = require('./errors');

const SCHEME = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/s;
const ACCEPTED = ['any', 'read-write', 'primary'];

// The authority's hosts: "a:1,[::1]:2,b" -> ["a:1", "[::1]:2", "b"]
// (a comma is never inside brackets or a port).
function splitAuthority(authority) {
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at + 1);
  const hosts = authority.slice(at + 1).split(',');
  return { userinfo, hosts };
}

// hostsOf(dsn): { dsns, target, timeout } -- one connection string per
// listed host, in order, without target_session_attrs; the target it asked
// for; connect_timeout in milliseconds (0: none).
// A string that is not a postgres:// URI is given as it is.
function hostsOf(dsn) {
  const uri = SCHEME.exec(dsn);
  if (uri === null) return { dsns: [dsn], target: 'any', timeout: 0 };
  const [, scheme, authority, rest] = uri;
  const { userinfo, hosts } = splitAuthority(authority);
  const query = rest.indexOf('?');
  let tail = rest;
  let target = 'any';
  let timeout = 0;
  if (query >= 0) {
    // the parameters but target_session_attrs, left as they were written
    const kept = [];
    for (const param of rest.slice(query + 1).split('&')) {
      if (param.startsWith('target_session_attrs=')) {
        target = decodeURIComponent(param.slice('target_session_attrs='.length));
      } else {
        kept.push(param);
      }
      if (param.startsWith('connect_timeout=')) {
        const seconds = Number(param.slice('connect_timeout='.length));
        if (!Number.isInteger(seconds) || seconds < 0) throw new Error(`connect_timeout must be a number of seconds: ${param}`);
        // libpq takes less than 2 s as 2 s
        timeout = seconds === 0 ? 0 : Math.max(seconds, 2) * 1000;
      }
    }
    if (!ACCEPTED.includes(target)) {
      throw new Error(`target_session_attrs=${target} is not supported: use any, read-write or primary`);
    }
    tail = rest.slice(0, query) + (kept.length === 0 ? '' : `?${kept.join('&')}`);
  }
  if (hosts.length > 1 && hosts.some((host) => host === '')) {
    throw new Error('the connection string lists an empty host');
  }
  return { dsns: hosts.map((host) => scheme + userinfo + host + tail), target, timeout };
}

// Can this session write? libpq asks the same of each host it tries.
async function acceptable(connection, target) {
  if (target === 'any') return true;
  const sql = target === 'primary'
    ? 'SELECT NOT pg_catalog.pg_is_in_recovery() AS ok'
    : "SELECT pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'off' AS ok";
  const { rows } = await connection.query(sql);
  return rows[0].ok === true;
}

class NotAcceptable extends Error {
  constructor(dsn, target) {
    super(`the server of ${dsn.replace(/\/\/[^@/]*@/, '//')} does not accept ${target} sessions`);
    this.code = '08000';   // a connection exception: the client tries again later
  }
}

// Tries hosts.dsns from index start on (wrapping), with open(i) connecting
// to host i and close(connection) giving up a connection that is not
// acceptable; a connection known(connection) to be acceptable is not asked
// again. Gives [connection, i] of the first acceptable one, or throws the
// last error.
async function firstAcceptable(hosts, start, open, close, known = () => false) {
  let last = null;
  for (let k = 0; k < hosts.dsns.length; k += 1) {
    const i = (start + k) % hosts.dsns.length;
    let connection;
    try {
      connection = await open(i);
    } catch (err) {
      last = err;
      continue;
    }
    let ok;
    try {
      ok = known(connection) || await acceptable(connection, hosts.target);
    } catch (err) {
      close(connection);
      last = err;
      continue;
    }
    if (ok) return [connection, i];
    close(connection);
    last = new NotAcceptable(hosts.dsns[i], hosts.target);
  }
  throw last;
}

// The options of a pg.Pool of one host.
function poolOptions(dsn, hosts, options) {
  const one = { ...options, connectionString: dsn };
  if (hosts.timeout > 0 && one.connectionTimeoutMillis === undefined) one.connectionTimeoutMillis = hosts.timeout;
  return one;
}

// A pg.Pool over the listed hosts: what the client and the gateway use of
// a pg.Pool (connect, query, end, on, totalCount, waitingCount, options). A connection is
// checked when it is made; one to a server that stops accepting writes (a
// demoted primary) is ended by the server's restart, and the pool drops it.
class HostsPool extends EventEmitter {
  constructor(dsn, options = {}) {
    super();
    this._hosts = hostsOf(dsn);
    this.options = { ...options };
    this._pools = this._hosts.dsns.map((one) => {
      const pool = new pg.Pool(poolOptions(one, this._hosts, options));
      // an idle connection's error goes to whoever listens, and nowhere
      // when no one does (an 'error' without a listener would throw)
      pool.on('error', (err) => { if (this.listenerCount('error') > 0) this.emit('error', err); });
      pool.on('connect', (connection) => this.emit('connect', connection));
      return pool;
    });
    this._current = 0;
    this._checked = new WeakSet();
  }

  get totalCount() {
    return this._pools.reduce((sum, pool) => sum + pool.totalCount, 0);
  }

  get waitingCount() {
    return this._pools.reduce((sum, pool) => sum + pool.waitingCount, 0);
  }

  async connect() {
    // a connection checked once stays accepted until it breaks
    const [connection, i] = await firstAcceptable(this._hosts, this._current,
      (k) => this._pools[k].connect(), (c) => c.release(true), (c) => this._checked.has(c));
    this._checked.add(connection);
    this._current = i;
    return connection;
  }

  async query(text, params) {
    const connection = await this.connect();
    try {
      const result = await connection.query(text, params);
      connection.release();
      return result;
    } catch (err) {
      connection.release(isConnectionError(err) ? true : undefined);
      throw err;
    }
  }

  async end() {
    await Promise.all(this._pools.map((pool) => pool.end()));
  }
}

// connectClient(dsn, prepare): a connected pg.Client on the first
// acceptable listed host; prepare(client) runs on each client before it
// connects (to attach listeners).
async function connectClient(dsn, prepare = () => {}) {
  const hosts = hostsOf(dsn);
  const [connection] = await firstAcceptable(hosts, 0,
    async (i) => {
      const client = new pg.Client({ connectionString: hosts.dsns[i], connectionTimeoutMillis: hosts.timeout });
      prepare(client);
      try {
        await client.connect();
      } catch (err) {
        client.end().catch(() => {});
        throw err;
      }
      return client;
    },
    (client) => { client.end().catch(() => {}); });
  return connection;
}

// openPool(dsn, options): a pg.Pool for a string of one host, a HostsPool
// for one that lists several.
function openPool(dsn, options = {}) {
  const hosts = hostsOf(dsn);
  if (hosts.dsns.length === 1 && hosts.target === 'any') return new pg.Pool(poolOptions(dsn, hosts, options));
  return new HostsPool(dsn, options);
}

module.exports = { hostsOf, openPool, connectClient, HostsPool };
