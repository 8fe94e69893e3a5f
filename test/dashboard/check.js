'use strict';
// The dashboard as a person sees it, in headless Chromium (puppeteer-core):
// the queues and their counts, a put showing up, the rates, paging through
// messages, bodies shown as text, redrive (and none on a read-only
// dashboard), pause, deleted messages a queue keeps and their replay, the
// topics and schedules listed (and a role's share of them), a role that
// sees one queue, no pop receipt anywhere, and a
// lost database connection; before the browser, the HTTP answers that need
// none (lib/http_checks.js: bodies too large, the Host check). Prints TAP lines; test/dashboard/run.sh starts
// the server and gives the environment:
//   DSN, PGDATA, PGBINDIR  the throwaway server (superuser postgres)
//   WORK                   where logs, pids and the screenshot go
//   DASHBOARD_DIR          the dashboard's copy, with dashboard/run.sh
//   CHROMIUM, TAP_START
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const pg = require('pg');
const puppeteer = require('puppeteer-core');
const { Tap } = require('./lib/tap');
const { startDashboard } = require('./lib/dashboard_process');
const { makeQueues, makeTopicsAndSchedules, EXPECTED, PAGED, HTML_BODY, READER } = require('./lib/fixtures');
const { checkRequestBodies, checkHosts } = require('./lib/http_checks');
const read = require('./lib/page_reader');

const { DSN, WORK, PGDATA, PGBINDIR, DASHBOARD_DIR, CHROMIUM } = process.env;
const REFRESH_MS = 2000;   // the dashboard's default, which the main dashboard keeps
const PAGE_SIZE = 50;

const tap = new Tap(Number(process.env.TAP_START || 1));
const admin = new pg.Pool({ connectionString: DSN, max: 2 });
admin.on('error', () => {});   // the server is stopped on purpose below
const sql = async (text, params) => (await admin.query(text, params)).rows;

const receipts = new Set();   // every pop receipt handed out
const answers = [];           // promises of { url, text } of every API answer the browsers saw
const htmlSeen = [];          // the page's HTML at each view
const dashboards = {};
const extraDashboards = [];   // started by the HTTP checks, not looked at by the browser
let browser;

function dsnOf(user) {
  const url = new URL(DSN);
  url.username = user;
  return url.toString();
}

function pgCtl(...args) {
  return new Promise((resolve, reject) => {
    execFile(path.join(PGBINDIR, 'pg_ctl'), ['-D', PGDATA, ...args], (err, stdout, stderr) => {
      if (err) reject(new Error(`pg_ctl ${args.join(' ')}: ${stderr || err.message}`));
      else resolve();
    });
  });
}

async function sqlCounts() {
  const rows = await sql('SELECT queue, visible, in_flight, delayed FROM queue.queue_stats()');
  const byName = new Map(rows.map((r) => [r.queue, {
    visible: Number(r.visible), inFlight: Number(r.in_flight), delayed: Number(r.delayed),
  }]));
  const result = {};
  for (const [name, c] of byName) {
    const poison = byName.get(`${name}-poison`);
    result[name] = { ...c, poison: poison ? poison.visible + poison.inFlight + poison.delayed : null };
  }
  return result;
}

async function openPage(dashboard, hash = '') {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('response', (response) => {
    if (response.url().includes('/api/')) {
      answers.push(response.text().then((text) => ({ url: response.url(), text }), () => null));
    }
  });
  page.on('pageerror', (err) => tap.comment(`page error (${dashboard.name}): ${err.message}`));
  await page.goto(`${dashboard.url}${hash}`);
  return page;
}

async function remember(page) {
  htmlSeen.push(await page.content());
}

async function show(page, hash) {
  await page.evaluate((h) => { location.hash = h; }, hash);
}

// -- the checks, in order ----------------------------------------------------

