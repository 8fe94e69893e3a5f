'use strict';
// A queue's row of queue_list (its settings, attributes and tags), or
// QueueDoesNotExist.
const { SqsError } = require('./errors');

async function queueRow(client, name) {
  const row = (await client.listQueues()).find((q) => q.queue === name);
  if (!row) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
  return row;
}

module.exports = { queueRow };
