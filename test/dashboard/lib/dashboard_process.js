'use strict';
// A dashboard started as a person starts it: bash dashboard/run.sh DSN
// --port 0 ..., its address read from the line it prints. Its output goes
// to a log file; its process id to WORK/pids, so that run.sh stops it even
// if this test dies.
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const START_SECONDS = 60;   // run.sh may install the dependencies first

function startDashboard({ dir, dsn, args, name, work }) {
  const log = fs.createWriteStream(path.join(work, `dashboard-${name}.log`));
  // run.sh ends in exec node: the pid is the dashboard's
  const child = spawn('bash', [path.join(dir, 'run.sh'), dsn, '--port', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  fs.appendFileSync(path.join(work, 'pids'), `${child.pid}\n`);
  child.stderr.pipe(log);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`dashboard ${name}: no address within ${START_SECONDS} s: ${output}`)),
      START_SECONDS * 1000);
    child.stdout.on('data', (chunk) => {
      log.write(chunk);
      output += chunk;
      const match = /http:\/\/\S+\//.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[0], name, stop: () => stop(child) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`dashboard ${name} exited with ${code}: ${output}`));
    });
  });
}

// SIGTERM, and SIGKILL if it is still there after 5 s.
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

module.exports = { startDashboard };
