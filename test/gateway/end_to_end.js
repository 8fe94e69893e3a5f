'use strict';
// What the end-to-end tests of the gateway share: a throwaway PostgreSQL
// with the extension, on a socket in a directory of its own, and the
// gateway started on it by gateway/run.sh with an access key (and, with
// azurePort, an Azure account) mapped to a role allowed everything on
// every queue.
const fs = require('node:fs');
const { randomBytes } = require('node:crypto');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawn, spawnSync } = require('node:child_process');
const { setTimeout: sleep } = require('node:timers/promises');

const repo = path.resolve(__dirname, '../..');
const bindir = process.env.QUEUE_PG_BINDIR ||
  `/usr/lib/postgresql/${fs.readdirSync('/usr/lib/postgresql').sort((a, b) => a - b).pop()}/bin`;
const KEY = 'AKIDGATEWAYTEST';
const SECRET = 'gateway/test+secret/0123456789abcdefEXAMPLE';
// an Azure storage account, its key made for this run
const AZURE_ACCOUNT = 'gatewaytest';
const AZURE_KEY = randomBytes(64).toString('base64');
// what the gateway's connections are named in pg_stat_activity
const APPLICATION_NAME = 'queue-gateway-test';

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

// A server on a socket in dir only, on port, the extension created, and a
// role the access key maps to, allowed everything on every queue. stop()
// stops it and removes dir; pgCtl('restart' | 'stop' | 'start') runs
// pg_ctl on it (fast mode) without blocking the test's event loop, and
// resolves once it is done.
function startDatabase(dir, port) {
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'server.log');
  run(`${bindir}/initdb`, ['-D', data, '-A', 'trust']);
  fs.appendFileSync(path.join(data, 'postgresql.conf'),
    `shared_preload_libraries = 'queue'\nlisten_addresses = ''\nunix_socket_directories = '${dir}'\nport = ${port}\n`);
  run(`${bindir}/pg_ctl`, ['-D', data, '-l', log, '-w', 'start']);
  const psqlArgs = ['-h', dir, '-p', String(port), '-d', 'postgres', '-X', '-q', '-v', 'ON_ERROR_STOP=1'];
  const psql = (sql) => run(`${bindir}/psql`, [...psqlArgs, '-At', '-c', sql]);
  psql('CREATE EXTENSION queue');
  psql('CREATE ROLE sqs_app NOLOGIN');
  for (const permission of ['send', 'process', 'read', 'manage']) psql(`SELECT queue_grant('*', 'sqs_app', '${permission}')`);
  return {
    data,
    dsn: `postgresql://${os.userInfo().username}@${encodeURIComponent(dir)}:${port}/postgres?application_name=${APPLICATION_NAME}`,
    psql,
    psqlArgs,
    // -l: a server started without it would hold pg_ctl's output open
    pgCtl: (action) => new Promise((resolve, reject) => {
      const mode = action === 'start' ? [] : ['-m', 'fast'];
      execFile(`${bindir}/pg_ctl`, ['-D', data, '-l', log, ...mode, '-w', action], (err, stdout, stderr) => {
        if (err) reject(new Error(`pg_ctl ${action}: ${stderr || stdout || err.message}`));
        else resolve();
      });
    }),
    stop: () => {
      spawnSync(`${bindir}/pg_ctl`, ['-D', data, '-m', 'fast', '-w', 'stop']);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The gateway on an ephemeral port (unless settings name one), with the
// settings given beside the defaults; resolves with { child, url, port,
// stop, errors } once it listens (without url and port when settings make
// credentials undefined: the Azure side alone).  With azurePort in
// settings, the test account is configured too, and it resolves once both
// sides listen, with azureUrl (http://127.0.0.1:PORT/ACCOUNT) and
// azureConnectionString.
function startGateway(dir, dsn, settings = {}) {
  const config = path.join(dir, 'gateway.json');
  const written = {
    database: dsn, host: '127.0.0.1', port: 0, receiptSecret: 'a test secret of at least thirty-two characters',
    credentials: [{ accessKeyId: KEY, secretAccessKey: SECRET, role: 'sqs_app' }],
    ...(settings.azurePort === undefined ? {} : { azureAccounts: [{ name: AZURE_ACCOUNT, key: AZURE_KEY, role: 'sqs_app' }] }),
    ...settings,
  };
  // settings with credentials undefined: the Azure side alone
  const sqs = written.credentials !== undefined;
  fs.writeFileSync(config, JSON.stringify(written));
  const child = spawn('bash', [path.join(repo, 'gateway/run.sh'), '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let errors = '';
  child.stderr.on('data', (chunk) => { errors += chunk; });
  // stop(signal): sends it (SIGTERM unless named), resolves once the gateway exited
  const stop = (signal = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      const azure = /Azure Queue Storage on (http:\/\/\S+)/.exec(out);
      if ((sqs && !match) || (settings.azurePort !== undefined && !azure)) return;
      const gateway = { child, stop, errors: () => errors };
      if (match) {
        gateway.url = match[1];
        gateway.port = Number(new URL(match[1]).port);
      }
      if (azure) {
        gateway.azureUrl = azure[1];
        gateway.azureConnectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURE_ACCOUNT};AccountKey=${AZURE_KEY};QueueEndpoint=${azure[1]};`;
      }
      resolve(gateway);
    });
    exited.then((code) => reject(new Error(`the gateway exited (${code}): ${errors}`)));
  });
}

// Resolves once a get of the gateway sleeps in the server (a long poll's
// poller waits there), so that what follows happens while it waits.
async function getSleeping(database) {
  for (let i = 0; i < 400; i++) {
    const sleeping = database.psql('SELECT count(*) FROM pg_catalog.pg_stat_activity ' +
      `WHERE application_name = '${APPLICATION_NAME}' AND wait_event_type = 'Extension'`);
    if (Number(sleeping) > 0) return;
    await sleep(25);
  }
  throw new Error('no get of the gateway slept in the server');
}

// Counts the gateway's connections several times a second through one
// psql session (\watch); stop() ends it and gives the counts seen.
function sampleGatewayConnections(database) {
  const sql = `SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE application_name = '${APPLICATION_NAME}'`;
  const child = spawn(`${bindir}/psql`, [...database.psqlArgs, '-At'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let errors = '';
  child.stdout.on('data', (chunk) => { out += chunk; });
  child.stderr.on('data', (chunk) => { errors += chunk; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  // \watch runs the query buffer, which a -c of its own would leave empty
  child.stdin.end(`${sql} \\watch 0.1\n`);
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      const counts = out.split('\n').filter((l) => /^[0-9]+$/.test(l)).map(Number);
      if (counts.length === 0) throw new Error(`psql sampled nothing: ${errors}`);
      return counts;
    },
  };
}

// A queue's counts and counters, read with queue_stats.
function queueStats(database, queue) {
  const line = database.psql(`SELECT visible, in_flight, delayed, puts, gets, deletes FROM queue_stats('${queue}')`).trim();
  const [visible, inFlight, delayed, puts, gets, deletes] = line.split('|').map(Number);
  return { visible, inFlight, delayed, puts, gets, deletes };
}

// The same as text for a test's message, or why they cannot be read.
function describeQueue(database, queue) {
  try {
    return JSON.stringify(queueStats(database, queue));
  } catch (err) {
    return err.message.trim();
  }
}

module.exports = {
  KEY, SECRET, AZURE_ACCOUNT, AZURE_KEY, run, queueStats, describeQueue, startDatabase, startGateway, getSleeping, sampleGatewayConnections,
};
