'use strict';
// Azure Queue Storage's rules for the names of queues and of metadata,
// which the gateway enforces (the extension allows more, as SQS does).
//
// A queue name: 3 to 63 characters of lower-case letters, digits and
// hyphens, starting and ending with a letter or a digit, with no two
// hyphens in a row.  Too short or too long is OutOfRangeInput, any other
// fault InvalidResourceName, as Azure answers.
//
// A metadata name (x-ms-meta-<name>): a C# identifier, letters, digits
// and underscores not starting with a digit.  Azure compares them without
// case; the gateway keeps them lower-cased among the queue's tags.
const { AzureError } = require('./errors');

const QUEUE_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]$/;
const METADATA_NAME = /^[a-z_][a-z0-9_]*$/;
const METADATA_PREFIX = 'x-ms-meta-';
// names and values together, as Azure counts them
const MAX_METADATA_BYTES = 8 * 1024;

function isQueueName(name) {
  return name.length >= 3 && name.length <= 63 && QUEUE_NAME.test(name);
}

function checkQueueName(name) {
  if (name.length < 3 || name.length > 63) {
    throw new AzureError('OutOfRangeInput', { message: 'The specified resource name length is not within the permissible limits.' });
  }
  if (!QUEUE_NAME.test(name)) throw new AzureError('InvalidResourceName');
}

// The metadata of a request's x-ms-meta-* headers (node's headers, names
// lower-cased already), checked: { name: value }.
function requestMetadata(headers) {
  const metadata = {};
  let bytes = 0;
  for (const [header, value] of Object.entries(headers)) {
    if (!header.startsWith(METADATA_PREFIX)) continue;
    const name = header.slice(METADATA_PREFIX.length);
    if (name === '') throw new AzureError('EmptyMetadataKey');
    if (!METADATA_NAME.test(name)) throw new AzureError('InvalidMetadata', { details: { MetadataName: name.slice(0, 256) } });
    metadata[name] = String(value);
    bytes += Buffer.byteLength(name) + Buffer.byteLength(metadata[name]);
  }
  if (bytes > MAX_METADATA_BYTES) throw new AzureError('MetadataTooLarge');
  return metadata;
}

// A queue's metadata: those of its tags (queue_list's tags) whose names
// are metadata names; tags given through SQS with other names are not.
function queueMetadata(tags) {
  const metadata = {};
  for (const [name, value] of Object.entries(tags || {})) {
    if (METADATA_NAME.test(name) && typeof value === 'string') metadata[name] = value;
  }
  return metadata;
}

function sameMetadata(a, b) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

// The headers that answer a queue's metadata.
function metadataHeaders(metadata) {
  return Object.fromEntries(Object.entries(metadata).map(([name, value]) => [METADATA_PREFIX + name, value]));
}

module.exports = { isQueueName, checkQueueName, requestMetadata, queueMetadata, sameMetadata, metadataHeaders };
