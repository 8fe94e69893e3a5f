'use strict';
// The actions on a queue: Create Queue, Delete Queue, Get Queue Metadata
// and Set Queue Metadata.  A queue's metadata are kept among its tags
// (queue_alter(tags => ...)), names lower-cased.
const { AzureError } = require('../errors');
const { requestMetadata, queueMetadata, sameMetadata, metadataHeaders } = require('../names');

// What the gateway gives a queue it creates: Azure's default lease of 30
// seconds and life of 7 days (each put names its own), its limit of 64 KiB
// a message, and no poison queue (Azure has none; the Functions runtime
// moves poison messages itself, to <queue>-poison).
const AZURE_QUEUE = { visibilityTimeout: 30, messageTtl: 7 * 24 * 3600, maxDequeueCount: null, maxMessageSize: 65536 };

async function findQueue(client, name) {
  return (await client.listQueues()).find((q) => q.queue === name);
}

async function queueRow(client, name) {
  const row = await findQueue(client, name);
  if (!row) throw new AzureError('QueueNotFound');
  return row;
}

// 201 when made; 204 when it exists with the same metadata, 409 when
// with others.  (Looked for first: a failed queue_create would end the
// transaction.)
async function createQueue({ queue, headers }, client) {
  const metadata = requestMetadata(headers);
  const existing = await findQueue(client, queue);
  if (existing) {
    if (sameMetadata(queueMetadata(existing.tags), metadata)) return { status: 204 };
    throw new AzureError('QueueAlreadyExists');
  }
  await client.createQueue(queue, AZURE_QUEUE);
  if (Object.keys(metadata).length > 0) await client.alterQueue(queue, { tags: metadata });
  return { status: 201 };
}

async function deleteQueue({ queue }, client) {
  await client.dropQueue(queue);
  return { status: 204 };
}

// The metadata and x-ms-approximate-messages-count: every message of the
// queue, visible, in flight or delayed, as Azure counts.
async function getQueueMetadata({ queue }, client) {
  const row = await queueRow(client, queue);
  const stats = await client.stats(queue);
  return {
    status: 200,
    headers: { 'x-ms-approximate-messages-count': String(stats.total), ...metadataHeaders(queueMetadata(row.tags)) },
  };
}

// The request's metadata replace the queue's: those not given are removed.
async function setQueueMetadata({ queue, headers }, client) {
  const metadata = requestMetadata(headers);
  const current = queueMetadata((await queueRow(client, queue)).tags);
  const tags = { ...metadata };
  for (const name of Object.keys(current)) if (!(name in metadata)) tags[name] = null;
  if (Object.keys(tags).length > 0) await client.alterQueue(queue, { tags });
  return { status: 204 };
}

module.exports = { createQueue, deleteQueue, getQueueMetadata, setQueueMetadata, AZURE_QUEUE };
