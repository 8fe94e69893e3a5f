'use strict';
// Rates per second of the monotonic counters of queue_stats: the difference
// of a counter between two samples over the time between them.

const COUNTERS = ['puts', 'gets', 'deletes', 'poisoned'];

// At most this many points per chart line.
const MAX_POINTS = 150;

// The rate of each counter of one queue between two samples, or null
// where the queue is missing from either, or a counter went down (the
// queue was dropped and created again).
function between(older, newer, queue) {
  const before = older.counters.get(queue);
  const after = newer.counters.get(queue);
  const seconds = (newer.at - older.at) / 1000;
  const rates = {};
  for (const [i, name] of COUNTERS.entries()) {
    const grown = before && after ? after[i] - before[i] : -1;
    rates[name] = grown >= 0 && seconds > 0 ? grown / seconds : null;
  }
  return rates;
}

// The samples a window is drawn from: the last sample before the window
// (the base of the first rate), then the last sample of each bucket of
// bucketMs. The buckets are fixed to the clock, so that the points drawn
// stay where they are from one refresh to the next.
function pick(history, fromMs, bucketMs) {
  const picked = [];
  for (const sample of history) {
    const last = picked[picked.length - 1];
    if (sample.at < fromMs) {
      picked.length = 0;
      picked.push(sample);
    } else if (last && last.at >= fromMs && Math.floor(last.at / bucketMs) === Math.floor(sample.at / bucketMs)) {
      picked[picked.length - 1] = sample;
    } else {
      picked.push(sample);
    }
  }
  return picked;
}

// The chart lines of a window ending now: the times of the points, and per
// queue, and for all queues together, one array of rates per counter, with
// null where a rate is unknown.
function series(history, nowMs, windowMs, refreshMs) {
  const bucketMs = Math.max(refreshMs, Math.ceil(windowMs / MAX_POINTS));
  const picked = pick(history, nowMs - windowMs, bucketMs);
  const times = picked.slice(1).map((sample) => sample.at);
  const empty = () => Object.fromEntries(COUNTERS.map((name) => [name, times.map(() => null)]));
  const byQueue = new Map();
  const total = empty();
  for (let i = 1; i < picked.length; i += 1) {
    for (const queue of picked[i].counters.keys()) {
      if (!byQueue.has(queue)) byQueue.set(queue, empty());
      const rates = between(picked[i - 1], picked[i], queue);
      for (const name of COUNTERS) {
        byQueue.get(queue)[name][i - 1] = rates[name];
        if (rates[name] !== null) total[name][i - 1] = (total[name][i - 1] || 0) + rates[name];
      }
    }
  }
  return { times, byQueue, total };
}

// The rates of the last spanMs (or of the time there are samples for,
// when shorter): Map(queue -> { puts, gets, deletes, poisoned }).
function current(history, spanMs) {
  const rates = new Map();
  if (history.length < 2) return rates;
  const newest = history[history.length - 1];
  let base = history[0];
  for (const sample of history) {
    if (sample.at <= newest.at - spanMs) base = sample;
  }
  for (const queue of newest.counters.keys()) rates.set(queue, between(base, newest, queue));
  return rates;
}

module.exports = { COUNTERS, series, current, pick, between };
