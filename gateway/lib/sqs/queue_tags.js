'use strict';
// Queue tags as SQS limits them: at most 50 on a queue, keys of 1 to 128
// characters, values of at most 256.
const { SqsError } = require('./errors');

const MAX_TAGS = 50;

function checkKey(key) {
  if (typeof key !== 'string' || key.length < 1 || key.length > 128) {
    throw new SqsError('InvalidParameterValue', 'A tag key must be 1 to 128 characters long.');
  }
}

// The tags of a CreateQueue or TagQueue, checked; {} when none.
function readTags(tags) {
  const read = {};
  for (const [key, value] of Object.entries(tags || {})) {
    checkKey(key);
    if (typeof value !== 'string' || value.length > 256) {
      throw new SqsError('InvalidParameterValue', `The value of tag ${key.slice(0, 128)} must be at most 256 characters long.`);
    }
    read[key] = value;
  }
  if (Object.keys(read).length > MAX_TAGS) throw new SqsError('InvalidParameterValue', `A queue has at most ${MAX_TAGS} tags.`);
  return read;
}

// The tags a queue would have with these added: refused over the limit.
function checkTagCount(current, added) {
  if (Object.keys({ ...current, ...added }).length > MAX_TAGS) {
    throw new SqsError('InvalidParameterValue', `A queue has at most ${MAX_TAGS} tags.`);
  }
}

module.exports = { readTags, checkKey, checkTagCount };
