'use strict';
// How the client finds and names the extension's schema: nothing planted in
// the search_path runs, and a schema of any name works.
const test = require('node:test');
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const pg = require('pg');
const { Client } = require('..');
const { DSN, dsnWith, sql, freshQueue } = require('./helpers');

const suffix = () => crypto.randomBytes(3).toString('hex');

test('schema', async (t) => {
  await t.test('a function planted in public by another role never runs; one put stores one message', async () => {
    // quote_ident(name) beats pg_catalog.quote_ident(text) for a name;
    // make_interval(secs float8) loses to pg_catalog's only because
    // pg_catalog comes first on the search_path
    const q = await freshQueue(`node-planted-${suffix()}`);
    const role = `node_planter_${suffix()}`;
    const log = `public.${role}_calls`;
    await sql(`CREATE ROLE "${role}"`);
    const planter = new pg.Client({ connectionString: DSN });
    const client = new Client(DSN);
    try {
      await sql(`GRANT CREATE ON SCHEMA public TO "${role}"`);
      await planter.connect();
      await planter.query(`SET ROLE "${role}"`);
      await planter.query(`CREATE TABLE ${log} (function text, caller text)`);
      await planter.query(`GRANT INSERT ON ${log} TO PUBLIC`);
      // what the application's role would run: a note of the call, and a
      // second put pasted into the statement
      await planter.query(`
        CREATE FUNCTION public.quote_ident(name) RETURNS text LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO ${log} VALUES ('quote_ident', current_user);
          RETURN pg_catalog.format('queue.queue_put(%L, %L) AS planted, queue', '${q}', 'planted');
        END $$`);
      await planter.query(`
        CREATE FUNCTION public.make_interval(secs double precision) RETURNS interval LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO ${log} VALUES ('make_interval', current_user);
          RETURN pg_catalog.make_interval(secs => secs);
        END $$`);

      await client.put(q, 'one', { delay: 0, ttl: 60 });
      const stored = await sql('SELECT body FROM queue.queue_peek($1, 10)', [q]);
      assert.deepEqual(stored.map((r) => r.body), ['one'], 'one put stores one message');
      const [message] = await client.get(q, { maxMessages: 5, visibilityTimeout: 30 });
      await client.update(message, 10);
      await client.delete(message);
      assert.deepEqual(await sql(`SELECT function, caller FROM ${log}`), [], 'a planted function ran');
      const [{ total }] = await sql('SELECT total FROM queue.queue_stats($1)', [q]);
      assert.equal(Number(total), 0);
    } finally {
      await client.close();
      await planter.end().catch(() => {});
      await sql(`DROP TABLE IF EXISTS ${log}`);
      await sql(`DROP OWNED BY "${role}"`);
      await sql(`DROP ROLE "${role}"`);
    }
  });

  await t.test('a schema named with a %, a placeholder and a space works, found or given', async () => {
    const database = `node_odd_${suffix()}`;
    // (CREATE EXTENSION refuses quotes and $ in this extension's schema)
    const schema = 'Q 100% odd%s';
    await sql(`CREATE DATABASE "${database}"`);
    const other = dsnWith({ database });
    const clients = {};
    const setup = new pg.Client({ connectionString: other });
    setup.on('error', () => {});   // cut by the DROP DATABASE if the test fails
    try {
      await setup.connect();
      await setup.query(`CREATE SCHEMA ${pg.escapeIdentifier(schema)}`);
      await setup.query(`CREATE EXTENSION queue SCHEMA ${pg.escapeIdentifier(schema)}`);
      await setup.end();
      clients.found = new Client(other);
      clients.given = new Client(other, { schema });
      for (const [how, client] of Object.entries(clients)) {
        const q = `odd-${how}`;
        await client.createQueue(q, { visibilityTimeout: 30 });
        await client.put(q, 'one', { delay: 0 });
        await client.putBatch(q, ['two', 'three']);
        assert.ok((await client.listQueues()).some((row) => row.queue === q), `${how}: listQueues`);
        const got = await client.get(q, { maxMessages: 3, visibilityTimeout: 60 });
        assert.deepEqual(got.map((m) => m.body).sort(), ['one', 'three', 'two'], how);
        await client.update(got[0], 30);
        await client.delete(got[0]);
        assert.deepEqual((await client.deleteBatch(got.slice(1))).map((r) => r.status), ['deleted', 'deleted'], how);
        assert.equal(Number((await client.stats(q)).total), 0, how);
        await client.dropQueue(q);
      }
    } finally {
      await setup.end().catch(() => {});
      await Promise.all(Object.values(clients).map((c) => c.close()));
      await sql(`DROP DATABASE "${database}" WITH (FORCE)`);
    }
  });
});
