'use strict';
// The queues and messages the checks look at, made with plain SQL as any
// producer or consumer would. Every pop receipt handed out is kept, to be
// looked for (and never found) in what the dashboard shows.

// Each queue's counts once the fixtures are made; poison is the count of
// its poison queue, null where it has none.
const EXPECTED = {
  orders: { visible: 3, inFlight: 2, delayed: 1, poison: 0 },
  'orders-poison': { visible: 0, inFlight: 0, delayed: 0, poison: null },
  emails: { visible: 0, inFlight: 0, delayed: 0, poison: 3 },
  'emails-poison': { visible: 3, inFlight: 0, delayed: 0, poison: null },
  pages: { visible: 120, inFlight: 0, delayed: 0, poison: null },
  bodies: { visible: 2, inFlight: 0, delayed: 0, poison: 0 },
  'bodies-poison': { visible: 0, inFlight: 0, delayed: 0, poison: null },
  reports: { visible: 2, inFlight: 0, delayed: 0, poison: 0 },
  'reports-poison': { visible: 0, inFlight: 0, delayed: 0, poison: null },
};

const PAGED = 120;
// A body that would become markup if the page took it as HTML.
const HTML_BODY = '<img src="x" onerror="window.injected = 1"><script>window.injected = 2</script><b>bold</b>';
const LONG_BODY = 'long body '.repeat(500);
const READER = 'dash_reader';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// sql(text, params) -> rows; receipts: a Set the pop receipts go into.
async function makeQueues(sql, receipts) {
  const keep = (rows) => {
    for (const row of rows) if (row.pop_receipt) receipts.add(String(row.pop_receipt));
    return rows;
  };
  const put = (queue, body, delay = 0) => sql(
    'SELECT * FROM queue.queue_put($1, $2, make_interval(secs => $3::float8))', [queue, body, delay]).then(keep);
  const putMany = (queue, bodies) => sql('SELECT * FROM queue.queue_put_batch($1, $2::text[])', [queue, bodies]).then(keep);
  const get = (queue, n, lease) => sql(
    'SELECT * FROM queue.queue_get($1, $2, make_interval(secs => $3::float8))', [queue, n, lease]).then(keep);

  await sql("SELECT queue.queue_create('orders')");
  await putMany('orders', ['order 1', 'order 2', 'order 3', 'order 4', 'order 5']);
  await put('orders', 'order for later', 3600);
  await get('orders', 2, 600);

  // one delivery allowed: the messages go to emails-poison once their lease ends
  await sql("SELECT queue.queue_create('emails', max_dequeue_count => 1)");
  await putMany('emails', ['mail 1', 'mail 2', 'mail 3']);
  await get('emails', 3, 1);
  const leased = Date.now();

  await sql("SELECT queue.queue_create('pages', max_dequeue_count => NULL)");
  await putMany('pages', Array.from({ length: PAGED }, (_, i) => `paged message ${i + 1}`));

  await sql("SELECT queue.queue_create('bodies')");
  await sql(`SELECT * FROM queue.queue_put('bodies', $1, headers => '{"kind": "<i>html</i>"}', group_id => 'customer-7', priority => 5)`,
    [HTML_BODY]).then(keep);
  await put('bodies', LONG_BODY);

  // a role that may only send to one queue
  await sql("SELECT queue.queue_create('reports')");
  await putMany('reports', ['report 1', 'report 2']);
  await sql(`CREATE ROLE ${READER} LOGIN`);
  await sql(`GRANT USAGE ON SCHEMA queue TO ${READER}`);
  await sql(`SELECT queue.queue_grant('reports', '${READER}', 'send')`);

  // the background worker moves the emails to poison after their lease
  const deadline = Date.now() + 20000;
  for (;;) {
    const [row] = await sql("SELECT total FROM queue.queue_stats('emails-poison')");
    if (Number(row.total) === 3) break;
    if (Date.now() > deadline) throw new Error(`emails-poison has ${row.total} messages, not 3, 20 s after the lease`);
    await sleep(50);
  }
  return { poisonedAfterMs: Date.now() - leased };
}

// Topics and schedules (extension 1.10), made after the checks of the
// overview's counts: subscribing and scheduling put nothing, and every
// schedule but one is due rarely enough (a 29 February, a 1 January) not
// to put a message while the test runs. That one, tick, is made due at
// once, into a queue of its own, so that the worker puts its message and
// it has a last due time; returns that due time. A topic with a filter on
// reports, a schedule on reports: READER, who may send to reports, sees
// the schedule but no topic (it holds nothing on the topics).
async function makeTopicsAndSchedules(sql) {
  await sql("SELECT queue.queue_topic_create('order-events')");
  await sql("SELECT queue.queue_subscribe('order-events', 'orders')");
  await sql(`SELECT queue.queue_subscribe('order-events', 'emails', '{"region": [{"prefix": "eu-"}], "total": [{"numeric": [">", 100]}]}')`);
  await sql("SELECT queue.queue_topic_create('audit')");
  await sql("SELECT queue.queue_topic_create('report-events')");
  await sql(`SELECT queue.queue_subscribe('report-events', 'reports', '{"kind": ["weekly"]}')`);

  await sql("SELECT queue.queue_schedule('leap-day-report', 'reports', '0 6 29 2 *', 'leap day', NULL, 'Europe/Paris')");
  await sql(`SELECT queue.queue_schedule('new-year-orders', 'orders', '15 4 1 1 *', 'new year', '{"kind": "greeting"}', 'America/New_York')`);
  await sql("SELECT queue.queue_create('ticks')");
  await sql("SELECT queue.queue_schedule('tick', 'ticks', '0 0 1 1 *', 'tick')");
  const [{ due }] = await sql("SELECT date_trunc('minute', now()) - interval '1 hour' AS due");
  await sql("UPDATE queue_storage.schedules SET next_at = $1 WHERE schedule = 'tick'", [due]);
  const deadline = Date.now() + 20000;
  for (;;) {
    const [row] = await sql("SELECT last_at FROM queue.queue_schedules() WHERE schedule = 'tick'");
    if (row.last_at !== null) break;
    if (Date.now() > deadline) throw new Error('the background worker put no message of the due schedule within 20 s');
    await sleep(50);
  }
  return due;
}

module.exports = { makeQueues, makeTopicsAndSchedules, EXPECTED, PAGED, HTML_BODY, LONG_BODY, READER };
