'use strict';
// The HTTP answers of the dashboard:
//   GET  /, /app.js, /style.css     the page
//   GET  /api/overview?window=S     every queue the role may see (lib/overview.js)
//   GET  /api/messages?queue=Q&after=ID   a page of a queue's messages (lib/messages.js)
//   GET  /api/topics, /api/schedules  the topics with their subscriptions, and the
//                                   schedules, the role may see (lib/catalog.js)
//   POST /api/redrive  {"queue": Q}  moves a poison queue's messages back (--allow-writes only)
//   POST /api/pause, /api/resume  {"queue": Q}  pauses or resumes a queue (--allow-writes only)
//   POST /api/replay  {"queue": Q, "messageId": ID}  puts a message the queue kept after its
//                                   delete back into it (--allow-writes only)
const { overview } = require('./overview');
const { messagePage, BadRequest } = require('./messages');
const { topicList, scheduleList } = require('./catalog');
const { sendJson, sendError } = require('./respond');
const { serveStatic } = require('./static_files');
const { allowedHosts, hostAllowed } = require('./host_check');

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

// A body larger than MAX_BODY bytes: refused with 413, and not read on.
class TooLarge extends Error {}

// The body of a request, up to MAX_BODY bytes. One that declares more
// (Content-Length) is refused before a byte of it is read; one sent in
// chunks is refused, and no longer read, once it passes the limit.
function readBody(req) {
  return new Promise((resolve, reject) => {
    const tooLarge = () => new TooLarge(`the body is larger than ${MAX_BODY} bytes`);
    if (Number(req.headers['content-length']) > MAX_BODY) {
      reject(tooLarge());
      return;
    }
    const chunks = [];
    let size = 0;
    const onData = (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.removeListener('data', onData);
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// Answers 413 and closes the connection: the rest of the body is not read.
function refuseTooLarge(req, res, err) {
  res.setHeader('Connection', 'close');
  res.on('finish', () => req.destroy());
  sendJson(res, 413, { error: err.message, code: null });
}

// The JSON body of a POST, which names a queue. Only JSON is taken: a form
// of another site cannot send it without the browser asking us first
// (CORS), which we never allow.
async function postOf(req) {
  if (!/^application\/json\b/.test(req.headers['content-type'] || '')) {
    throw new BadRequest('send the request as application/json');
  }
  let parsed;
  try {
    parsed = JSON.parse(await readBody(req));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new BadRequest('the body is not JSON');
  }
  if (!parsed || typeof parsed.queue !== 'string' || parsed.queue === '') throw new BadRequest('name a queue');
  return parsed;
}

// The message id a POST names: digits, in a string or a number.
function messageIdOf(post) {
  const id = typeof post.messageId === 'number' && Number.isSafeInteger(post.messageId) ? String(post.messageId) : post.messageId;
  if (typeof id !== 'string' || !/^[0-9]{1,19}$/.test(id)) throw new BadRequest('name a message by its id (messageId)');
  return id;
}

// The writes a dashboard started with --allow-writes makes, by path: each
// takes the POST's body (the queue it names, and what else it needs) and
// answers what it did.
const WRITES = {
  '/api/redrive': async (client, { queue }) => ({ moved: await client.redrive(queue) }),
  '/api/pause': async (client, { queue }) => ({ paused: (await client.pause(queue), true) }),
  '/api/resume': async (client, { queue }) => ({ paused: (await client.resume(queue), false) }),
  // 0 replayed: the message is no longer kept (replayed, or its retention ran out)
  '/api/replay': async (client, post) => {
    const messageId = messageIdOf(post);
    return { messageId, replayed: await client.replay(post.queue, { messageIds: [messageId] }) };
  },
};

function makeHandler({ client, sampler, config }) {
  const allowed = allowedHosts(config.host, config.allowedHosts);
  async function route(req, res) {
    if (!hostAllowed(allowed, req.headers.host)) {
      sendJson(res, 421, {
        error: 'this dashboard does not answer to that host name (start it with --allowed-host NAME to add one)',
        code: null,
      });
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
    } else if (url.pathname === '/api/topics' && get) {
      sendJson(res, 200, await topicList(client));
    } else if (url.pathname === '/api/schedules' && get) {
      sendJson(res, 200, await scheduleList(client));
    } else if (WRITES[url.pathname]) {
      if (req.method !== 'POST') {
        sendJson(res, 405, { error: 'POST only', code: null });
      } else if (!config.allowWrites) {
        sendJson(res, 403, { error: 'this dashboard is read-only (start it with --allow-writes)', code: null });
      } else {
        const post = await postOf(req);
        const answer = await WRITES[url.pathname](client, post);
        await sampler.fresh(0);
        sendJson(res, 200, { queue: post.queue, ...answer });
      }
    } else if (!(get && await serveStatic(url.pathname, res))) {
      sendJson(res, 404, { error: 'not found', code: null });
    }
  }

  return (req, res) => {
    route(req, res).catch((err) => {
      if (res.headersSent) res.destroy();
      else if (err instanceof TooLarge) refuseTooLarge(req, res, err);
      else sendError(res, err);
    });
  };
}

module.exports = { makeHandler };
