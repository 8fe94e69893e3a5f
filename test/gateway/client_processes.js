'use strict';
// Running a client program (boto3 through Python, the AWS CLI) for a test:
// in a home folder of its own with nothing of the machine's AWS settings,
// one attempt per call, the access key given, killed after two minutes.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const CLIENT_TIMEOUT_MS = 120000;

function clientEnvironment(home, key, secret) {
  return {
    PATH: '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    AWS_ACCESS_KEY_ID: key,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: path.join(home, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(home, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_MAX_ATTEMPTS: '1',
    AWS_PAGER: '',
  };
}

// Runs command with input on its standard input; resolves with
// { code, signal, stdout, stderr } once it ended.  env is added to the
// client environment made for key and secret.
function runClient(command, args, input, { key, secret, env = {} }) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-client-'));
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: home, env: { ...clientEnvironment(home, key, secret), ...env } });
    const stdout = [];
    const stderr = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), CLIENT_TIMEOUT_MS);
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      fs.rmSync(home, { recursive: true, force: true });
      resolve({ code, signal, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    });
    child.stdin.end(input);
  });
}

const PYTHON = '/usr/bin/python3';
const BOTO3_CALLS = path.join(__dirname, 'boto3_calls.py');

// The calls of plan (boto3_calls.py's input: { endpoint, calls, ... })
// through boto3 -> { versions, answers: one per call }.
async function boto3Calls(plan, credentials) {
  const { code, signal, stdout, stderr } = await runClient(PYTHON, ['-I', BOTO3_CALLS], JSON.stringify(plan), credentials);
  if (code !== 0) throw new Error(`boto3_calls.py ended with ${signal || `exit code ${code}`}:\n${stderr}`);
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line));
  const { versions } = lines.shift();
  if (lines.length !== plan.calls.length) {
    throw new Error(`boto3_calls.py answered ${lines.length} of ${plan.calls.length} calls:\n${stderr}`);
  }
  return { versions, answers: lines };
}

module.exports = { runClient, boto3Calls, PYTHON };
