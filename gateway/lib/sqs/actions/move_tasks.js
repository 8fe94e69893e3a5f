'use strict';
// StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask: the
// messages of a dead-letter queue moved back, by queue_redrive.  A move
// runs whole within its request, in its transaction, so a task has
// completed by the time its handle is answered; the last task of a queue
// is kept in the queue's attributes, under MOVE_TASK_KEY, for
// ListMessageMoveTasks.
const { SqsError } = require('../errors');
const { queueArn, queueNameOfArn } = require('../queue_urls');

const MOVE_TASK_KEY = 'gateway.LastMessageMoveTask';

function notFound(what) {
  return new SqsError('ResourceNotFoundException', `${what} does not exist.`);
}

// The queue an ARN names among the queues of queue_list, or an error.
function queueOfArn(config, queues, arn, parameter) {
  const name = queueNameOfArn(config, arn);
  const row = name === null ? undefined : queues.find((q) => q.queue === name);
  if (!row) throw notFound(`The queue ${parameter} ${String(arn).slice(0, 200)} names`);
  return row;
}

async function startMessageMoveTask({ params, config }, client) {
  const rate = params.MaxNumberOfMessagesPerSecond;
  if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= 500)) {
    throw new SqsError('InvalidParameterValue', 'MaxNumberOfMessagesPerSecond must be from 1 to 500.');
  }
  const queues = await client.listQueues();
  const source = queueOfArn(config, queues, params.SourceArn, 'SourceArn');
  const served = queues.filter((q) => q.poisonQueue === source.queue && q.maxDequeueCount !== null);
  if (served.length === 0) {
    throw new SqsError('InvalidParameterValue', 'Source queue must be configured as a Dead Letter Queue.');
  }
  let destination;
  if (params.DestinationArn !== undefined) destination = queueOfArn(config, queues, params.DestinationArn, 'DestinationArn').queue;
  else if (served.length === 1) destination = served[0].queue;
  else throw new SqsError('InvalidParameterValue', 'This dead-letter queue serves several queues: give the DestinationArn to move its messages to.');
  const started = Date.now();
  const toMove = (await client.stats(source.queue)).visible;
  const moved = await client.redrive(source.queue, { destination });
  const task = {
    TaskHandle: Buffer.from(JSON.stringify({ source: source.queue, started }), 'utf8').toString('base64url'),
    Status: 'COMPLETED',
    SourceArn: queueArn(config, source.queue),
    DestinationArn: queueArn(config, destination),
    ApproximateNumberOfMessagesMoved: moved,
    ApproximateNumberOfMessagesToMove: toMove,
    StartedTimestamp: started,
  };
  if (rate !== undefined) task.MaxNumberOfMessagesPerSecond = rate;
  await client.alterQueue(source.queue, { attributes: { [MOVE_TASK_KEY]: JSON.stringify(task) } });
  return { TaskHandle: task.TaskHandle };
}

function lastTask(row) {
  const text = (row.attributes || {})[MOVE_TASK_KEY];
  return text === undefined ? null : JSON.parse(text);
}

async function listMessageMoveTasks({ params, config }, client) {
  const max = params.MaxResults;
  if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= 10)) {
    throw new SqsError('InvalidParameterValue', 'MaxResults must be from 1 to 10.');
  }
  const task = lastTask(queueOfArn(config, await client.listQueues(), params.SourceArn, 'SourceArn'));
  return task === null ? { Results: [] } : { Results: [task] };
}

// Every task has completed within its request: none is left to cancel.
async function cancelMessageMoveTask({ params }, client) {
  let handle;
  try {
    handle = JSON.parse(Buffer.from(params.TaskHandle, 'base64url').toString('utf8'));
  } catch {
    handle = null;
  }
  const row = handle && (await client.listQueues()).find((q) => q.queue === handle.source);
  const task = row ? lastTask(row) : null;
  if (!task || task.TaskHandle !== params.TaskHandle) throw notFound('The task');
  throw new SqsError('ResourceNotFoundException', 'The task is not running: it completed within the request that started it.');
}

module.exports = {
  StartMessageMoveTask: startMessageMoveTask,
  ListMessageMoveTasks: listMessageMoveTasks,
  CancelMessageMoveTask: cancelMessageMoveTask,
};
