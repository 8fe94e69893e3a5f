'use strict';
// The actions on queues: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue,
// PurgeQueue, GetQueueAttributes.  Each takes (request, client), request
// being { params, config, host }, and returns the action's result.
const { SqsError } = require('../errors');
const { queueUrl, queueArn, queueName } = require('../queue_urls');

// The SQS queue attributes the extension keeps, as queue_create's settings.
const SETTABLE = {
  VisibilityTimeout: { setting: 'visibilityTimeout', min: 0, max: 43200 },
  MessageRetentionPeriod: { setting: 'messageTtl', min: 60, max: 1209600 },
  MaximumMessageSize: { setting: 'maxMessageSize', min: 1024, max: 1048576 },
};

function settingsOf(attributes) {
  const settings = {};
  for (const [name, value] of Object.entries(attributes || {})) {
    const known = SETTABLE[name];
    if (!known) {
      throw new SqsError('InvalidAttributeName', `The attribute ${name} is not supported by this gateway.`);
    }
    const number = /^[0-9]+$/.test(String(value)) ? Number(value) : NaN;
    if (!(number >= known.min && number <= known.max)) {
      throw new SqsError('InvalidAttributeValue', `${name} must be a whole number from ${known.min} to ${known.max}.`);
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

// A queue that exists with other attributes than asked for is
// QueueNameExists; with the same ones, CreateQueue gives its URL again.
async function createQueue({ params, config, host }, client) {
  const name = params.QueueName;
  const settings = settingsOf(params.Attributes);
  if (params.tags && Object.keys(params.tags).length > 0) {
    throw new SqsError('InvalidParameterValue', 'Queue tags are not supported by this gateway yet.');
  }
  try {
    await client.createQueue(name, settings);
  } catch (err) {
    if (err.code !== '42710') throw err;
    const row = await queueRow(client, name);
    for (const [option, value] of Object.entries(settings)) {
      if (Math.round(row[option]) !== value) {
        throw new SqsError('QueueNameExists', `A queue named ${name} exists with another ${option}.`);
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
async function listQueues({ params, config, host }, client) {
  const prefix = params.QueueNamePrefix || '';
  const max = params.MaxResults;
  if (max !== undefined && !(max >= 1 && max <= 1000)) {
    throw new SqsError('InvalidParameterValue', 'MaxResults must be from 1 to 1000.');
  }
  const after = params.NextToken ? Buffer.from(params.NextToken, 'base64url').toString('utf8') : null;
  const names = (await client.listQueues()).map((q) => q.queue)
    .filter((n) => n.startsWith(prefix) && (after === null || n > after)).sort();
  const page = names.slice(0, max || 1000);
  const result = { QueueUrls: page.map((n) => queueUrl(config, host, n)) };
  if (max !== undefined && names.length > page.length) {
    result.NextToken = Buffer.from(page[page.length - 1], 'utf8').toString('base64url');
  }
  return result;
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
};
