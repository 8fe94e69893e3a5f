'use strict';
// The SQS gateway: an HTTP server that speaks the Amazon SQS wire
// protocols (JSON 1.0 and Query) to the queue extension, so that the AWS
// SDKs and the AWS CLI work against a PostgreSQL database (docs/sqs.md).
// It keeps no state of its own: several can run behind one balancer when
// they share the configuration's receiptSecret.
// Usage: node server.js --config FILE
const { readConfig } = require('./lib/config');
const { openPool, extensionSchema } = require('./lib/database');
const { makeServer } = require('./lib/sqs/handler');

function usage(message) {
  console.error(`gateway: ${message}\nusage: node gateway/server.js --config FILE`);
  process.exit(2);
}

function configFile(argv) {
  if (argv.length !== 2 || argv[0] !== '--config') usage('give the configuration file with --config FILE');
  return argv[1];
}

async function main() {
  const config = readConfig(configFile(process.argv.slice(2)));
  const pool = openPool(config);
  const schema = await extensionSchema(pool);
  // a client that sends its request slowly is cut off (config.requestTimeout)
  const server = makeServer(config, pool, schema);
  server.listen(config.port, config.host, () => {
    const { address, port } = server.address();
    console.log(`gateway: listening on http://${address.includes(':') ? `[${address}]` : address}:${port}`);
  });
  const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
