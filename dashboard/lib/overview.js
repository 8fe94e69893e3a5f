'use strict';
// The figures of the overview page: every queue the role may see, its
// counts, the count of its poison queue, its rates now and its chart lines.
const rates = require('./rates');

// Rates "now" are taken over this span: one sample interval alone is noisy.
const CURRENT_SPAN_MS = 10000;

const POISON_SUFFIX = '-poison';

// Which queue is whose poison queue. queue_list names a queue's poison
// queue; a queue named <queue>-poison whose <queue> the role may not see is
// taken for its poison queue by the name alone. A visible <queue> without a
// poison queue makes <queue>-poison an ordinary queue.
function poisonLinks(stats, queues) {
  const poisonOf = new Map();
  const sourceOf = new Map();
  for (const q of queues) {
    if (q.poisonQueue) {
      poisonOf.set(q.queue, q.poisonQueue);
      sourceOf.set(q.poisonQueue, q.queue);
    }
  }
  const visible = new Set(stats.map((s) => s.queue));
  for (const s of stats) {
    const source = s.queue.slice(0, -POISON_SUFFIX.length);
    if (!sourceOf.has(s.queue) && s.queue.endsWith(POISON_SUFFIX) && !visible.has(source)) {
      sourceOf.set(s.queue, source);
    }
  }
  return { poisonOf, sourceOf };
}

const waiting = (s) => s.visible + s.inFlight + s.delayed;

function queueRows(sample, history, lines) {
  const { stats, queues } = sample;
  const { poisonOf, sourceOf } = poisonLinks(stats, queues);
  const byName = new Map(stats.map((s) => [s.queue, s]));
  const settings = new Map(queues.map((q) => [q.queue, q]));
  const now = rates.current(history, CURRENT_SPAN_MS);
  const rows = stats.map((s) => {
    const poisonQueue = poisonOf.get(s.queue) || null;
    const poisonStats = poisonQueue === null ? undefined : byName.get(poisonQueue);
    const info = settings.get(s.queue);
    return {
      name: s.queue,
      isPoison: sourceOf.has(s.queue),
      sourceQueue: sourceOf.get(s.queue) || null,
      poisonQueue,
      visible: s.visible,
      inFlight: s.inFlight,
      delayed: s.delayed,
      total: s.total,
      // null: no poison queue, or one the role may not see (poisonHidden)
      poison: poisonStats ? waiting(poisonStats) : null,
      poisonHidden: poisonQueue !== null && !poisonStats,
      oldestVisibleAge: s.oldestVisibleAge,
      counters: Object.fromEntries(rates.COUNTERS.map((name) => [name, s[name]])),
      settings: info ? {
        visibilityTimeout: info.visibilityTimeout,
        messageTtl: info.messageTtl,
        maxDequeueCount: info.maxDequeueCount,
        maxMessageSize: info.maxMessageSize,
        // seconds a deleted message is kept; null: not kept, or an extension before 1.9
        retention: info.retention === undefined ? null : info.retention,
      } : null,
      // extension 1.8 on; false before
      paused: Boolean(info && info.paused),
      rates: now.get(s.queue) || null,
      series: lines.byQueue.get(s.queue) || null,
    };
  });
  // each poison queue right after its source queue
  const key = (row) => (row.isPoison ? `${row.sourceQueue}\u0000poison` : row.name);
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

// The JSON of GET /api/overview.
function overview(sampler, { windowMs, refreshMs, allowWrites }) {
  const sample = sampler.latest;
  const nowMs = Date.now();
  const lines = rates.series(sampler.history, nowMs, windowMs, refreshMs);
  return {
    dashboard: { refreshSeconds: refreshMs / 1000, allowWrites, windowSeconds: windowMs / 1000 },
    database: sample ? sample.identity : null,
    sampledAt: sample ? new Date(sample.at).toISOString() : null,
    error: sampler.failure ? {
      message: sampler.failure.message,
      since: new Date(sampler.failure.since).toISOString(),
    } : null,
    chart: { from: nowMs - windowMs, to: nowMs, times: lines.times, total: lines.total },
    queues: sample ? queueRows(sample, sampler.history, lines) : [],
  };
}

module.exports = { overview, poisonLinks };
