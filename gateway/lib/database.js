'use strict';
// The gateway's PostgreSQL connections: one pool, at most maxConnections.
// Each request runs in one transaction as the role its access key maps to
// (set_config('role', ...) is SET LOCAL ROLE with a parameter), so the
// extension's grants decide, and the role ends with the transaction.
const pg = require('pg');
const { Client } = require('pg-lease-queue');

function openPool(config) {
  const pool = new pg.Pool({ connectionString: config.database, max: config.maxConnections });
  // a pooled connection the server closed while idle: the pool drops it
  pool.on('error', () => {});
  // One the server closes while a request holds it (PostgreSQL restarting)
  // emits 'error' on itself, which would end the process without a
  // listener: the query under way fails instead, and the release drops the
  // connection, no longer queryable.
  pool.on('connect', (connection) => connection.on('error', () => {}));
  return pool;
}

// connections whose rollback failed: the pool must not hand them out again
const broken = new WeakSet();

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
    const result = await work(new Client(connection, { schema }));
    await connection.query('COMMIT');
    return result;
  } catch (err) {
    try {
      await connection.query('ROLLBACK');
    } catch {
      broken.add(connection);
    }
    throw err;
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

module.exports = { openPool, asRole, afterCommit, inRoleTransaction, releaseConnection, isBroken, extensionSchema };
