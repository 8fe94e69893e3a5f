'use strict';
// The actions on queues: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
// PurgeQueue, GetQueueAttributes, SetQueueAttributes,
// ListDeadLetterSourceQueues.  Each takes (request, client), request
// being { params, config, host }, and returns the action's result.
const { SqsError } = require('../errors');
const { queueUrl, queueArn, queueName } = require('../queue_urls');

// The SQS queue attributes the extension keeps, as queue_create's settings.
const SETTABLE = {
  VisibilityTimeout: { setting: 'visibilityTimeout', min: 0, max: 43200 },
  MessageRetentionPeriod: { setting: 'messageTtl', min: 60, max: 1209600 },
  MaximumMessageSize: { setting: 'maxMessageSize', min: 1024, max: 1048576 },
};

// RedrivePolicy: the extension moves a message received maxReceiveCount
// times to the queue's poison queue, <name>-poison, the one dead-letter
// queue it has for now.
function redriveSetting(config, name, text) {
  let policy;
  try {
    policy = JSON.parse(text);
  } catch {
    throw new SqsError('InvalidAttributeValue', 'RedrivePolicy must be a JSON object.');
  }
  const count = Number(policy && policy.maxReceiveCount);
  if (!(Number.isInteger(count) && count >= 1 && count <= 1000)) {
    throw new SqsError('InvalidAttributeValue', 'RedrivePolicy: maxReceiveCount must be from 1 to 1000.');
  }
  if (policy.deadLetterTargetArn !== queueArn(config, `${name}-poison`)) {
    throw new SqsError('InvalidAttributeValue', `RedrivePolicy: the dead-letter queue must be ${name}-poison (${queueArn(config, `${name}-poison`)}).`);
  }
  return count;
}

function settingsOf(config, name, attributes) {
  const settings = {};
  for (const [attribute, value] of Object.entries(attributes || {})) {
    if (attribute === 'RedrivePolicy') {
      settings.maxDequeueCount = redriveSetting(config, name, value);
      continue;
    }
    const known = SETTABLE[attribute];
    if (!known) {
      throw new SqsError('InvalidAttributeName', `The attribute ${attribute} is not supported by this gateway.`);
    }
    const number = /^[0-9]+$/.test(String(value)) ? Number(value) : NaN;
    if (!(number >= known.min && number <= known.max)) {
      throw new SqsError('InvalidAttributeValue', `${attribute} must be a whole number from ${known.min} to ${known.max}.`);
    }
    settings[known.setting] = number;
  }
  return settings;
}

async function queueRow(client, name) {
  const row = (await client.listQueues()).find((q) => q.queue === name);
  if (!row) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
  return row;
}

// A queue that exists with other values of the attributes asked for is
// QueueNameExists; with the same ones, CreateQueue gives its URL again.
async function createQueue({ params, config, host }, client) {
  const name = params.QueueName;
  // as in SQS, no dead-letter queue without a RedrivePolicy
  const given = settingsOf(config, name, params.Attributes);
  const settings = { maxDequeueCount: null, ...given };
  if (params.tags && Object.keys(params.tags).length > 0) {
    throw new SqsError('InvalidParameterValue', 'Queue tags are not supported by this gateway yet.');
  }
  // looked up first: queue_create's error for a queue that exists would
  // abort the request's transaction
  const row = (await client.listQueues()).find((q) => q.queue === name);
  if (!row) {
    await client.createQueue(name, settings);
  } else {
    // as in SQS, only the attributes given are compared
    for (const [option, value] of Object.entries(given)) {
      if (Math.round(row[option]) !== value && row[option] !== value) {
        const attribute = Object.keys(SETTABLE).find((a) => SETTABLE[a].setting === option) || 'RedrivePolicy';
        throw new SqsError('QueueNameExists', `A queue already exists with the same name and a different value for attribute ${attribute}`);
      }
    }
  }
  return { QueueUrl: queueUrl(config, host, name) };
}

async function getQueueUrl({ params, config, host }, client) {
  await queueRow(client, params.QueueName);
  return { QueueUrl: queueUrl(config, host, params.QueueName) };
}

