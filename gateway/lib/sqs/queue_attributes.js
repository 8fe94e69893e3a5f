'use strict';
/*-------------------------------------------------------------------------
 *
 * queue_attributes.js
 *		SQS queue attributes, to the extension's settings and back.
 *
 * Some attributes are settings the extension acts on (VisibilityTimeout,
 * MessageRetentionPeriod, MaximumMessageSize, DelaySeconds, RedrivePolicy);
 * the others are kept verbatim in the queue's attributes (queue_alter's
 * attributes), which the gateway reads back: ReceiveMessageWaitTimeSeconds
 * and the FIFO ones, which the gateway acts on, and those it keeps without
 * acting on them (Policy, encryption, RedriveAllowPolicy).
 *
 *-------------------------------------------------------------------------
 */
const { SqsError } = require('./errors');
const { queueArn, queueNameOfArn } = require('./queue_urls');

const FIFO_SUFFIX = '.fifo';

const isFifoName = (name) => name.endsWith(FIFO_SUFFIX) && name.length > FIFO_SUFFIX.length;

// Whole numbers of seconds or bytes, each kept as an extension setting.
const NUMERIC = {
  VisibilityTimeout: { setting: 'visibilityTimeout', min: 0, max: 43200 },
  MessageRetentionPeriod: { setting: 'messageTtl', min: 60, max: 1209600 },
  MaximumMessageSize: { setting: 'maxMessageSize', min: 1024, max: 1048576 },
  DelaySeconds: { setting: 'delay', min: 0, max: 900 },
  ReceiveMessageWaitTimeSeconds: { stored: true, min: 0, max: 20 },
  KmsDataKeyReusePeriodSeconds: { stored: true, min: 60, max: 86400 },
};

