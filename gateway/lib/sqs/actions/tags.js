'use strict';
// TagQueue, UntagQueue, ListQueueTags: the queue's tags, kept by the
// extension with the queue (queue_alter's tags, merged in).
const { queueName } = require('../queue_urls');
const { queueRow } = require('../queue_rows');
const { readTags, checkKey, checkTagCount } = require('../queue_tags');

async function tagQueue({ params, config }, client) {
  const name = queueName(config, params.QueueUrl);
  const tags = readTags(params.Tags);
  checkTagCount((await queueRow(client, name)).tags, tags);
  await client.alterQueue(name, { tags });
  return {};
}

async function untagQueue({ params, config }, client) {
  const name = queueName(config, params.QueueUrl);
  await queueRow(client, name);
  const removed = {};
  for (const key of params.TagKeys) {
    checkKey(key);
    removed[key] = null;
  }
  await client.alterQueue(name, { tags: removed });
  return {};
}

async function listQueueTags({ params, config }, client) {
  const tags = (await queueRow(client, queueName(config, params.QueueUrl))).tags || {};
  return Object.keys(tags).length > 0 ? { Tags: tags } : {};
}

module.exports = {
  TagQueue: tagQueue,
  UntagQueue: untagQueue,
  ListQueueTags: listQueueTags,
};
