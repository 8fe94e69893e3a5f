'use strict';
// The page of the queue dashboard. It asks the dashboard's server for the
// figures every refresh interval and draws them: the overview of every
// queue (#), or one queue and its messages (#queue=NAME). Everything from
// the database is put into the page as text (textContent, SVG attributes),
// never as HTML, so a message body cannot become markup.
(() => {
  const COUNTERS = [
    ['puts', 'puts/s'],
    ['gets', 'gets/s'],
    ['deletes', 'deletes/s'],
    ['poisoned', 'poisoned/s'],
  ];
  const SVG = 'http://www.w3.org/2000/svg';
  // Bodies longer than this are folded (the server sends 2,000 characters at most).
  const BODY_SHOWN = 200;

  const state = {
    refreshMs: 2000,
    allowWrites: false,
    queue: null,        // the queue shown, or null for the overview
    pages: [null],      // the message id each page visited starts after; the last is shown
    nextAfter: null,
    windowSeconds: Number(localStorage.getItem('queue-dashboard-window')) || 300,
    loads: 0,           // the newest load; an older one that ends later draws nothing
  };

  const $ = (id) => document.getElementById(id);

  // An element with attributes and children; strings become text nodes.
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
    }
    node.append(...children.filter((child) => child !== null && child !== undefined));
    return node;
  }

  function svg(tag, attrs = {}) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    return node;
  }

  // -- formatting ------------------------------------------------------------

  const count = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US'));

  function rate(r) {
    if (r === null || r === undefined) return '—';
    if (Number.isInteger(r) || r >= 10) return Math.round(r).toLocaleString('en-US');
    return r.toFixed(1);
  }

  function age(seconds) {
    if (seconds === null || seconds === undefined) return '—';
    if (seconds < 1) return '< 1 s';
    const s = Math.floor(seconds);
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
    return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
  }

  const pad = (n) => String(n).padStart(2, '0');

  // A timestamp of the API: local time of day, with the date when not today.
  function when(text, missing = '—') {
    if (text === null || text === undefined) return missing;
    if (text === 'infinity') return 'after its group';
    const date = new Date(text);
    if (Number.isNaN(date.getTime())) return text;
    const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
    if (date.toDateString() === new Date().toDateString()) return time;
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${time}`;
  }

  // -- charts ----------------------------------------------------------------

  // 1, 2 or 5 times a power of ten, at least value.
  function roundUp(value) {
    if (!(value > 0)) return 1;
    const power = 10 ** Math.floor(Math.log10(value));
    return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= value);
  }

  // A line chart of the four rates. lines: { puts: [...], ... } aligned
  // with times; null is a gap. Small: no labels (a sparkline of a row).
  function chart(lines, times, from, to, { width, height, small }) {
    const values = COUNTERS.flatMap(([name]) => (lines ? lines[name] : [])).filter((v) => v !== null);
    const top = roundUp(Math.max(0, ...values));
    const pad = small ? 2 : 16;
    const x = (t) => ((t - from) / (to - from)) * width;
    const y = (v) => pad + (1 - v / top) * (height - 2 * pad);
    const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: small ? 'spark' : 'big', role: 'img' });
    root.append(svg('line', { x1: 0, x2: width, y1: y(0), y2: y(0), class: 'axis' }));
    if (!small) {
      root.append(svg('line', { x1: 0, x2: width, y1: y(top), y2: y(top), class: 'grid' }));
      const label = (text, attrs) => {
        const node = svg('text', attrs);
        node.textContent = text;
        root.append(node);
      };
      label(`${rate(top)}/s`, { x: 4, y: y(top) - 4, class: 'label' });
      label(`−${Math.round((to - from) / 60000)} min`, { x: 4, y: height - 2, class: 'label' });
      label('now', { x: width - 4, y: height - 2, class: 'label end' });
    }
    // puts drawn last, on top; a sparkline leaves out a line that stays at
    // zero (the axis shows it), so that an idle queue's row stays quiet
    for (const [name] of [...COUNTERS].reverse()) {
      const points = lines ? lines[name] : [];
      if (small && !points.some((v) => v > 0)) continue;
      let d = '';
      let drawing = false;
      points.forEach((v, i) => {
        if (v === null) {
          drawing = false;
          return;
        }
        d += `${drawing ? 'L' : 'M'}${x(times[i]).toFixed(1)} ${y(v).toFixed(1)} `;
        drawing = true;
      });
      if (d) root.append(svg('path', { d, class: `line ${name}` }));
    }
    const title = svg('title');
    title.textContent = `up to ${rate(top)}/s over the last ${Math.round((to - from) / 60000)} min`;
    root.append(title);
    return root;
  }

  function legend() {
    return COUNTERS.map(([name, label]) => el('span', { class: `key ${name}` }, label));
  }

  // -- the overview ----------------------------------------------------------

  function poisonCell(row) {
    if (row.poisonHidden) return el('span', { class: 'muted', title: `no permission on ${row.poisonQueue}` }, 'no access');
    if (row.poison === null) return '—';
    return el('span', { class: row.poison > 0 ? 'alert' : null }, count(row.poison));
  }

  function queueRow(row, chartData) {
    const link = el('a', { href: `#queue=${encodeURIComponent(row.name)}` }, row.name);
    const tags = row.isPoison ? el('span', { class: 'tag poison' }, 'poison') : null;
    const cell = (field, content, cls = 'num') => el('td', { class: cls, 'data-field': field }, content);
    const tr = el('tr', { 'data-queue': row.name, class: row.isPoison ? 'poison-queue' : null },
      el('td', { 'data-field': 'name' }, link, ' ', tags,
        row.paused ? el('span', { class: 'tag paused' }, 'paused') : null),
      cell('visible', count(row.visible)),
      cell('inFlight', count(row.inFlight)),
      cell('delayed', count(row.delayed)),
      cell('poison', poisonCell(row)),
      cell('oldestVisibleAge', age(row.oldestVisibleAge)),
      ...COUNTERS.map(([name]) => cell(`rate-${name}`, rate(row.rates ? row.rates[name] : null))),
      cell('chart', chart(row.series, chartData.times, chartData.from, chartData.to,
        { width: 160, height: 30, small: true }), 'chart-cell'));
    tr.addEventListener('click', (event) => {
      if (event.target.closest('a') === null) location.hash = `queue=${encodeURIComponent(row.name)}`;
    });
    return tr;
  }

  function drawOverview(data) {
    $('legend').replaceChildren(...legend());
    // drawn at the width it has, so that its labels are not scaled
    const width = Math.max(300, $('total-chart').clientWidth - 12);
    $('total-chart').replaceChildren(chart(data.chart.total, data.chart.times, data.chart.from, data.chart.to,
      { width, height: 150, small: false }));
    $('queues').tBodies[0].replaceChildren(...data.queues.map((row) => queueRow(row, data.chart)));
    $('no-queues').hidden = data.queues.length > 0 || data.sampledAt === null;
  }

  // -- topics and schedules (extension 1.10) --------------------------------

  const queueLink = (name) => el('a', { href: `#queue=${encodeURIComponent(name)}` }, name);

  // A row per subscription, the topic's name once for them all; a topic
  // without subscriptions has a row saying so.
  function topicRows(topic) {
    const cell = (field, ...content) => el('td', { 'data-field': field }, ...content);
    const name = el('td', { 'data-field': 'topic', rowspan: Math.max(1, topic.subscriptions.length) }, topic.topic);
    if (topic.subscriptions.length === 0) {
      return [el('tr', { 'data-topic': topic.topic }, name,
        cell('queue', el('span', { class: 'muted' }, 'no subscriptions')), cell('filter'))];
    }
    return topic.subscriptions.map((s, i) => el('tr', { 'data-topic': topic.topic, 'data-queue': s.queue },
      i === 0 ? name : null,
      cell('queue', queueLink(s.queue)),
      cell('filter', s.filter === null ? el('span', { class: 'muted' }, 'every message') : el('code', {}, JSON.stringify(s.filter)))));
  }

  // result: the answer of api/topics. One that failed leaves what is shown
  // (the banner says why); an extension without topics hides the list.
  function drawTopics(result) {
    if (!result.ok) return;
    const { available, topics } = result.body;
    $('topics-block').hidden = !available;
    $('topics').tBodies[0].replaceChildren(...topics.flatMap(topicRows));
    $('no-topics').hidden = topics.length > 0;
  }

  function scheduleRow(s) {
    const cell = (field, content, title) => el('td', { 'data-field': field, title }, content);
    return el('tr', { 'data-schedule': s.schedule },
      cell('schedule', s.schedule),
      cell('queue', queueLink(s.queue)),
      cell('cron', el('code', {}, s.cron)),
      cell('timeZone', s.timeZone),
      cell('nextAt', when(s.nextAt), s.nextAt),
      cell('lastAt', when(s.lastAt, 'never'), s.lastAt || 'no message put yet'));
  }

  function drawSchedules(result) {
    if (!result.ok) return;
    const { available, schedules } = result.body;
    $('schedules-block').hidden = !available;
    $('schedules').tBodies[0].replaceChildren(...schedules.map(scheduleRow));
    $('no-schedules').hidden = schedules.length > 0;
  }

  // -- one queue -------------------------------------------------------------

  function drawQueueHead(data) {
    const row = data.queues.find((q) => q.name === state.queue);
    const name = $('queue-name');
    name.replaceChildren(state.queue, ...(row && row.isPoison ? [' ', el('span', { class: 'tag poison' }, 'poison')] : []),
      ...(row && row.paused ? [' ', el('span', { class: 'tag paused' }, 'paused')] : []));
    if (!row) {
      $('queue-figures').replaceChildren(el('span', { class: 'muted' }, 'not among the queues this role sees'));
      $('queue-settings').replaceChildren();
      $('redrive').hidden = true;
      $('pause').hidden = true;
      return;
    }
    const figure = (label, value, field) => el('span', { class: 'figure', 'data-field': field },
      el('b', {}, value), ` ${label}`);
    const figures = [
      figure('visible', count(row.visible), 'visible'),
      figure('in flight', count(row.inFlight), 'inFlight'),
      figure('delayed', count(row.delayed), 'delayed'),
    ];
    if (row.poisonQueue) figures.push(figure('poison', row.poisonHidden ? 'no access' : count(row.poison), 'poison'));
    figures.push(figure('oldest visible', age(row.oldestVisibleAge), 'oldestVisibleAge'));
    $('queue-figures').replaceChildren(...figures);
    const parts = [];
    if (row.settings) {
      const s = row.settings;
      parts.push(`visibility timeout ${age(s.visibilityTimeout)}`,
        `message TTL ${s.messageTtl === null ? 'never expires' : age(s.messageTtl)}`,
        `max dequeue count ${s.maxDequeueCount === null ? 'none' : s.maxDequeueCount}`,
        `max message size ${count(s.maxMessageSize)} B`,
        `retention ${s.retention === null ? 'none' : age(s.retention)}`);
    }
    const links = [];
    if (row.poisonQueue) links.push(' · poison queue ', el('a', { href: `#queue=${encodeURIComponent(row.poisonQueue)}` }, row.poisonQueue));
    if (row.isPoison) links.push(' · poison queue of ', el('a', { href: `#queue=${encodeURIComponent(row.sourceQueue)}` }, row.sourceQueue));
    $('queue-settings').replaceChildren(parts.join(' · '), ...links);
    const redrivable = row.isPoison && state.allowWrites;
    $('redrive').hidden = !redrivable;
    if (redrivable) {
      $('redrive-button').textContent = `Redrive ${count(row.visible)} visible messages to ${row.sourceQueue}`;
      $('redrive-button').disabled = row.visible === 0;
    }
    $('pause').hidden = !state.allowWrites;
    $('pause-button').textContent = row.paused ? 'Resume' : 'Pause';
    $('pause-button').dataset.paused = String(row.paused);
  }

  function bodyCell(m) {
    const folded = m.bodyTruncated || m.body.length > BODY_SHOWN;
    if (!folded) return el('td', { class: 'body' }, el('code', {}, m.body));
    const rest = m.bodyTruncated ? `\n… ${count(m.bodyLength - m.body.length)} more characters not shown` : '';
    return el('td', { class: 'body' }, el('details', {},
      el('summary', {}, el('code', {}, `${m.body.slice(0, BODY_SHOWN)}…`),
        el('span', { class: 'muted' }, ` (${count(m.bodyLength)} characters)`)),
      el('pre', {}, m.body + rest)));
  }

  // When a kept message was deleted, and with writes allowed its Replay button.
  function deletedCell(m) {
    if (m.deletedAt === null) return el('td', {});
    const button = state.allowWrites ? el('button', { type: 'button', class: 'replay' }, 'Replay') : null;
    if (button) button.addEventListener('click', () => replay(m.messageId, button));
    return el('td', { title: m.deletedAt }, when(m.deletedAt), button);
  }

  function messageRow(m) {
    return el('tr', { 'data-id': m.messageId, class: m.state === 'deleted' ? 'deleted' : null },
      el('td', { class: 'num' }, m.messageId),
      el('td', {}, el('span', { class: `state ${m.state}` }, m.state.replace('_', ' '))),
      el('td', { class: 'num' }, String(m.dequeueCount)),
      el('td', { title: m.insertedAt }, when(m.insertedAt)),
      el('td', { title: m.visibleAt }, when(m.visibleAt)),
      el('td', { title: m.expiresAt || 'never' }, when(m.expiresAt, 'never')),
      deletedCell(m),
      el('td', {}, m.groupId === null ? '' : m.groupId),
      el('td', { class: 'num' }, String(m.priority)),
      el('td', {}, m.sourceQueue === null ? '' : m.sourceQueue),
      el('td', { class: 'headers' }, m.headers === null ? '' : el('code', {}, JSON.stringify(m.headers))),
      bodyCell(m));
  }

  function drawMessages(page) {
    const first = (state.pages.length - 1) * page.pageSize + 1;
    const label = page.messages.length === 0 ? 'no messages'
      : `messages ${count(first)}–${count(first + page.messages.length - 1)}`;
    $('page-label').textContent = `page ${state.pages.length} · ${label}`;
    $('previous').disabled = state.pages.length === 1;
    $('next').disabled = page.nextAfter === null;
    $('paging-note').hidden = page.note === null;
    $('paging-note').textContent = page.note || '';
    $('queue-error').hidden = true;
    $('messages').hidden = false;
    $('messages').tBodies[0].replaceChildren(...page.messages.map(messageRow));
  }

  // The server's 42501 message ("permission denied for queue ..."), said
  // as a sentence; named as a permission error whatever its words.
  function permissionText(message) {
    if (/^permission denied/i.test(message)) return message.charAt(0).toUpperCase() + message.slice(1);
    return `Permission denied: ${message}`;
  }

  function drawQueueError(message) {
    $('queue-error').hidden = false;
    $('queue-error').textContent = message;
    $('messages').hidden = true;
    $('page-label').textContent = '';
    $('previous').disabled = true;
    $('next').disabled = true;
  }

  // -- loading ---------------------------------------------------------------

  function drawBanner(data, unreachable) {
    const banner = $('banner');
    if (unreachable) {
      banner.textContent = `The dashboard server does not answer (${unreachable}). Retrying every ${state.refreshMs / 1000} s.`;
    } else if (data.error) {
      const shown = data.sampledAt ? ` The figures shown are from ${when(data.sampledAt)}.` : '';
      banner.textContent = `Cannot read the database since ${when(data.error.since)}: ${data.error.message}.${shown} Retrying every ${state.refreshMs / 1000} s.`;
    }
    banner.hidden = !unreachable && !data.error;
  }

  function drawHeader(data) {
    const db = data.database;
    $('identity').textContent = db ? `role ${db.role} · database ${db.database} · queue ${db.version}` : '';
    $('mode').textContent = data.dashboard.allowWrites ? 'writes allowed' : 'read-only';
    $('mode').className = `badge ${data.dashboard.allowWrites ? 'writes' : 'read-only'}`;
    $('updated').textContent = data.sampledAt ? `updated ${when(data.sampledAt)}` : '';
  }

  async function getJson(url, options) {
    const response = await fetch(url, options);
    const body = await response.json();
    return { ok: response.ok, status: response.status, body };
  }

  // The writes: a POST of JSON (the server takes no other).
  function postJson(url, value) {
    return getJson(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(value),
    });
  }

  async function load() {
    const id = ++state.loads;
    const queue = state.queue;
    const after = state.pages[state.pages.length - 1];
    let overview;
    let page = null;
    // the overview's topics and schedules, asked for beside its figures and
    // drawn after them, so that they never hold the figures up
    const lists = queue === null
      ? Promise.all([getJson('api/topics'), getJson('api/schedules')]).catch(() => null)
      : Promise.resolve(null);
    try {
      overview = await getJson(`api/overview?window=${state.windowSeconds}`);
      if (queue !== null) {
        const query = new URLSearchParams({ queue });
        if (after !== null) query.set('after', after);
        page = await getJson(`api/messages?${query}`);
      }
    } catch (err) {
      if (id === state.loads) drawBanner(null, err.message);
      return;
    }
    if (id !== state.loads) return;
    if (!overview.ok) {
      drawBanner(null, overview.body.error);
      return;
    }
    const data = overview.body;
    state.refreshMs = data.dashboard.refreshSeconds * 1000;
    state.allowWrites = data.dashboard.allowWrites;
    drawBanner(data, null);
    drawHeader(data);
    $('overview').hidden = queue !== null;
    $('queue').hidden = queue === null;
    if (queue === null) {
      drawOverview(data);
      const [topics, schedules] = (await lists) || [];
      if (topics && id === state.loads) {
        drawTopics(topics);
        drawSchedules(schedules);
      }
      return;
    }
    drawQueueHead(data);
    if (page.ok) {
      state.nextAfter = page.body.nextAfter;
      drawMessages(page.body);
    } else {
      state.nextAfter = null;
      drawQueueError(page.status === 403 ? permissionText(page.body.error) : page.body.error);
    }
  }

  // Loads every refresh interval, counted from the start of the last load.
  async function refreshLoop() {
    const started = Date.now();
    try {
      await load();
    } finally {
      setTimeout(refreshLoop, Math.max(0, state.refreshMs - (Date.now() - started)));
    }
  }

  // The queue the address names (#queue=NAME), or null for the overview.
  function queueOfHash() {
    const match = /^#queue=(.*)$/.exec(location.hash);
    try {
      return match ? decodeURIComponent(match[1]) : null;
    } catch (err) {
      return null;   // a malformed address: the overview
    }
  }

  function route() {
    state.queue = queueOfHash();
    state.pages = [null];
    $('redrive-result').textContent = '';
    $('pause-result').textContent = '';
    showReplayResult('');
    load();
  }

  // Pauses the queue shown, or resumes it if it is paused.
  async function pauseOrResume() {
    const button = $('pause-button');
    const action = button.dataset.paused === 'true' ? 'resume' : 'pause';
    button.disabled = true;
    try {
      const result = await postJson(`api/${action}`, { queue: state.queue });
      $('pause-result').textContent = result.ok
        ? (result.body.paused ? 'paused: gets hand out nothing' : 'resumed')
        : `${action} failed: ${result.body.error}`;
    } catch (err) {
      $('pause-result').textContent = `${action} failed: ${err.message}`;
    }
    button.disabled = false;
    await load();
  }

  async function redrive() {
    const button = $('redrive-button');
    button.disabled = true;
    try {
      const result = await postJson('api/redrive', { queue: state.queue });
      $('redrive-result').textContent = result.ok
        ? `moved ${count(result.body.moved)} messages back`
        : `redrive failed: ${result.body.error}`;
    } catch (err) {
      $('redrive-result').textContent = `redrive failed: ${err.message}`;
    }
    await load();
  }

  function showReplayResult(text) {
    $('replay-result').textContent = text;
    $('replay-result').hidden = text === '';
  }

  // Puts a message the queue kept after its delete back into it.
  async function replay(messageId, button) {
    button.disabled = true;
    try {
      const result = await postJson('api/replay', { queue: state.queue, messageId });
      if (!result.ok) showReplayResult(`replay failed: ${result.body.error}`);
      else if (result.body.replayed === 0) showReplayResult(`message ${messageId} is no longer kept: nothing replayed`);
      else showReplayResult(`message ${messageId} replayed: visible again`);
    } catch (err) {
      showReplayResult(`replay failed: ${err.message}`);
    }
    await load();
  }

  // Each button waits for its page: a second click before it is drawn
  // would skip a page.
  $('previous').addEventListener('click', () => {
    if (state.pages.length === 1) return;
    state.pages.pop();
    $('previous').disabled = true;
    load();
  });
  $('next').addEventListener('click', () => {
    if (state.nextAfter === null) return;
    state.pages.push(state.nextAfter);
    state.nextAfter = null;
    $('next').disabled = true;
    load();
  });
  $('redrive-button').addEventListener('click', redrive);
  $('pause-button').addEventListener('click', pauseOrResume);
  $('window').value = String(state.windowSeconds);
  $('window').addEventListener('change', () => {
    state.windowSeconds = Number($('window').value);
    localStorage.setItem('queue-dashboard-window', String(state.windowSeconds));
    load();
  });
  window.addEventListener('hashchange', route);

  state.queue = queueOfHash();
  refreshLoop();
})();
