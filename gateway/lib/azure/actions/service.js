'use strict';
// The actions on the account: List Queues.  Each action takes (request,
// client), request being what handler.js read of it, and returns the
// answer: { status, headers, document } (document: the root of an XML
// body, [name, content, attributes]).
const { AzureError } = require('../errors');
const { integerParameter } = require('../parameters');
const { isQueueName, queueMetadata } = require('../names');

const MAX_RESULTS = 5000;

// A marker as List Queues gives it ("/<account>/<first queue of the next
// page>"), or a bare queue name: the name to start from.
function markerName(account, marker) {
  const prefix = `/${account}/`;
  return marker.startsWith(prefix) ? marker.slice(prefix.length) : marker;
}

function queueEntry(queue, withMetadata) {
  const entry = [['Name', queue.queue]];
  if (withMetadata) entry.push(['Metadata', Object.entries(queueMetadata(queue.tags)).map(([k, v]) => [k, v])]);
  return ['Queue', entry];
}

// The queues whose names Azure allows, in order, a page of maxresults
// (5000 at most) from the marker on; the queues of other names (made
// through SQL or SQS) are not listed, as Azure's SDKs could not name them.
async function listQueues({ account, query, serviceEndpoint }, client) {
  const include = query.get('include');
  if (include !== undefined && include !== '' && include !== 'metadata') {
    throw new AzureError('InvalidQueryParameterValue', { details: { QueryParameterName: 'include', QueryParameterValue: include } });
  }
  const prefix = query.get('prefix') || '';
  const marker = query.get('marker') || '';
  const max = integerParameter(query, 'maxresults', { min: 1, max: Number.MAX_SAFE_INTEGER, fallback: MAX_RESULTS });
  const start = markerName(account, marker);
  const queues = (await client.listQueues())
    .filter((q) => isQueueName(q.queue) && q.queue.startsWith(prefix) && q.queue >= start)
    .sort((a, b) => (a.queue < b.queue ? -1 : 1));
  const page = queues.slice(0, Math.min(max, MAX_RESULTS));
  const content = [];
  if (query.has('prefix')) content.push(['Prefix', prefix]);
  if (query.has('marker')) content.push(['Marker', marker]);
  if (query.has('maxresults')) content.push(['MaxResults', max]);
  content.push(['Queues', page.map((q) => queueEntry(q, include === 'metadata'))]);
  content.push(['NextMarker', queues.length > page.length ? `/${account}/${queues[page.length].queue}` : null]);
  return { status: 200, document: ['EnumerationResults', content, { ServiceEndpoint: serviceEndpoint }] };
}

module.exports = { listQueues };