async function setUp() {
  await tap.check('the queues are set up: puts, a delayed put, gets, messages moved to poison by the background worker',
    async () => {
      const { poisonedAfterMs } = await makeQueues(sql, receipts);
      tap.comment(`measured: the background worker moved 3 expired messages to poison ${poisonedAfterMs} ms after their lease began (1 s)`);
    });
  return tap.check('dashboard/run.sh starts three dashboards: writes allowed, read-only, and as a role granted one queue',
    async () => {
      const start = (name, dsn, args) => startDashboard({ dir: DASHBOARD_DIR, dsn, args, name, work: WORK })
        .then((d) => { dashboards[name] = d; });
      await Promise.all([
        start('writes', DSN, ['--allow-writes']),
        start('readonly', DSN, ['--refresh', '1']),
        start('reader', dsnOf(READER), ['--refresh', '1']),
      ]);
    });
}

async function checkOverview(page) {
  await tap.check('the page lists every queue the role sees, as queue_stats() does, poison queues marked', async () => {
    await read.waitFor(page, 'the queue table', (n) => document.querySelectorAll('#queues tbody tr').length === n,
      Object.keys(EXPECTED).length);
    const rows = await read.overviewRows(page);
    const fromSql = (await sql('SELECT queue FROM queue.queue_stats()')).map((r) => r.queue);
    assert.deepEqual(rows.map((r) => r.name).sort(), fromSql.sort());
    assert.deepEqual(rows.map((r) => r.name).sort(), Object.keys(EXPECTED).sort());
    const marked = rows.filter((r) => r.markedPoison).map((r) => r.name).sort();
    assert.deepEqual(marked, ['bodies-poison', 'emails-poison', 'orders-poison', 'reports-poison']);
    await remember(page);
  });

  await tap.check('visible, in-flight, delayed and poison counts on the page are right (and agree with SQL)', async () => {
    const rows = await read.overviewRows(page);
    const shown = Object.fromEntries(rows.map((r) => [r.name, read.counts(r)]));
    assert.deepEqual(shown, EXPECTED);
    assert.deepEqual(shown, await sqlCounts());
  });
}

async function checkLivePut(page) {
  await tap.check('a put from outside shows on the page within the refresh interval (2 s)', async () => {
    const measured = [];
    for (let i = 0; i < 3; i += 1) {
      const before = read.figure((await read.overviewRows(page)).find((r) => r.name === 'orders').cells.visible);
      const started = Date.now();
      const [row] = await sql("SELECT * FROM queue.queue_put('orders', $1)", [`live put ${i + 1}`]);
      receipts.add(String(row.pop_receipt));
      await read.waitForCell(page, 'orders', 'visible', String(before + 1), REFRESH_MS * 3);
      measured.push(Date.now() - started);
      // the next put lands at another moment of the page's refresh cycle
      await new Promise((resolve) => setTimeout(resolve, 300 + i * 400));
    }
    tap.comment(`measured: a put showed on the page after ${measured.join(', ')} ms (refresh ${REFRESH_MS} ms)`);
    const late = measured.filter((ms) => ms > REFRESH_MS + 1000);
    assert.deepEqual(late, [], 'more than the refresh interval (plus 1 s for the query and drawing)');
  });

  await tap.check('the rates and charts show the traffic: puts/s of orders above 0, lines of puts drawn', async () => {
    await read.waitFor(page, 'a puts/s above 0 and drawn lines', () => {
      const cell = document.querySelector('#queues tr[data-queue="orders"] td[data-field="rate-puts"]');
      const rate = cell ? Number(cell.textContent.replace(/,/g, '')) : 0;
      return rate > 0 &&
        document.querySelector('#total-chart path.line.puts') !== null &&
        document.querySelector('#queues tr[data-queue="orders"] svg path.line.puts') !== null;
    }, null, REFRESH_MS * 5);
  });
}

