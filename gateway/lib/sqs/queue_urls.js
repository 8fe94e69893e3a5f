'use strict';
// Queue URLs and ARNs: http://<the host the client reached>/<account>/<name>
// and arn:aws:sqs:<region>:<account>:<name>.  A request names a queue by
// its URL; only the path counts, so a client that reached the gateway
// through another host name still names the same queue.
const { SqsError } = require('./errors');

function queueUrl(config, host, name) {
  return `http://${host}/${config.accountId}/${encodeURIComponent(name)}`;
}

function queueArn(config, name) {
  return `arn:aws:sqs:${config.region}:${config.accountId}:${name}`;
}

// The queue name a QueueUrl names; QueueDoesNotExist when it names
// another account or no queue at all.
function queueName(config, url) {
  let path;
  try {
    path = new URL(url, 'http://gateway').pathname;
  } catch {
    path = '';
  }
  const parts = path.split('/');
  const noQueue = () => new SqsError('QueueDoesNotExist', `The queue URL ${String(url).slice(0, 200)} names no queue of this account.`);
  if (parts.length !== 3 || parts[0] !== '' || parts[1] !== config.accountId || parts[2] === '') throw noQueue();
  try {
    return decodeURIComponent(parts[2]);
  } catch {
    // a broken escape (%ZZ) names no queue either
    throw noQueue();
  }
}

// The queue name an ARN of this account and region names, or null.
function queueNameOfArn(config, arn) {
  const prefix = `arn:aws:sqs:${config.region}:${config.accountId}:`;
  if (typeof arn !== 'string' || !arn.startsWith(prefix) || arn.length === prefix.length) return null;
  return arn.slice(prefix.length);
}

module.exports = { queueUrl, queueArn, queueName, queueNameOfArn };
