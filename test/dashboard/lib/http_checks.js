'use strict';
// The dashboard's HTTP answers that need no browser: bodies too large for
// a redrive request are refused (413) without being read, and the Host
// header is checked whatever address the dashboard listens on. Every
// request goes to a loopback address; the checks of a dashboard on
// 0.0.0.0 or on another machine's address run its request handler on
// 127.0.0.1 instead of binding those addresses.
const assert = require('node:assert/strict');
const http = require('node:http');
const path = require('node:path');

// One request over node:http (fetch sets Host itself). body: a Buffer
// sent whole; burst: that many bytes of body sent at once, then nothing
// more until the answer (a client that stops writing gets the answer even
// from a server that closes with part of the body unread); declared: the
// Content-Length sent (chunked without it); waitClose: see whether the
// server closes the connection within 5 s of its answer. Resolves to
// { status, headers, json, serverClosed }.
function request(url, { method = 'GET', host, headers = {}, body, burst, declared, waitClose = false } = {}) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const options = {
      host: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port,
      path: target.pathname + target.search,
      method,
      headers: { ...headers },
    };
    if (host) options.headers.Host = host;
    if (declared !== undefined) options.headers['Content-Length'] = String(declared);
    const req = http.request(options);
    let answered = false;
    let closed = null;
    req.on('socket', (socket) => {
      closed = new Promise((done) => socket.once('close', () => done(true)));
    });
    req.on('response', (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (part) => { text += part; });
      res.on('error', () => {});
      res.on('end', async () => {
        const json = /json/.test(res.headers['content-type'] || '') ? JSON.parse(text) : null;
        const serverClosed = waitClose &&
          await Promise.race([closed, new Promise((done) => setTimeout(done, 5000, false))]);
        req.destroy();
        resolve({ status: res.statusCode, headers: res.headers, json, serverClosed });
      });
    });
    req.on('error', (err) => { if (!answered) reject(err); });
    req.setTimeout(20000, () => req.destroy(new Error(`${method} ${url}: no answer within 20 s`)));
    if (burst !== undefined) req.write(Buffer.alloc(burst, 'x'));
    else req.end(body);
  });
}

// A client that sends a body of `total` bytes in 64 KB writes whatever the
// server answers, for 15 s at most: how many bytes the server took before
// it closed the connection, and whether it closed it.
function flood(url, { declared, total }) {
  const target = new URL(url);
  return new Promise((resolve) => {
    const headers = { 'Content-Type': 'application/json' };
    if (declared !== undefined) headers['Content-Length'] = String(declared);
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers });
    let sent = 0;
    let status = null;
    let closed = false;
    req.on('response', (res) => {
      status = res.statusCode;
      res.resume();
    });
    req.on('error', () => { closed = true; });
    req.on('close', () => { closed = true; });
    const chunk = Buffer.alloc(65536, 'x');
    const deadline = setTimeout(() => req.destroy(), 15000);
    const started = Date.now();
    let cutOff = false;
    req.on('close', () => {
      clearTimeout(deadline);
      cutOff = cutOff || (sent < total && Date.now() - started < 15000);
    });
    (async () => {
      while (sent < total && !closed) {
        const room = req.write(chunk);
        sent += chunk.length;
        if (!room) {
          await new Promise((done) => {
            const go = () => { req.off('drain', go); req.off('close', go); done(); };
            req.on('drain', go);
            req.on('close', go);
          });
        }
      }
      if (!closed) req.end();
      while (!closed) await new Promise((done) => setTimeout(done, 50));
      resolve({ sent, status, cutOff, ms: Date.now() - started });
    })();
  });
}

const HOSTS = ['0.0.0.0', '::', '::ffff:127.0.0.1', 'ip6-localhost', '192.0.2.10', 'dash.example.net'];

async function checkRequestBodies(tap, writes) {
  const redrive = `${writes.url}api/redrive`;
  const json = { 'Content-Type': 'application/json' };
  await tap.check('a redrive request declaring 520 MB is refused (413) before its body is read, and the connection closed',
    async () => {
      const answer = await request(redrive, {
        method: 'POST', headers: json, declared: 520 * 1024 * 1024, burst: 4096, waitClose: true,
      });
      assert.equal(answer.status, 413, JSON.stringify(answer.json));
      assert.equal(answer.headers.connection, 'close');
      assert.ok(answer.serverClosed, 'the dashboard closed the connection');
    });
  await tap.check('a chunked redrive request that passes 10 KB is refused (413), and the connection closed', async () => {
    const answer = await request(redrive, { method: 'POST', headers: json, burst: 12 * 1024, waitClose: true });
    assert.equal(answer.status, 413, JSON.stringify(answer.json));
    assert.equal(answer.headers.connection, 'close');
    assert.ok(answer.serverClosed, 'the dashboard closed the connection');
  });
  await tap.check('a client that sends on regardless (64 MB, declared and chunked) is cut off: the dashboard reads no further',
    async () => {
      const total = 64 * 1024 * 1024;
      for (const declared of [total, undefined]) {
        const result = await flood(redrive, { declared, total });
        const how = declared === undefined ? 'chunked' : 'declared';
        assert.ok(result.cutOff,
          `${how}: ${result.sent} bytes written in ${result.ms} ms, not cut off within 15 s (answer ${result.status})`);
        tap.comment(`measured: ${how}, the connection was closed after ${result.sent} bytes were written (${result.ms} ms)`);
      }
    });
  await tap.check('after them the dashboard still answers: a small redrive request that is no JSON (400), the overview (200)',
    async () => {
      const small = await request(redrive, { method: 'POST', headers: json, body: Buffer.from('{"queue": ') });
      assert.equal(small.status, 400, JSON.stringify(small.json));
      const overview = await request(`${writes.url}api/overview`);
      assert.equal(overview.status, 200);
      assert.equal(overview.json.dashboard.allowWrites, true);
    });
}