async function checkPaging(page) {
  const pages = [];
  await tap.check(`the message view pages ${PAGED} messages as 50 + 50 + 20, in order, without duplicates or gaps`, async () => {
    await page.click('#queues tr[data-queue="pages"] a');
    for (let number = 1; number <= 3; number += 1) {
      if (number > 1) await page.click('#next');
      await read.waitForMessagePage(page, 'pages', number);
      pages.push(await read.messageIds(page));
      await remember(page);
    }
    assert.deepEqual(pages.map((ids) => ids.length), [PAGE_SIZE, PAGE_SIZE, PAGED - 2 * PAGE_SIZE]);
    assert.equal(await page.$eval('#next', (b) => b.disabled), true, 'no next page after the last');
    const all = pages.flat();
    const inSql = (await sql("SELECT message_id FROM queue.queue_inspect('pages', 1000)")).map((r) => String(r.message_id));
    assert.deepEqual(all, inSql, 'the pages together are every message, in id order');
    assert.equal(new Set(all).size, all.length, 'no message twice');
  });

  await tap.check('Previous goes back to the same second page, and to the first', async () => {
    await page.click('#previous');
    await read.waitForMessagePage(page, 'pages', 2);
    assert.deepEqual(await read.messageIds(page), pages[1]);
    await page.click('#previous');
    await read.waitForMessagePage(page, 'pages', 1);
    assert.deepEqual(await read.messageIds(page), pages[0]);
    assert.equal(await page.$eval('#previous', (b) => b.disabled), true);
  });
}

async function checkBodies(page) {
  await tap.check('messages show state, dequeues, group, priority, headers; bodies as text, never markup; long ones folded and cut',
    async () => {
      await show(page, 'queue=bodies');
      await read.waitForMessagePage(page, 'bodies', 1);
      await remember(page);
      const rows = await page.$$eval('#messages tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
      const [html, long] = rows;
      assert.equal(html[1], 'visible');
      assert.equal(html[2], '0');
      assert.equal(html[6], '', 'not deleted');
      assert.equal(html[7], 'customer-7');
      assert.equal(html[8], '5');
      assert.equal(html[10], '{"kind":"<i>html</i>"}');
      assert.equal(html[11], HTML_BODY, 'the body is shown as the text it is');
      const made = await page.evaluate(() => ({
        elements: document.querySelectorAll('#messages img, #messages script, #messages b, #messages i').length,
        injected: window.injected === undefined ? null : window.injected,
      }));
      assert.deepEqual(made, { elements: 0, injected: null }, 'no element made from a body or header');
      assert.match(long[11], /\(5,000 characters\)/);
      assert.match(long[11], /3,000 more characters not shown/);
      assert.equal(await page.$eval('#messages tbody tr:nth-child(2) details', (d) => d.open), false, 'folded');
    });
}

async function redriveResponse(dashboard, queue, contentType = 'application/json') {
  const response = await fetch(`${dashboard.url}api/redrive`, {
    method: 'POST',
    headers: { 'Content-Type': contentType },
    body: JSON.stringify({ queue }),
  });
  return { status: response.status, text: await response.text() };
}

async function checkReadOnly() {
  await tap.check('a read-only dashboard shows no redrive button on a poison queue; its POST answers 403; nothing moves',
    async () => {
      const page = await openPage(dashboards.readonly, '#queue=emails-poison');
      await read.waitForMessagePage(page, 'emails-poison', 1);
      await remember(page);
      assert.equal((await read.messageIds(page)).length, 3);
      assert.equal(await page.$eval('#redrive', (e) => e.hidden && e.offsetParent === null), true, 'the button is hidden');
      assert.equal(await page.$eval('#pause', (e) => e.hidden && e.offsetParent === null), true, 'so is the pause button');
      assert.equal(await page.$eval('#mode', (e) => e.textContent), 'read-only');
      const answer = await redriveResponse(dashboards.readonly, 'emails-poison');
      answers.push(Promise.resolve({ url: 'POST readonly api/redrive', text: answer.text }));
      assert.equal(answer.status, 403, answer.text);
      assert.equal((await sqlCounts())['emails-poison'].visible, 3);
      await page.close();
    });

  await tap.check('with --allow-writes, a POST that is not JSON is refused (400): no other site\'s form can redrive', async () => {
    const answer = await redriveResponse(dashboards.writes, 'emails-poison', 'application/x-www-form-urlencoded');
    assert.equal(answer.status, 400, answer.text);
    assert.equal((await sqlCounts())['emails-poison'].visible, 3);
  });
}

async function checkRedrive(page) {
  await tap.check('redrive with the button moves the poison messages back (page and SQL agree)', async () => {
    await show(page, 'queue=emails-poison');
    await read.waitForMessagePage(page, 'emails-poison', 1);
    await read.waitFor(page, 'the redrive button', () => {
      const button = document.getElementById('redrive-button');
      return button.offsetParent !== null && button.textContent.startsWith('Redrive 3 ');
    }, null);
    await remember(page);
    await page.click('#redrive-button');
    await read.waitFor(page, 'the redrive result', () =>
      document.getElementById('redrive-result').textContent === 'moved 3 messages back', null);
    const counts = await sqlCounts();
    assert.deepEqual([counts.emails.visible, counts['emails-poison'].visible], [3, 0]);
    await show(page, '');
    await read.waitForCell(page, 'emails', 'visible', '3', REFRESH_MS * 2);
    await read.waitForCell(page, 'emails', 'poison', '0', REFRESH_MS * 2);
    await read.waitForCell(page, 'emails-poison', 'visible', '0', REFRESH_MS * 2);
  });
}

async function checkPause(page) {
  await tap.check('pause with the button: the queue is paused (SQL agrees) and tagged; resume with it again', async () => {
    const paused = async () => (await sql("SELECT paused FROM queue.queue_list() WHERE queue = 'emails'"))[0].paused;
    await show(page, 'queue=emails');
    await read.waitFor(page, 'the pause button', () => {
      const button = document.getElementById('pause-button');
      return button.offsetParent !== null && button.textContent === 'Pause';
    }, null);
    await page.click('#pause-button');
    await read.waitFor(page, 'the pause result', () =>
      document.getElementById('pause-result').textContent === 'paused: gets hand out nothing', null);
    assert.equal(await paused(), true);
    assert.deepEqual(await sql("SELECT count(*)::int AS n FROM queue.queue_get('emails')"), [{ n: 0 }]);
    await read.waitFor(page, 'the paused tag and the resume button', () =>
      document.querySelector('#queue-name .tag.paused') !== null &&
      document.getElementById('pause-button').textContent === 'Resume', null);
    await remember(page);
    await page.click('#pause-button');
    await read.waitFor(page, 'the resume result', () =>
      document.getElementById('pause-result').textContent === 'resumed', null);
    assert.equal(await paused(), false);
    const readOnly = await fetch(`${dashboards.readonly.url}api/pause`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ queue: 'emails' }),
    });
    assert.equal(readOnly.status, 403);
    assert.equal(await paused(), false, 'a read-only dashboard pauses nothing');
    await show(page, '');   // the overview, where the checks after this one begin
  });
}

