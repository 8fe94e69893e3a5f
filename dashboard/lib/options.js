'use strict';
// The command line of the dashboard: a DSN and a few flags.
const { parseArgs } = require('node:util');
const { hostName } = require('./host_check');

const USAGE = `Usage: bash dashboard/run.sh DSN [options]   (or: node dashboard/server.js DSN [options])
  DSN               a PostgreSQL connection string (postgresql://user@host/db)
  --port N          the HTTP port (default 8080; 0: any free port)
  --host ADDRESS    the address to listen on (default 127.0.0.1: this machine only)
  --allowed-host NAME
                    a host name the dashboard answers to besides localhost, 127.0.0.1,
                    [::1] and the --host address (a reverse proxy's, or this machine's
                    name or address with --host 0.0.0.0); repeat it or separate names
                    with commas. Requests for any other name get 421
  --refresh S       seconds between two samples and two refreshes of the page (default 2)
  --allow-writes    show the redrive button of poison queues and accept its POST
  --help            this text`;

class UsageError extends Error {}

function number(text, name, min, max) {
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new UsageError(`${name} must be a number from ${min} to ${max}, not "${text}"`);
  }
  return value;
}

// The options, or a UsageError naming what is wrong.
function parseOptions(argv) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string', default: '8080' },
        host: { type: 'string', default: '127.0.0.1' },
        'allowed-host': { type: 'string', multiple: true, default: [] },
        refresh: { type: 'string', default: '2' },
        'allow-writes': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (positionals.length !== 1) throw new UsageError('give one DSN');
  const allowedHosts = values['allowed-host'].flatMap((text) => text.split(',')).map((name) => name.trim());
  for (const name of allowedHosts) {
    if (hostName(name) === null) throw new UsageError(`--allowed-host takes a host name, not "${name}"`);
  }
  const port = number(values.port, '--port', 0, 65535);
  if (!Number.isInteger(port)) throw new UsageError('--port must be a whole number');
  return {
    help: false,
    dsn: positionals[0],
    port,
    host: values.host,
    allowedHosts,
    refreshMs: Math.round(number(values.refresh, '--refresh', 0.5, 60) * 1000),
    allowWrites: values['allow-writes'],
  };
}

module.exports = { parseOptions, UsageError, USAGE };