async function checkHosts(tap, { dashboardDir, start }) {
  const { hostAllowed, allowedHosts } = require(path.join(dashboardDir, 'lib', 'host_check'));
  const { makeHandler } = require(path.join(dashboardDir, 'lib', 'routes'));
  const { parseOptions, USAGE } = require(path.join(dashboardDir, 'lib', 'options'));

  await tap.check('the Host check: a name of another site is refused whatever --host is; loopback names, the --host itself and --allowed-host names are taken',
    () => {
      for (const host of HOSTS) {
        const allowed = allowedHosts(host, ['proxy.example']);
        for (const header of ['evil.example', 'evil.example:8080', 'proxy.example.evil.example', 'localhost.evil.example', '']) {
          assert.equal(hostAllowed(allowed, header), false, `--host ${host}, Host ${header}`);
        }
        for (const header of ['localhost:8080', '127.0.0.1', '[::1]:8080', 'proxy.example', 'PROXY.example:443']) {
          assert.equal(hostAllowed(allowed, header), true, `--host ${host}, Host ${header}`);
        }
      }
      assert.equal(hostAllowed(allowedHosts('192.0.2.10'), '192.0.2.10:8080'), true, 'the address listened on');
      assert.equal(hostAllowed(allowedHosts('dash.example.net'), 'dash.example.net'), true, 'the name listened on');
      assert.equal(hostAllowed(allowedHosts('::ffff:127.0.0.1'), '[::ffff:127.0.0.1]:8080'), true);
      assert.equal(hostAllowed(allowedHosts('0.0.0.0'), '0.0.0.0:8080'), false, 'a wildcard address names no host');
      assert.equal(hostAllowed(allowedHosts('0.0.0.0'), '192.0.2.10'), false, 'not listed');
    });

  await tap.check('--allowed-host is repeatable and takes lists; the usage text names it; a bad name is refused', () => {
    const options = parseOptions(['postgresql:///x', '--allowed-host', 'a.example, b.example', '--allowed-host', 'c.example']);
    assert.deepEqual(options.allowedHosts, ['a.example', 'b.example', 'c.example']);
    assert.deepEqual(parseOptions(['postgresql:///x']).allowedHosts, []);
    assert.match(USAGE, /--allowed-host NAME/);
    assert.throws(() => parseOptions(['postgresql:///x', '--allowed-host', 'evil.example/path']), /--allowed-host/);
  });

  // The handler of a dashboard on 0.0.0.0 and on another machine's
  // address, served on 127.0.0.1 here: the Host header decides.
  await tap.check('the request handler of a dashboard on 0.0.0.0 or on 192.0.2.10 answers 421 to Host evil.example, 200 to its own and allowed names',
    async () => {
      const sampler = { fresh: async () => {}, history: [], latest: null, failure: null };
      for (const host of ['0.0.0.0', '192.0.2.10']) {
        const config = { host, allowedHosts: ['proxy.example'], allowWrites: false, refreshMs: 2000 };
        const server = http.createServer(makeHandler({ client: {}, sampler, config }));
        await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
        const url = `http://127.0.0.1:${server.address().port}/`;
        try {
          const refused = await request(url, { host: 'evil.example' });
          assert.equal(refused.status, 421, `--host ${host}`);
          assert.match(refused.json.error, /--allowed-host/);
          for (const name of ['proxy.example', 'localhost', ...(host === '0.0.0.0' ? [] : [host])]) {
            assert.equal((await request(url, { host: name })).status, 200, `--host ${host}, Host ${name}`);
          }
        } finally {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
        }
      }
    });

  // A dashboard started on ::ffff:127.0.0.1, a loopback address the old
  // check did not know (it then checked nothing).
  let mapped;
  const started = await tap.check('dashboard/run.sh starts a dashboard on --host ::ffff:127.0.0.1 --allowed-host proxy.example',
    async () => {
      mapped = await start('mapped', ['--host', '::ffff:127.0.0.1', '--allowed-host', 'proxy.example']);
    });
  if (!started) return;
  await tap.check('the dashboard on ::ffff:127.0.0.1 answers 421 to Host evil.example, 200 to its address, localhost and proxy.example',
    async () => {
      const url = `${mapped.url}api/overview`;
      const port = new URL(mapped.url).port;
      assert.equal((await request(url, { host: `evil.example:${port}` })).status, 421);
      assert.equal((await request(url, { host: 'evil.example' })).status, 421);
      for (const name of [`[::ffff:127.0.0.1]:${port}`, `localhost:${port}`, 'proxy.example']) {
        assert.equal((await request(url, { host: name })).status, 200, `Host ${name}`);
      }
    });
}

module.exports = { checkRequestBodies, checkHosts };