// Names in order, MaxResults (1 to 1,000) at a time; NextToken is the last
// name given.  Without MaxResults, at most 1,000 and no token, as SQS does.
function page(names, params, config, host) {
  const max = params.MaxResults;
  if (max !== undefined && !(max >= 1 && max <= 1000)) {
    throw new SqsError('InvalidParameterValue', 'MaxResults must be from 1 to 1000.');
  }
  const after = params.NextToken ? Buffer.from(params.NextToken, 'base64url').toString('utf8') : null;
  const left = names.filter((n) => after === null || n > after).sort();
  const given = left.slice(0, max || 1000);
  const result = { urls: given.map((n) => queueUrl(config, host, n)) };
  if (max !== undefined && left.length > given.length) {
    result.NextToken = Buffer.from(given[given.length - 1], 'utf8').toString('base64url');
  }
  return result;
}

async function listQueues({ params, config, host }, client) {
  const prefix = params.QueueNamePrefix || '';
  const names = (await client.listQueues()).map((q) => q.queue).filter((n) => n.startsWith(prefix));
  const { urls, NextToken } = page(names, params, config, host);
  return NextToken ? { QueueUrls: urls, NextToken } : { QueueUrls: urls };
}

// The queues whose dead-letter queue this one is.
async function listDeadLetterSourceQueues({ params, config, host }, client) {
  const name = queueName(config, params.QueueUrl);
  const queues = await client.listQueues();
  if (!queues.some((q) => q.queue === name)) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
  const names = queues.filter((q) => q.poisonQueue === name && q.maxDequeueCount !== null).map((q) => q.queue);
  const { urls, NextToken } = page(names, params, config, host);
  return NextToken ? { queueUrls: urls, NextToken } : { queueUrls: urls };
}

async function setQueueAttributes({ params, config }, client) {
  const name = queueName(config, params.QueueUrl);
  await client.alterQueue(name, settingsOf(config, name, params.Attributes));
  return {};
}

async function deleteQueue({ params, config }, client) {
  await client.dropQueue(queueName(config, params.QueueUrl));
  return {};
}

async function purgeQueue({ params, config }, client) {
  await client.clear(queueName(config, params.QueueUrl));
  return {};
}

// The attributes asked for ("All", or names), from queue_list and queue_stats.
async function getQueueAttributes({ params, config }, client) {
  const name = queueName(config, params.QueueUrl);
  const row = await queueRow(client, name);
  const stats = await client.stats(name);
  const all = {
    ApproximateNumberOfMessages: stats.visible,
    ApproximateNumberOfMessagesNotVisible: stats.inFlight,
    ApproximateNumberOfMessagesDelayed: stats.delayed,
    CreatedTimestamp: Math.floor(new Date(row.createdAt).getTime() / 1000),
    DelaySeconds: 0,
    MaximumMessageSize: row.maxMessageSize,
    MessageRetentionPeriod: Math.round(row.messageTtl),
    QueueArn: queueArn(config, name),
    ReceiveMessageWaitTimeSeconds: 0,
    VisibilityTimeout: Math.round(row.visibilityTimeout),
  };
  if (row.maxDequeueCount !== null && row.poisonQueue) {
    all.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: queueArn(config, row.poisonQueue), maxReceiveCount: row.maxDequeueCount });
  }
  const asked = params.AttributeNames || [];
  const attributes = {};
  for (const key of asked.includes('All') ? Object.keys(all) : asked) {
    if (!(key in all)) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${key}.`);
    attributes[key] = String(all[key]);
  }
  return Object.keys(attributes).length > 0 ? { Attributes: attributes } : {};
}

module.exports = {
  CreateQueue: createQueue,
  GetQueueUrl: getQueueUrl,
  ListQueues: listQueues,
  DeleteQueue: deleteQueue,
  PurgeQueue: purgeQueue,
  GetQueueAttributes: getQueueAttributes,
  SetQueueAttributes: setQueueAttributes,
  ListDeadLetterSourceQueues: listDeadLetterSourceQueues,
};
