'use strict';
// The actions on queues: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
// PurgeQueue, GetQueueAttributes, SetQueueAttributes,
// ListDeadLetterSourceQueues (tags: tags.js).  Each takes (request, client), request
// being { params, config, host }, and returns the action's result.
const { SqsError } = require('../errors');
const { queueUrl, queueName } = require('../queue_urls');
const { readAttributes, queueAttributes, QUEUE_ATTRIBUTE_NAMES } = require('../queue_attributes');
const { readTags } = require('../queue_tags');
const { queueRow } = require('../queue_rows');

// The extension's settings of 1.6 and the attributes kept, set on queue
// name; nothing when there is nothing to set.
async function alterQueue(client, name, settings, stored, tags) {
  if (settings.poisonQueue !== undefined && !(await client.listQueues()).some((q) => q.queue === settings.poisonQueue)) {
    throw new SqsError('InvalidParameterValue', 'Value for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.');
  }
  const altered = { ...settings };
  if (Object.keys(stored).length > 0) altered.attributes = stored;
  if (tags && Object.keys(tags).length > 0) altered.tags = tags;
  if (Object.keys(altered).length > 0) await client.alterQueue(name, altered);
}

// A queue that exists with other values of the attributes asked for is
// QueueNameExists; with the same ones, CreateQueue gives its URL again.
// (It is looked for first: a failed queue_create would end the
// transaction.)
async function createQueue({ params, config, host }, client) {
  const name = params.QueueName;
  const { settings, stored } = readAttributes(config, name, params.Attributes, true);
  const tags = readTags(params.tags);
  const existing = (await client.listQueues()).find((q) => q.queue === name);
  if (existing) {
    const current = queueAttributes(config, name, existing, { visible: 0, inFlight: 0, delayed: 0 });
    for (const [attribute, value] of Object.entries(params.Attributes || {})) {
      if (current[attribute] !== undefined && current[attribute] !== String(value)) {
        throw new SqsError('QueueNameExists', `A queue already exists with the same name and a different value for attribute ${attribute}`);
      }
    }
    return { QueueUrl: queueUrl(config, host, name) };
  }
  const { visibilityTimeout, messageTtl, maxMessageSize, ...later } = settings;
  const created = { visibilityTimeout, messageTtl, maxMessageSize };
  for (const key of Object.keys(created)) if (created[key] === undefined) delete created[key];
  // as in SQS, no dead-letter queue without a RedrivePolicy
  await client.createQueue(name, { ...created, maxDequeueCount: null });
  await alterQueue(client, name, later, stored, tags);
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
  const { settings, stored } = readAttributes(config, name, params.Attributes, false);
  await queueRow(client, name);
  await alterQueue(client, name, settings, stored);
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
  const all = queueAttributes(config, name, await queueRow(client, name), await client.stats(name));
  const asked = params.AttributeNames || [];
  const attributes = {};
  for (const key of asked) {
    if (key !== 'All' && !QUEUE_ATTRIBUTE_NAMES.includes(key)) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${key}.`);
  }
  for (const key of asked.includes('All') ? Object.keys(all) : asked) {
    if (key in all) attributes[key] = all[key];
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
