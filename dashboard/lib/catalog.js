'use strict';
// What the role may see besides the queues (extension 1.10): the topics,
// each with its subscriptions and their filters (queue_topics), and the
// schedules of its queues (queue_schedules). Read-only: the dashboard
// changes neither. Each answer is made field by field, as the messages are.
const { time } = require('./messages');

// SQLSTATE undefined_function: an extension before 1.10 has neither.
const UNDEFINED_FUNCTION = '42883';

// The rows of a call, or null when the extension has no such function.
async function rowsOf(call) {
  try {
    return await call();
  } catch (err) {
    if (err.code === UNDEFINED_FUNCTION) return null;
    throw err;
  }
}

// The JSON of GET /api/topics: a topic each, its subscriptions in the
// order of their queues' names. queue_topics gives a row per subscription,
// by topic, and a row with queue null for a topic without any.
async function topicList(client) {
  const rows = await rowsOf(() => client.topics());
  if (rows === null) return { available: false, topics: [] };
  const topics = [];
  for (const row of rows) {
    let topic = topics[topics.length - 1];
    if (topic === undefined || topic.topic !== row.topic) {
      topic = { topic: row.topic, subscriptions: [] };
      topics.push(topic);
    }
    if (row.queue !== null) topic.subscriptions.push({ queue: row.queue, filter: row.filter === undefined ? null : row.filter });
  }
  return { available: true, topics };
}

// The JSON of GET /api/schedules, in the order of their names.
async function scheduleList(client) {
  const rows = await rowsOf(() => client.schedules());
  if (rows === null) return { available: false, schedules: [] };
  return {
    available: true,
    schedules: rows.map((row) => ({
      schedule: row.schedule,
      queue: row.queue,
      cron: row.cron,
      timeZone: row.timeZone,
      nextAt: time(row.nextAt),
      // null: no message put yet
      lastAt: time(row.lastAt),
    })),
  };
}

module.exports = { topicList, scheduleList };
