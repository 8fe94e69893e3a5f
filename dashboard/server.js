'use strict';
// The queue dashboard (docs/dashboard.md): a web page of the queues a role
// may see, their counts and rates, and their messages. Started by
// dashboard/run.sh, which installs the dependencies first.
// Usage: node dashboard/server.js DSN [--port 8080] [--host 127.0.0.1] [--allowed-host NAME] [--refresh 2] [--allow-writes]
const http = require('node:http');
const pg = require('pg');
const { Client } = require('pg-lease-queue');
const { parseOptions, UsageError, USAGE } = require('./lib/options');
const { Sampler } = require('./lib/sampler');
const { makeHandler } = require('./lib/routes');

// The counters are kept this long for the charts.
const KEEP_MS = 15 * 60 * 1000;

function openPool(dsn) {
  const pool = new pg.Pool({
    connectionString: dsn,
    max: 4,
    application_name: 'queue-dashboard',   // the DSN's own application_name wins
    // a server that does not answer is reported, not waited on for ever
    connectionTimeoutMillis: 5000,
    statement_timeout: 30000,
  });
  // A connection the server closes while idle (a restart) is an 'error'
  // event of the pool, which would end the process; the pool connects again.
  pool.on('error', () => {});
  return pool;
}

function main() {
  let config;
  try {
    config = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`dashboard: ${err.message}\n${USAGE}`);
    process.exit(2);
  }
  if (config.help) {
    console.log(USAGE);
    return;
  }

  const pool = openPool(config.dsn);
  const client = new Client(pool);
  const sampler = new Sampler({ client, db: pool, refreshMs: config.refreshMs, keepMs: KEEP_MS });
  const server = http.createServer(makeHandler({ client, sampler, config }));

  server.on('error', (err) => {
    console.error(`dashboard: cannot listen on ${config.host}:${config.port}: ${err.message}`);
    process.exit(1);
  });
  server.listen(config.port, config.host, () => {
    const { port } = server.address();
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const mode = config.allowWrites ? 'writes allowed' : 'read-only';
    console.log(`queue dashboard on http://${host}:${port}/ (${mode}, refresh ${config.refreshMs / 1000} s)`);
    sampler.start();
  });

  const stop = () => {
    sampler.stop();
    server.close();
    server.closeAllConnections?.();   // Node 18.2 on: the page's keep-alive connections
    pool.end().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();
