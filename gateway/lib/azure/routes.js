'use strict';
// Which operation of Azure Queue Storage a request names, from its verb,
// its path (path-style, as Azurite and the storage emulator have it:
// /<account>, /<account>/<queue>, /<account>/<queue>/messages and
// /<account>/<queue>/messages/<message id>) and its comp and restype
// parameters.  The operations the gateway does not have (service
// properties and statistics, queue access policies, user delegation keys)
// are refused with UnsupportedQueryParameter, naming comp.
const { AzureError } = require('./errors');
const service = require('./actions/service');
const queues = require('./actions/queues');
const messages = require('./actions/messages');

// The operations whose action is one call of the extension, run as one
// statement (database.js, asRoleOneStatement): those on messages.
const ONE_CALL = new Set(['PutMessage', 'GetMessages', 'PeekMessages', 'UpdateMessage', 'DeleteMessage', 'ClearMessages']);

// resource -> comp ('' for none) -> verb -> [operation, action]
const OPERATIONS = {
  account: {
    list: { GET: ['ListQueues', service.listQueues] },
  },
  queue: {
    '': { PUT: ['CreateQueue', queues.createQueue], DELETE: ['DeleteQueue', queues.deleteQueue] },
    metadata: {
      GET: ['GetQueueMetadata', queues.getQueueMetadata],
      HEAD: ['GetQueueMetadata', queues.getQueueMetadata],
      PUT: ['SetQueueMetadata', queues.setQueueMetadata],
    },
  },
  messages: {
    '': {
      POST: ['PutMessage', messages.putMessage],
      GET: ['GetMessages', messages.getMessages],
      DELETE: ['ClearMessages', messages.clearMessages],
    },
  },
  message: {
    '': { PUT: ['UpdateMessage', messages.updateMessage], DELETE: ['DeleteMessage', messages.deleteMessage] },
  },
};

// What Azure has and the gateway does not: resource -> comp -> its name.
const NOT_SUPPORTED = {
  account: {
    properties: 'the service properties (Get and Set Queue Service Properties) and account information',
    stats: 'the service statistics (Get Queue Service Stats)',
    userdelegationkey: 'user delegation keys',
  },
  queue: { acl: 'stored access policies (Get and Set Queue ACL)' },
};

// segments: the path's, without the leading account; what the path names.
function resourceOf(segments) {
  if (segments.length === 0) return { resource: 'account' };
  if (segments.length === 1) return { resource: 'queue', queue: segments[0] };
  if (segments[1] !== 'messages' || segments.length > 3) throw new AzureError('InvalidUri');
  if (segments.length === 2) return { resource: 'messages', queue: segments[0] };
  return { resource: 'message', queue: segments[0], messageId: segments[2] };
}

// { operation, action, oneCall, queue, messageId } of the request.
function route(method, segments, query) {
  const { resource, queue, messageId } = resourceOf(segments);
  const comp = query.get('comp') || '';
  // own properties only: a comp of "constructor" names nothing
  const entry = (table, key) => (table && Object.hasOwn(table, key) ? table[key] : undefined);
  const unsupported = entry(NOT_SUPPORTED[resource], comp);
  if (unsupported) {
    throw new AzureError('UnsupportedQueryParameter', {
      message: `This gateway does not support ${unsupported}.`,
      details: { QueryParameterName: 'comp', QueryParameterValue: comp },
    });
  }
  const verbs = entry(OPERATIONS[resource], comp);
  if (!verbs) throw new AzureError('InvalidQueryParameterValue', { details: { QueryParameterName: 'comp', QueryParameterValue: comp } });
  const found = entry(verbs, method);
  if (!found) throw new AzureError('UnsupportedHttpVerb', { headers: { Allow: Object.keys(verbs).join(', ') } });
  // Get Messages with peekonly=true is Peek Messages
  const [operation, action] = found[0] === 'GetMessages' && query.get('peekonly') === 'true'
    ? ['PeekMessages', messages.peekMessages] : found;
  return { operation, action, oneCall: ONE_CALL.has(operation), queue, messageId };
}

module.exports = { route };