// The cells of the message table's rows, as text, with the title of the
// Deleted cell and whether the row has a Replay button.
async function messageCells(page) {
  return page.$$eval('#messages tbody tr', (trs) => trs.map((tr) => ({
    id: tr.dataset.id,
    cells: [...tr.cells].map((td) => td.textContent),
    deletedTitle: tr.cells[6].title,
    replayButton: tr.querySelector('button.replay') !== null,
  })));
}

async function checkRetention(page) {
  let kept;   // the message deleted, and kept by the queue's retention
  await tap.check('a queue with retention: a deleted message is shown as deleted with when, not counted; the retention among the settings',
    async () => {
      await sql("SELECT queue.queue_create('kept', retention => '1 day')");
      const puts = await sql("SELECT * FROM queue.queue_put_batch('kept', ARRAY['kept 1', 'kept 2'])");
      const [got] = await sql("SELECT * FROM queue.queue_get('kept')");
      for (const row of [...puts, got]) receipts.add(String(row.pop_receipt));
      await sql('SELECT queue.queue_delete($1, $2, $3)', ['kept', got.message_id, got.pop_receipt]);
      const [row] = await sql("SELECT state, deleted_at FROM queue.queue_inspect('kept') WHERE message_id = $1", [got.message_id]);
      assert.equal(row.state, 'deleted');
      kept = { id: String(got.message_id), deletedAt: row.deleted_at.toISOString() };

      await show(page, 'queue=kept');
      await read.waitForMessagePage(page, 'kept', 1);
      await read.waitFor(page, 'the settings with the retention', () =>
        document.getElementById('queue-settings').textContent.includes('retention 1 d 0 h'), null);
      await remember(page);
      const rows = await messageCells(page);
      assert.deepEqual(rows.map((r) => [r.id, r.cells[1], r.replayButton]),
        [[kept.id, 'deleted', true], [String(puts[1].message_id), 'visible', false]]);
      assert.equal(rows[0].deletedTitle, kept.deletedAt, 'the Deleted cell\'s title is deleted_at');
      assert.match(rows[0].cells[6], /^(\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\dReplay$/, 'the time it was deleted, and the button');
      assert.equal(rows[1].cells[6], '');
      assert.equal(await page.$eval('#messages tbody tr.deleted td:nth-child(12)', (td) => td.textContent), 'kept 1');
      assert.equal(await page.$eval('#queue-figures [data-field="visible"] b', (b) => b.textContent), '1',
        'the deleted message is not counted');
    });

  await tap.check('read-only: no Replay button, its POST answers 403; with writes a POST without a message id 400; Replay with the button puts the message back (page and SQL agree)',
    async () => {
      const post = (dashboard, body) => fetch(`${dashboard.url}api/replay`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
      const readOnly = await openPage(dashboards.readonly, '#queue=kept');
      await read.waitForMessagePage(readOnly, 'kept', 1);
      assert.deepEqual((await messageCells(readOnly)).map((r) => [r.cells[1], r.replayButton]),
        [['deleted', false], ['visible', false]]);
      await readOnly.close();
      const refused = await post(dashboards.readonly, { queue: 'kept', messageId: kept.id });
      assert.equal(refused.status, 403, refused.text);
      const unnamed = await post(dashboards.writes, { queue: 'kept' });
      assert.equal(unnamed.status, 400, unnamed.text);
      const states = async () => (await sql("SELECT state FROM queue.queue_inspect('kept')")).map((r) => r.state);
      assert.deepEqual(await states(), ['deleted', 'visible'], 'nothing replayed yet');

      await page.click('#messages tbody tr.deleted button.replay');
      await read.waitFor(page, 'the replay result', (id) =>
        document.getElementById('replay-result').textContent === `message ${id} replayed: visible again`, kept.id);
      assert.deepEqual(await states(), ['visible', 'visible']);
      await read.waitFor(page, 'the message visible again, no Replay button, counted', () =>
        document.querySelector('#messages tbody tr.deleted, #messages button.replay') === null &&
        document.querySelector('#queue-figures [data-field="visible"] b').textContent === '2', null);
      await remember(page);
      // replayed once: a second POST finds nothing kept
      const again = await post(dashboards.writes, { queue: 'kept', messageId: Number(kept.id) });
      assert.equal(again.status, 200, again.text);
      assert.equal(JSON.parse(again.text).replayed, 0);
      await show(page, '');   // the overview, where the checks after this one begin
    });
}

// What the topic and schedule tables of a page should show, from SQL as
// role (the dashboard's own, or another): a row per subscription or topic
// without any, a row per schedule.
async function listingsInSql(role) {
  const connection = new pg.Client({ connectionString: role ? dsnOf(role) : DSN });
  await connection.connect();
  try {
    const topics = (await connection.query('SELECT topic, queue, filter FROM queue.queue_topics()')).rows;
    const schedules = (await connection.query(
      'SELECT schedule, queue, cron, time_zone, next_at, last_at FROM queue.queue_schedules()')).rows;
    return {
      topics: topics.map((r) => ({
        data: r.queue === null ? { topic: r.topic } : { topic: r.topic, queue: r.queue },
        queue: r.queue === null ? 'no subscriptions' : r.queue,
        filter: r.queue === null ? '' : r.filter === null ? 'every message' : JSON.stringify(r.filter),
      })),
      schedules: schedules.map((r) => ({
        schedule: r.schedule,
        queue: r.queue,
        cron: r.cron,
        timeZone: r.time_zone,
        nextAt: r.next_at.toISOString(),
        lastAt: r.last_at === null ? null : r.last_at.toISOString(),
      })),
    };
  } finally {
    await connection.end();
  }
}

// The topic and schedule tables of a page, in the shape of listingsInSql.
async function listingsShown(page) {
  const topics = await read.listingRows(page, 'topics');
  const schedules = await read.listingRows(page, 'schedules');
  return {
    topics: topics.map((r) => ({ data: r.data, queue: r.cells.queue, filter: r.cells.filter })),
    schedules: schedules.map((r) => ({
      schedule: r.cells.schedule,
      queue: r.cells.queue,
      cron: r.cells.cron,
      timeZone: r.cells.timeZone,
      nextAt: r.titles.nextAt,
      lastAt: r.cells.lastAt === 'never' ? null : r.titles.lastAt,
    })),
  };
}

async function checkTopicsAndSchedules(page) {
  let due;
  await tap.check('topics with their subscriptions and filters, and schedules with queue, cron, time zone, next and last due time, are listed as SQL lists them',
    async () => {
      due = await makeTopicsAndSchedules(sql);
      const expected = await listingsInSql(null);
      assert.deepEqual(expected.topics.map((t) => [t.data.topic, t.data.queue || null]), [
        ['audit', null], ['order-events', 'emails'], ['order-events', 'orders'], ['report-events', 'reports']]);
      assert.deepEqual(expected.schedules.map((r) => [r.schedule, r.lastAt]),
        [['leap-day-report', null], ['new-year-orders', null], ['tick', due.toISOString()]]);
      // drawn after tick's message was put, the last thing made
      await read.waitFor(page, 'the topics and schedules listed', () => {
        const tick = document.querySelector('#schedules tr[data-schedule="tick"] td[data-field="lastAt"]');
        return document.querySelectorAll('#topics tbody tr').length === 4 &&
          document.querySelectorAll('#schedules tbody tr').length === 3 && tick !== null && tick.textContent !== 'never' &&
          !document.getElementById('topics-block').hidden && !document.getElementById('overview').hidden;
      }, null, REFRESH_MS * 3);
      await remember(page);
      const shown = await listingsShown(page);
      assert.deepEqual(shown, expected);
      // the texts as a person reads them
      const topics = await read.listingRows(page, 'topics');
      assert.deepEqual(topics.map((r) => r.cells.topic || ''), ['audit', 'order-events', '', 'report-events'],
        'a topic named once for its subscriptions');
      assert.deepEqual(topics.find((r) => r.data.queue === 'emails').cells.filter,
        '{"total":[{"numeric":[">",100]}],"region":[{"prefix":"eu-"}]}');
      assert.equal(topics.find((r) => r.data.queue === 'orders').cells.filter, 'every message');
      assert.deepEqual(topics.find((r) => r.data.queue === 'orders').links, ['#queue=orders']);
      const schedules = await read.listingRows(page, 'schedules');
      const leap = schedules.find((r) => r.cells.schedule === 'leap-day-report');
      const [{ leapDay }] = await sql("SELECT queue.queue_cron_next('0 6 29 2 *', now(), 'Europe/Paris') AS \"leapDay\"");
      assert.deepEqual([leap.cells.cron, leap.cells.timeZone, leap.titles.nextAt, leap.cells.lastAt],
        ['0 6 29 2 *', 'Europe/Paris', leapDay.toISOString(), 'never']);
      assert.match(leap.cells.nextAt, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/, 'a day not today is shown with its date');
      const tick = schedules.find((r) => r.cells.schedule === 'tick');
      assert.match(tick.cells.lastAt, /^(\d{4}-\d\d-\d\d )?\d\d:\d\d:00$/);
      assert.deepEqual(schedules.map((r) => r.buttons), [0, 0, 0], 'read-only: no button');
      assert.deepEqual((await sql("SELECT body, headers ->> 'schedule' AS schedule FROM queue.queue_peek('ticks')")),
        [{ body: 'tick', schedule: 'tick' }], 'the worker put the message of the due schedule');
    });

  await tap.check('GET /api/topics and /api/schedules answer the same, on a read-only dashboard too', async () => {
    const expected = await listingsInSql(null);
    for (const dashboard of [dashboards.writes, dashboards.readonly]) {
      const topics = await (await fetch(`${dashboard.url}api/topics`)).json();
      const schedules = await (await fetch(`${dashboard.url}api/schedules`)).json();
      assert.equal(topics.available, true);
      assert.deepEqual(topics.topics, [
        { topic: 'audit', subscriptions: [] },
        { topic: 'order-events', subscriptions: [
          { queue: 'emails', filter: { total: [{ numeric: ['>', 100] }], region: [{ prefix: 'eu-' }] } },
          { queue: 'orders', filter: null },
        ] },
        { topic: 'report-events', subscriptions: [{ queue: 'reports', filter: { kind: ['weekly'] } }] },
      ]);
      assert.equal(schedules.available, true);
      assert.deepEqual(schedules.schedules, expected.schedules);
    }
  });

  await tap.check(`a role sees the schedules of its queue and no topic it holds nothing on (${READER})`, async () => {
    const reader = await openPage(dashboards.reader);
    try {
      await read.waitFor(reader, 'the schedule of reports', () =>
        document.querySelectorAll('#schedules tbody tr').length === 1 && !document.getElementById('no-topics').hidden, null);
      await remember(reader);
      const expected = await listingsInSql(READER);
      assert.deepEqual(expected.topics, []);
      assert.deepEqual(expected.schedules.map((r) => r.schedule), ['leap-day-report']);
      assert.deepEqual(await listingsShown(reader), expected);
    } finally {
      await reader.close();
    }
  });
}

async function checkRole() {
  const page = await openPage(dashboards.reader);
  await tap.check(`a role granted one queue (${READER}: send on reports) sees only that queue`, async () => {
    await read.waitFor(page, 'the header naming the role', (role) =>
      document.getElementById('identity').textContent.includes(`role ${role}`), READER);
    await read.waitFor(page, 'one row', () => document.querySelectorAll('#queues tbody tr').length === 1, null);
    await remember(page);
    const rows = await read.overviewRows(page);
    assert.deepEqual(rows.map((r) => r.name), ['reports']);
    assert.deepEqual(read.counts(rows[0]), { visible: 2, inFlight: 0, delayed: 0, poison: null });
    assert.equal(rows[0].cells.poison, 'no access', 'its poison queue is not the role\'s to see');
    const role = new pg.Client({ connectionString: dsnOf(READER) });
    await role.connect();
    const seen = (await role.query('SELECT queue FROM queue.queue_stats()')).rows.map((r) => r.queue);
    await role.end();
    assert.deepEqual(seen, ['reports']);
  });

  await tap.check('a permission error on a queue is shown on its page as such, and the page goes on', async () => {
    for (const queue of ['reports', 'orders']) {
      await show(page, `queue=${queue}`);
      await read.waitFor(page, `the error of ${queue}`, (q) => {
        const error = document.getElementById('queue-error');
        return !error.hidden && error.textContent.startsWith('Permission denied') && error.textContent.includes(q);
      }, queue);
      await remember(page);
    }
    await show(page, '');
    await read.waitFor(page, 'the overview again', () =>
      !document.getElementById('overview').hidden && document.querySelectorAll('#queues tbody tr').length === 1, null);
    assert.equal(await page.$eval('#banner', (b) => b.hidden), true);
  });
  await page.close();
}

async function checkNoReceipt() {
  await tap.check('no pop receipt in any page or API answer', async () => {
    // every API answer of every queue too, not only those the pages asked for
    const queues = Object.keys(EXPECTED);
    for (const dashboard of Object.values(dashboards)) {
      const urls = [`${dashboard.url}api/overview`];
      for (const queue of queues) urls.push(`${dashboard.url}api/messages?queue=${encodeURIComponent(queue)}`);
      for (const url of urls) {
        const response = await fetch(url);
        answers.push(Promise.resolve({ url, text: await response.text() }));
      }
    }
    const texts = [...(await Promise.all(answers)).filter(Boolean).map((a) => a.text), ...htmlSeen];
    const found = [];
    for (const text of texts) {
      const lower = text.toLowerCase();
      for (const receipt of receipts) {
        if (lower.includes(receipt) || lower.includes(receipt.replace(/-/g, ''))) found.push(receipt);
      }
      if (/pop_?receipt/i.test(text)) found.push('a pop receipt field');
    }
    tap.comment(`measured: ${receipts.size} receipts looked for in ${texts.length} answers and pages`);
    assert.ok(receipts.size >= 15, `only ${receipts.size} receipts kept`);
    assert.ok(texts.length >= 40, `only ${texts.length} answers and pages`);
    assert.deepEqual(found, []);
  });
}

async function checkLostConnection(page) {
  await tap.check('a lost database connection shows a banner; the page recovers when the server is back', async () => {
    await read.waitForCell(page, 'orders', 'visible', String((await sqlCounts()).orders.visible), REFRESH_MS * 2);
    const stopped = Date.now();
    await pgCtl('-m', 'fast', '-w', 'stop');
    await read.waitFor(page, 'the banner', () => {
      const banner = document.getElementById('banner');
      return !banner.hidden && banner.textContent.startsWith('Cannot read the database');
    }, null, REFRESH_MS * 5);
    const bannerAfter = Date.now() - stopped;
    await remember(page);
    const restarted = Date.now();
    await pgCtl('-l', path.join(WORK, 'postgresql.log'), '-w', 'start');
    const put = (await sql("SELECT * FROM queue.queue_put('orders', 'after the restart')"))[0];
    receipts.add(String(put.pop_receipt));
    const visible = (await sqlCounts()).orders.visible;
    await read.waitFor(page, 'the banner gone and the new count', (v) => {
      const td = document.querySelector('#queues tr[data-queue="orders"] td[data-field="visible"]');
      return document.getElementById('banner').hidden && td !== null && td.textContent === String(v);
    }, visible, REFRESH_MS * 10);
    tap.comment(`measured: the banner showed ${bannerAfter} ms after the server stopped; ` +
      `the page recovered ${Date.now() - restarted} ms after the restart began`);
  });
}

async function checkScreenshot(page) {
  await tap.check('a screenshot of the page is saved', async () => {
    await show(page, '');
    await read.waitFor(page, 'the overview', () => !document.getElementById('overview').hidden, null);
    const file = path.join(WORK, 'dashboard.png');
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(fs.statSync(file).size > 10000, 'the screenshot is nearly empty');
    tap.comment(`screenshot: ${file}`);
  });
}

async function main() {
  try {
    if (!(await setUp())) return;
    await checkRequestBodies(tap, dashboards.writes);
    await checkHosts(tap, {
      dashboardDir: DASHBOARD_DIR,
      start: async (name, args) => {
        const dashboard = await startDashboard({ dir: DASHBOARD_DIR, dsn: DSN, args, name, work: WORK });
        extraDashboards.push(dashboard);
        return dashboard;
      },
    });
    const launched = await tap.check('headless Chromium opens the page of the dashboard', async () => {
      browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
      });
    });
    if (!launched) return;
    const page = await openPage(dashboards.writes);
    await checkOverview(page);
    await checkLivePut(page);
    await checkPaging(page);
    await checkBodies(page);
    await checkReadOnly();
    await checkRedrive(page);
    await checkPause(page);
    await checkRetention(page);
    await checkTopicsAndSchedules(page);
    await checkRole();
    await checkNoReceipt();
    await checkLostConnection(page);
    await checkScreenshot(page);
  } catch (err) {
    tap.line(false, 'the checks ran to the end', err.stack);
  } finally {
    if (browser) await browser.close().catch(() => {});
    await Promise.all([...Object.values(dashboards), ...extraDashboards].map((d) => d.stop()));
    await admin.end().catch(() => {});
    tap.plan();
  }
}

main().then(() => process.exit(tap.failed === 0 ? 0 : 1));
