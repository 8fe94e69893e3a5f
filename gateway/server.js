'use strict';
// The gateway: an HTTP server that speaks the Amazon SQS wire protocols
// (JSON 1.0 and Query) to the queue extension, so that the AWS SDKs and
// the AWS CLI work against a PostgreSQL database (docs/sqs.md), when the
// configuration has credentials, and, on a port of its own when it names
// azurePort, one that speaks Azure Queue Storage's REST API to the Azure
// SDKs (docs/azure.md).
// It keeps no state of its own: several can run behind one balancer when
// they share the configuration's receiptSecret.
// Usage: node server.js --config FILE
const { readConfig } = require('./lib/config');
const { openPool, extensionSchema } = require('./lib/database');
const { makeServer } = require('./lib/sqs/handler');
const { makeAzureServer } = require('./lib/azure/handler');

function urlOf(server) {
  const { address, port } = server.address();
  return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

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
  const servers = [];
  if (config.credentials !== undefined) {
    const server = makeServer(config, pool, schema);
    servers.push(server);
    server.listen(config.port, config.host, () => {
      console.log(`gateway: listening on ${urlOf(server)}`);
    });
  }
  if (config.azurePort !== undefined) {
    const azure = makeAzureServer(config, pool, schema);
    servers.push(azure);
    azure.listen(config.azurePort, config.host, () => {
      for (const account of config.azureAccounts) console.log(`gateway: Azure Queue Storage on ${urlOf(azure)}/${account.name}`);
    });
  }
  let open = servers.length;
  const stop = () => servers.forEach((s) => s.close(() => {
    open -= 1;
    if (open === 0) pool.end().then(() => process.exit(0));
  }));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
