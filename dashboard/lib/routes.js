'use strict';
// The HTTP answers of the dashboard:
//   GET  /, /app.js, /style.css     the page
//   GET  /api/overview?window=S     every queue the role may see (lib/overview.js)
//   GET  /api/messages?queue=Q&after=ID   a page of a queue's messages (lib/messages.js)
//   POST /api/redrive  {"queue": Q}  moves a poison queue's messages back (--allow-writes only)
const { overview } = require('./overview');
const { messagePage, BadRequest } = require('./messages');
const { sendJson, sendError } = require('./respond');
const { serveStatic } = require('./static_files');
const { hostAllowed } = require('./host_check');

// Windows of the charts the page may ask for, in seconds.
const WINDOWS = [60, 300, 900];
const DEFAULT_WINDOW = 300;
// A page asking for the overview gets figures at most this old: pages
// open at the same moment share one sample.
const FRESH_MS = 250;
const MAX_BODY = 10000;

function windowMs(text) {
  const seconds = Number(text);
  return (WINDOWS.includes(seconds) ? seconds : DEFAULT_WINDOW) * 1000;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
      if (body.length > MAX_BODY) reject(new BadRequest('request too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

// The queue named by the JSON body of a POST. Only JSON is taken: a form
// of another site cannot send it without the browser asking us first
// (CORS), which we never allow.
async function queueOfPost(req) {
  if (!/^application\/json\b/.test(req.headers['content-type'] || '')) {
    throw new BadRequest('send the request as application/json');
  }
  let parsed;
  try {
    parsed = JSON.parse(await readBody(req));
  } catch (err) {
    if (err instanceof BadRequest) throw err;
    throw new BadRequest('the body is not JSON');
  }
  if (!parsed || typeof parsed.queue !== 'string' || parsed.queue === '') throw new BadRequest('name a queue');
  return parsed.queue;
}

function makeHandler({ client, sampler, config }) {
  async function route(req, res) {
    if (!hostAllowed(config.host, req.headers.host)) {
      sendJson(res, 421, { error: 'this dashboard answers to localhost only', code: null });
      return;
    }
    const url = new URL(req.url, 'http://dashboard');
    const get = req.method === 'GET' || req.method === 'HEAD';
    if (url.pathname === '/api/overview' && get) {
      await sampler.fresh(FRESH_MS);
      sendJson(res, 200, overview(sampler, {
        windowMs: windowMs(url.searchParams.get('window')),
        refreshMs: config.refreshMs,
        allowWrites: config.allowWrites,
      }));
    } else if (url.pathname === '/api/messages' && get) {
      sendJson(res, 200, await messagePage(client, url.searchParams.get('queue'), url.searchParams.get('after')));
    } else if (url.pathname === '/api/redrive') {
      if (req.method !== 'POST') {
        sendJson(res, 405, { error: 'POST only', code: null });
      } else if (!config.allowWrites) {
        sendJson(res, 403, { error: 'this dashboard is read-only (start it with --allow-writes)', code: null });
      } else {
        const queue = await queueOfPost(req);
        const moved = await client.redrive(queue);
        await sampler.fresh(0);
        sendJson(res, 200, { queue, moved });
      }
    } else if (!(get && await serveStatic(url.pathname, res))) {
      sendJson(res, 404, { error: 'not found', code: null });
    }
  }

  return (req, res) => {
    route(req, res).catch((err) => {
      if (!res.headersSent) sendError(res, err);
      else res.destroy();
    });
  };
}

module.exports = { makeHandler };
