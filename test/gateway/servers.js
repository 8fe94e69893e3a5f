'use strict';
/*-------------------------------------------------------------------------
 *
 * servers.js
 *		The servers the gateway's end-to-end tests start.
 *
 * startDatabase(dir): a throwaway PostgreSQL with the extension, on a
 * socket in dir only, and a role sqs_app allowed everything on every
 * queue.  startGateway(dir, dsn, extraConfig): the gateway, started by
 * gateway/run.sh with a configuration mapping the access key KEY (secret
 * SECRET) to that role, on an ephemeral port unless extraConfig names one.
 *
 *-------------------------------------------------------------------------
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const repo = path.resolve(__dirname, '../..');
const bindir = process.env.QUEUE_PG_BINDIR ||
  `/usr/lib/postgresql/${fs.readdirSync('/usr/lib/postgresql').sort((a, b) => a - b).pop()}/bin`;
const KEY = 'AKIDGATEWAYTEST';
const SECRET = 'gateway/test+secret/0123456789abcdefEXAMPLE';
// only a socket file in dir carries it, so tests running at once do not meet
const PORT = 55540;

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr || result.stdout}`);
  return result.stdout;
}

// Returns { data, dsn, psql(sql) -> its output, stop() }.
function startDatabase(dir) {
  const data = path.join(dir, 'data');
  run(`${bindir}/initdb`, ['-D', data, '-A', 'trust']);
  fs.appendFileSync(path.join(data, 'postgresql.conf'),
    `shared_preload_libraries = 'queue'\nlisten_addresses = ''\nunix_socket_directories = '${dir}'\nport = ${PORT}\n`);
  run(`${bindir}/pg_ctl`, ['-D', data, '-l', path.join(dir, 'server.log'), '-w', 'start']);
  const psql = (sql) => run(`${bindir}/psql`, ['-h', dir, '-p', String(PORT), '-d', 'postgres', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', sql]);
  psql('CREATE EXTENSION queue');
  psql('CREATE ROLE sqs_app NOLOGIN');
  for (const permission of ['send', 'process', 'read', 'manage']) psql(`SELECT queue_grant('*', 'sqs_app', '${permission}')`);
  return {
    data,
    dsn: `postgresql://${os.userInfo().username}@${encodeURIComponent(dir)}:${PORT}/postgres`,
    psql,
    stop: () => spawnSync(`${bindir}/pg_ctl`, ['-D', data, '-m', 'fast', '-w', 'stop']),
  };
}

// Resolves { child, url, port, stop(signal) } once the gateway listens;
// stop sends the signal (SIGTERM unless named) and resolves when the
// gateway has exited.
function startGateway(dir, dsn, extraConfig = {}) {
  const config = path.join(dir, 'gateway.json');
  fs.writeFileSync(config, JSON.stringify({
    database: dsn, host: '127.0.0.1', port: 0, receiptSecret: 'a test secret of at least thirty-two characters',
    credentials: [{ accessKeyId: KEY, secretAccessKey: SECRET, role: 'sqs_app' }],
    ...extraConfig,
  }));
  const child = spawn('bash', [path.join(repo, 'gateway/run.sh'), '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let errors = '';
  child.stderr.on('data', (chunk) => { errors += chunk; });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      const match = /listening on (http:\/\/\S+)/.exec(String(chunk));
      if (!match) return;
      const stop = (signal = 'SIGTERM') => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return exited;
      };
      resolve({ child, url: match[1], port: Number(new URL(match[1]).port), stop });
    });
    exited.then((code) => reject(new Error(`the gateway exited (${code}): ${errors}`)));
  });
}

module.exports = { KEY, SECRET, run, startDatabase, startGateway };