// Kept as given; values checked where listed.
const STORED = {
  Policy: null,
  RedriveAllowPolicy: null,
  KmsMasterKeyId: null,
  SqsManagedSseEnabled: ['true', 'false'],
  ContentBasedDeduplication: ['true', 'false'],
  DeduplicationScope: ['messageGroup', 'queue'],
  FifoThroughputLimit: ['perQueue', 'perMessageGroupId'],
};
// Meaningful on FIFO queues only.
const FIFO_ONLY = new Set(['ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);

// A visibility timeout as the extension takes it: SQS's 0 (visible again
// at once) is a lease of a millisecond, as the extension's leases last.
function leaseSeconds(seconds) {
  return seconds === 0 ? 0.001 : seconds;
}

function invalid(attribute, reason) {
  return new SqsError('InvalidAttributeValue', `Invalid value for the parameter ${attribute}. Reason: ${reason}`);
}

function wholeNumber(attribute, value, { min, max }) {
  const number = /^[0-9]+$/.test(String(value)) ? Number(value) : NaN;
  if (!(number >= min && number <= max)) throw invalid(attribute, `it must be a whole number from ${min} to ${max}.`);
  return number;
}

// RedrivePolicy: {deadLetterTargetArn, maxReceiveCount}, the target a queue
// of this account of the same type; "" removes it.
function redrive(config, name, text, settings) {
  if (text === '') {
    settings.maxDequeueCount = 0;
    return;
  }
  let policy;
  try {
    policy = JSON.parse(text);
  } catch {
    throw invalid('RedrivePolicy', 'it must be a JSON object.');
  }
  const count = Number(policy && policy.maxReceiveCount);
  if (!(Number.isInteger(count) && count >= 1 && count <= 1000)) {
    throw invalid('RedrivePolicy', 'maxReceiveCount must be from 1 to 1000.');
  }
  const target = queueNameOfArn(config, policy.deadLetterTargetArn);
  if (target === null) throw invalid('RedrivePolicy', 'deadLetterTargetArn must be the ARN of a queue of this account and region.');
  if (isFifoName(target) !== isFifoName(name)) {
    throw invalid('RedrivePolicy', 'the dead-letter queue must be of the same type as the source queue.');
  }
  settings.maxDequeueCount = count;
  settings.poisonQueue = target;
}

/*
 * The attributes of a CreateQueue or SetQueueAttributes for queue name, as
 * { settings, stored }: extension settings, and the attributes to keep.
 * creating: FifoQueue may be given (and must agree with the name).
 */
function readAttributes(config, name, attributes, creating) {
  const settings = {};
  const stored = {};
  const fifo = isFifoName(name);
  for (const [attribute, value] of Object.entries(attributes || {})) {
    if (attribute === 'FifoQueue' && creating) {
      if (value !== String(fifo)) {
        throw invalid('FifoQueue', fifo ? 'a queue whose name ends in .fifo is a FIFO queue.' : 'the name of a FIFO queue must end in .fifo.');
      }
    } else if (attribute === 'RedrivePolicy') {
      redrive(config, name, value, settings);
    } else if (NUMERIC[attribute]) {
      const number = wholeNumber(attribute, value, NUMERIC[attribute]);
      if (NUMERIC[attribute].stored) stored[attribute] = String(number);
      else if (attribute === 'VisibilityTimeout') settings.visibilityTimeout = leaseSeconds(number);
      else settings[NUMERIC[attribute].setting] = number;
    } else if (Object.prototype.hasOwnProperty.call(STORED, attribute)) {
      if (FIFO_ONLY.has(attribute) && !fifo) {
        throw new SqsError('InvalidAttributeName', `The attribute ${attribute} is for FIFO queues only.`);
      }
      const allowed = STORED[attribute];
      if (allowed && !allowed.includes(value)) throw invalid(attribute, `it must be one of ${allowed.join(', ')}.`);
      stored[attribute] = String(value);
    } else {
      throw new SqsError('InvalidAttributeName', `Unknown Attribute ${attribute}.`);
    }
  }
  // the messages of a FIFO queue's groups become visible at their turn
  if (fifo && settings.delay > 0) {
    throw invalid('DelaySeconds', 'this gateway gives FIFO queues no delay; give it to the messages\' consumers instead.');
  }
  if (fifo && creating) stored.FifoQueue = 'true';
  return { settings, stored };
}

/*
 * Every attribute of a queue, as GetQueueAttributes gives them: row from
 * queue_list, stats from queue_stats.
 */
function queueAttributes(config, name, row, stats) {
  const stored = row.attributes || {};
  const all = {
    ApproximateNumberOfMessages: stats.visible,
    ApproximateNumberOfMessagesNotVisible: stats.inFlight,
    ApproximateNumberOfMessagesDelayed: stats.delayed,
    CreatedTimestamp: Math.floor(new Date(row.createdAt).getTime() / 1000),
    LastModifiedTimestamp: Math.floor(new Date(row.createdAt).getTime() / 1000),
    DelaySeconds: Math.round(row.delay || 0),
    MaximumMessageSize: row.maxMessageSize,
    MessageRetentionPeriod: Math.round(row.messageTtl),
    QueueArn: queueArn(config, name),
    ReceiveMessageWaitTimeSeconds: stored.ReceiveMessageWaitTimeSeconds || 0,
    VisibilityTimeout: Math.round(row.visibilityTimeout),
    SqsManagedSseEnabled: 'false',
  };
  for (const key of [...Object.keys(STORED), 'KmsDataKeyReusePeriodSeconds', 'FifoQueue']) {
    if (stored[key] !== undefined) all[key] = stored[key];
  }
  if (isFifoName(name)) {
    all.FifoQueue = 'true';
    all.ContentBasedDeduplication = stored.ContentBasedDeduplication || 'false';
    all.DeduplicationScope = stored.DeduplicationScope || 'queue';
    all.FifoThroughputLimit = stored.FifoThroughputLimit || 'perQueue';
  }
  if (row.maxDequeueCount !== null && row.poisonQueue) {
    all.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: queueArn(config, row.poisonQueue), maxReceiveCount: row.maxDequeueCount });
  }
  for (const key of Object.keys(all)) all[key] = String(all[key]);
  return all;
}

// Every name GetQueueAttributes knows; another is InvalidAttributeName.
const QUEUE_ATTRIBUTE_NAMES = [
  'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp', 'LastModifiedTimestamp', 'QueueArn', 'FifoQueue', 'RedrivePolicy',
  ...Object.keys(NUMERIC), ...Object.keys(STORED),
];

module.exports = { isFifoName, leaseSeconds, readAttributes, queueAttributes, QUEUE_ATTRIBUTE_NAMES };
