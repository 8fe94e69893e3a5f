'use strict';
// The whole suite in one process, one test after another: the recovery
// tests restart the server, which must not cut the others' connections.
// (npm test runs this file; each file also runs alone with node --test.)
require('./client.test');
require('./schema.test');
require('./worker.test');
require('./worker_cli.test');
require('./types.test');
require('./package.test');
require('./hosts.test');
require('./recovery.test');
