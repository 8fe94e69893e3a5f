'use strict';
// What the dashboard's page shows, read as text from the browser, and
// waits for the page to show something.

// A figure as the page writes it ("1,200") as a number; null for a
// cell without one ("—", "no access").
function figure(text) {
  const cleaned = String(text).replace(/,/g, '').trim();
  return /^[0-9.]+$/.test(cleaned) ? Number(cleaned) : null;
}

// The rows of the overview table: name, whether marked as poison, and
// the text of each cell by field.
async function overviewRows(page) {
  return page.$$eval('#queues tbody tr', (trs) => trs.map((tr) => ({
    name: tr.dataset.queue,
    markedPoison: tr.classList.contains('poison-queue') && tr.querySelector('.tag.poison') !== null,
    cells: Object.fromEntries([...tr.querySelectorAll('td[data-field]')]
      .map((td) => [td.dataset.field, td.textContent.trim()])),
  })));
}

// The counts of one overview row as numbers (poison null when "—").
function counts(row) {
  return {
    visible: figure(row.cells.visible),
    inFlight: figure(row.cells.inFlight),
    delayed: figure(row.cells.delayed),
    poison: figure(row.cells.poison),
  };
}

async function messageIds(page) {
  return page.$$eval('#messages tbody tr', (trs) => trs.map((tr) => tr.dataset.id));
}

// Waits until fn(arg) is true in the page; the error names `what`.
async function waitFor(page, what, fn, arg, timeoutMs = 10000) {
  try {
    await page.waitForFunction(fn, { timeout: timeoutMs, polling: 20 }, arg);
  } catch (err) {
    throw new Error(`${what}: not within ${timeoutMs} ms (${err.message.split('\n')[0]})`);
  }
}

// Waits until the overview shows a cell of a queue with this text.
async function waitForCell(page, queue, field, text, timeoutMs) {
  await waitFor(page, `${queue} ${field} = ${text}`, ([q, f, t]) => {
    const td = document.querySelector(`#queues tr[data-queue="${q}"] td[data-field="${f}"]`);
    return td !== null && td.textContent.trim() === t && !document.getElementById('overview').hidden;
  }, [queue, field, text], timeoutMs);
}

// Waits until the page shows the messages of a queue, page `number`.
async function waitForMessagePage(page, queue, number, timeoutMs) {
  await waitFor(page, `${queue} page ${number}`, ([q, n]) => {
    const name = document.getElementById('queue-name');
    const label = document.getElementById('page-label');
    return !document.getElementById('queue').hidden && name.firstChild !== null &&
      name.firstChild.textContent === q && label.textContent.startsWith(`page ${n} `);
  }, [queue, number], timeoutMs);
}

// The rows of a table of the overview below the queues (#topics,
// #schedules): their data attributes, and the text and title of each cell
// by field.
async function listingRows(page, table) {
  return page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => ({
    data: { ...tr.dataset },
    cells: Object.fromEntries([...tr.querySelectorAll('td[data-field]')]
      .map((td) => [td.dataset.field, td.textContent.trim()])),
    titles: Object.fromEntries([...tr.querySelectorAll('td[data-field][title]')]
      .map((td) => [td.dataset.field, td.title])),
    links: [...tr.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    buttons: tr.querySelectorAll('button').length,
  })));
}

module.exports = { figure, overviewRows, counts, messageIds, listingRows, waitFor, waitForCell, waitForMessagePage };
