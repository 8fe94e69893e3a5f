'use strict';
// The gateway's PostgreSQL connections: one pool, at most maxConnections.
// Each request runs as the role its access key maps to, so that the
// extension's grants decide: in one transaction with the role set for it
// alone (set_config('role', ..., true) is SET LOCAL ROLE), or, for work of
// one statement, as that statement on a connection whose session has the
// role (asRoleOneStatement).  The client prepares its statements, each
// parsed and planned once per connection.
const pg = require('pg');
const { Client, openPool: openHostsPool } = require('pg-lease-queue');

// A connection string that lists several servers gets, for each new
// connection, the first that takes writes (target_session_attrs=read-write).
function openPool(config) {
  const pool = openHostsPool(config.database, { max: config.maxConnections });
  // a pooled connection the server closed while idle: the pool drops it
  pool.on('error', () => {});
  // One the server closes while a request holds it (PostgreSQL restarting)
  // emits 'error' on itself, which would end the process without a
  // listener: the query under way fails instead, and the release drops the
  // connection, no longer queryable.
  pool.on('connect', (connection) => connection.on('error', () => {}));
  return pool;
}

// connections whose rollback failed, or with a prepared statement that
// went stale: the pool must not hand them out again
const broken = new WeakSet();

// A prepared SELECT * of a function whose columns an ALTER EXTENSION
// UPDATE changed fails so on every run: the connection is dropped, and the
// statement prepared again on the next.
function staleStatement(err) {
  return err.code === '0A000' && /cached plan must not change result type/.test(err.message);
}

const queueClient = (connection, schema) => new Client(connection, { schema, prepare: true });

function releaseConnection(connection) {
  connection.release(broken.has(connection));
}

function isBroken(connection) {
  return broken.has(connection);
}

// Runs work(client), client a queue Client on connection, in a transaction
// as role; commits what work did, or rolls back when it throws.  BEGIN
// and the role go in one round trip: a simple query of two statements,
// the role's name (from the configuration) quoted as a literal, since a
// simple query takes no parameters.
async function inRoleTransaction(connection, schema, role, work) {
  try {
    await connection.query(`BEGIN; SELECT pg_catalog.set_config('role', ${pg.escapeLiteral(role)}, true)`);
    const result = await work(queueClient(connection, schema));
    await connection.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await connection.query('ROLLBACK');
    } catch {
      broken.add(connection);
    }
    if (staleStatement(err)) broken.add(connection);
    throw err;
  }
}

// The role each connection's session was last given by
// asRoleOneStatement.  A transaction's SET LOCAL ROLE leaves it so after
// the transaction, and SET ROLE to any role the gateway's login may take
// does not depend on the role the session has.
const sessionRoles = new WeakMap();

// Whether a statement's error leaves its connection unusable: no answer
// from the server, the server ending the session (class 08, 57P01-03), or
// a stale prepared statement.
function lostConnection(err) {
  return !(err instanceof pg.DatabaseError) || /^(08|57P0[1-3])/.test(err.code) || staleStatement(err);
}

// Runs work(client) as role on a pooled connection, work giving one
// statement, which is its own transaction: one round trip where
// asRole's transaction takes three.  The role is set for the session
// first when the connection's is another.  A second statement of work's
// is a bug of the gateway's, refused before it runs apart from the first.
async function asRoleOneStatement(pool, schema, role, work) {
  const connection = await pool.connect();
  let lost = false;
  const query = async (...args) => {
    try {
      return await connection.query(...args);
    } catch (err) {
      lost = lostConnection(err);
      throw err;
    }
  };
  let used = false;
  const oneStatement = {
    async query(...args) {
      if (used) throw new Error('gateway: work of one statement ran a second');
      used = true;
      return query(...args);
    },
  };
  try {
    if (sessionRoles.get(connection) !== role) {
      await query('SELECT pg_catalog.set_config(\'role\', $1, false)', [role]);
      sessionRoles.set(connection, role);
    }
    return await work(queueClient(oneStatement, schema));
  } finally {
    connection.release(lost);
  }
}

// What work may return to asRole: more work, run once the transaction has
// committed and its connection is back in the pool (a long poll's wait).
class AfterCommit {
  constructor(work) {
    this.work = work;
  }
}

function afterCommit(work) {
  return new AfterCommit(work);
}

// Runs work(client) in a transaction as role on a pooled connection, then
// what work gave to afterCommit, if anything, without the connection.
async function asRole(pool, schema, role, work) {
  const connection = await pool.connect();
  let result;
  try {
    result = await inRoleTransaction(connection, schema, role, work);
  } finally {
    releaseConnection(connection);
  }
  return result instanceof AfterCommit ? result.work() : result;
}

// The schema the extension is installed in, looked up once at start.
async function extensionSchema(pool) {
  const { rows } = await pool.query(
    'SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ' +
    "ON n.oid OPERATOR(pg_catalog.=) e.extnamespace WHERE e.extname OPERATOR(pg_catalog.=) 'queue'");
  if (rows.length === 0) throw new Error('gateway: the queue extension is not installed in this database');
  return rows[0].nspname;
}

module.exports = { openPool, asRole, asRoleOneStatement, afterCommit, inRoleTransaction, releaseConnection, isBroken, extensionSchema };
