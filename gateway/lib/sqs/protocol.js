'use strict';
/*-------------------------------------------------------------------------
 *
 * protocol.js
 *		Reading an SQS request of either wire protocol into one shape.
 *
 * SQS clients speak one of two protocols, and a request says which:
 *
 *   JSON (current SDKs): a POST with Content-Type
 *   application/x-amz-json-1.0, the action in X-Amz-Target
 *   ("AmazonSQS.SendMessage") and its parameters as a JSON object, binary
 *   values in base64.
 *
 *   Query (older SDKs, the AWS CLI of Debian 12, hand-made requests):
 *   Action=SendMessage&Version=2012-11-05&... form-encoded in a POST body
 *   or in the query string of a GET or POST, nested values flattened into
 *   names like MessageAttribute.1.Value.StringValue.  A request sent to a
 *   queue's URL (/<account>/<name>) addresses that queue.
 *
 * Both give { protocol, action, params }, params being the nested value
 * the JSON protocol carries: the members of the action's input shape (see
 * shapes.js) and no others, binary values as Buffers, integers as
 * numbers.  What cannot be read throws an SqsError carrying the protocol
 * its answer must be written in (error.protocol).  Whether the values are
 * acceptable (a queue name's characters, a delay's range) is the actions'
 * business; this layer checks types and the required parameters only.
 *
 *-------------------------------------------------------------------------
 */

const { SqsError } = require('./errors');
const { actionShapes } = require('./shapes');

const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
const TARGET_PREFIX = 'AmazonSQS.';

const INDEX = /^[1-9][0-9]*$/;
const INTEGER_TEXT = /^[+-]?[0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/* ---------------------------------------------------------------- */
/* Which protocol                                                    */
/* ---------------------------------------------------------------- */

function headerValue(headers, name) {
  for (const [key, value] of Object.entries(headers || {})) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

// "application/x-amz-json-1.0; charset=utf-8" -> "application/x-amz-json-1.0"
function mediaType(headers) {
  const value = headerValue(headers, 'content-type');
  return value === undefined ? undefined : String(value).split(';')[0].trim().toLowerCase();
}

// A client that names a target or sends JSON expects its answer, errors
// included, in JSON; every other request is read as Query.
function requestProtocol(headers) {
  if (headerValue(headers, 'x-amz-target') !== undefined) return 'json';
  return mediaType(headers) === JSON_CONTENT_TYPE ? 'json' : 'query';
}

function parseRequest({ method, url, headers }, body) {
  const protocol = requestProtocol(headers);
  try {
    if (protocol === 'json') return parseJsonRequest(method, headers, body);
    return parseQueryRequest(method, url, headers, body);
  } catch (err) {
    if (err instanceof SqsError) err.protocol = protocol;
    throw err;
  }
}

// A required member missing, named by its path in the request: a
// structure inside the input (a batch entry) by its wire names in Query.
function requireMembers(shape, params, path = '', wireNames = false) {
  for (const name of shape.required) {
    if (params[name] === undefined) {
      const shown = joinPath(path, wireNames ? shape.members[name].wireName : name);
      throw new SqsError('MissingParameter', `The request must contain the parameter ${shown}.`);
    }
  }
}

// A member defined, never assigned: a key of a map may be "__proto__".
function setOwn(object, key, value) {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}

function decodeBase64(text, onError) {
  if (!BASE64.test(text)) throw onError();
  return Buffer.from(text, 'base64');
}

/* ---------------------------------------------------------------- */
/* JSON protocol                                                     */
/* ---------------------------------------------------------------- */

function unknownOperation(message) {
  return new SqsError('UnknownOperationException', message);
}

function jsonAction(method, headers) {
  if (method !== 'POST') {
    throw unknownOperation(`The JSON protocol takes a POST, not a ${method}.`);
  }
  if (mediaType(headers) !== JSON_CONTENT_TYPE) {
    throw unknownOperation(`A request with X-Amz-Target must have Content-Type ${JSON_CONTENT_TYPE}.`);
  }
  const target = headerValue(headers, 'x-amz-target');
  if (target === undefined) throw unknownOperation('The request has no X-Amz-Target.');
  const action = String(target).startsWith(TARGET_PREFIX) ? String(target).slice(TARGET_PREFIX.length) : undefined;
  if (!action || !actionShapes(action)) throw unknownOperation(`The operation ${target} is not known.`);
  return action;
}

function serializationError(message) {
  return new SqsError('SerializationException', message);
}

// An empty body is an empty object, as for an action without parameters.
function jsonDocument(body) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body || Buffer.alloc(0));
  } catch {
    throw serializationError('The request body is not UTF-8.');
  }
  if (text.trim() === '') return {};
  let document;
  try {
    document = JSON.parse(text);
  } catch {
    throw serializationError('The request body is not valid JSON.');
  }
  if (!isPlainObject(document)) throw serializationError('The request body is not a JSON object.');
  return document;
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function parseJsonRequest(method, headers, body) {
  const action = jsonAction(method, headers);
  const inputShape = actionShapes(action).input;
  const params = decodeJsonStructure(inputShape, jsonDocument(body), '');
  requireMembers(inputShape, params);
  return { protocol: 'json', action, params };
}

function expected(what, path) {
  return serializationError(`Expected ${what} for ${path || 'the request'}.`);
}

function joinPath(path, name) {
  return path ? `${path}.${name}` : name;
}

// null, as in the services of this protocol, is the member left out.
function decodeJsonValue(shape, value, path) {
  if (value === null || value === undefined) return undefined;
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') throw expected('a string', path);
      return value;
    case 'integer':
      if (!Number.isSafeInteger(value)) throw expected('an integer', path);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw expected('a boolean', path);
      return value;
    case 'blob':
      if (typeof value !== 'string') throw expected('a base64 string', path);
      return decodeBase64(value, () => expected('a base64 string', path));
    case 'list':
      return decodeJsonList(shape, value, path);
    case 'map':
      return decodeJsonMap(shape, value, path);
    default:
      return decodeJsonStructure(shape, value, path);
  }
}

function decodeJsonList(shape, value, path) {
  if (!Array.isArray(value)) throw expected('a list', path);
  return value.map((item, index) => {
    const decoded = decodeJsonValue(shape.member, item, `${path}.${index + 1}`);
    if (decoded === undefined) throw expected('a value', `${path}.${index + 1}`);
    return decoded;
  });
}

function decodeJsonMap(shape, value, path) {
  if (!isPlainObject(value)) throw expected('a map', path);
  const map = {};
  for (const [key, item] of Object.entries(value)) {
    const decoded = decodeJsonValue(shape.value, item, joinPath(path, key));
    if (decoded !== undefined) setOwn(map, key, decoded);
  }
  return map;
}

// Members the shape does not know are left out, as the Query side does.
// The input's own required members are checked by the caller.
function decodeJsonStructure(shape, value, path) {
  if (!isPlainObject(value)) throw expected('an object', path);
  const structure = {};
  for (const [name, member] of Object.entries(shape.members)) {
    const decoded = decodeJsonValue(member.shape, value[name], joinPath(path, name));
    if (decoded !== undefined) structure[name] = decoded;
  }
  if (path) requireMembers(shape, structure, path);
  return structure;
}

/* ---------------------------------------------------------------- */
/* Query protocol                                                    */
/* ---------------------------------------------------------------- */

function invalidValue(text, path, reason) {
  return new SqsError('InvalidParameterValue', `Value ${text} for parameter ${path} is invalid. Reason: ${reason}`);
}

function malformed(message) {
  return new SqsError('MalformedQueryString', message);
}

// URLSearchParams reads any text, putting U+FFFD for what it cannot
// decode; a request with a broken escape or bytes that are not UTF-8 is
// refused instead of having its message body changed.
function checkWellFormed(encoded) {
  try {
    decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    throw malformed('The query string contains a malformed escape or bytes that are not UTF-8.');
  }
}

function formBody(method, headers, body) {
  if (method !== 'POST' || !body || body.length === 0) return '';
  const type = mediaType(headers);
  // Anything but a form is no source of parameters.
  if (type !== undefined && type !== FORM_CONTENT_TYPE) return '';
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw malformed('The request body is not UTF-8.');
  }
}

// The parameters of the query string, then those of the body; the first
// of a repeated name counts.
function queryParameters(sources) {
  const parameters = new Map();
  for (const encoded of sources) {
    checkWellFormed(encoded);
    for (const [name, value] of new URLSearchParams(encoded)) {
      if (!parameters.has(name)) parameters.set(name, value);
    }
  }
  return parameters;
}

function splitUrl(url) {
  const text = url || '/';
  const questionMark = text.indexOf('?');
  return questionMark < 0
    ? { path: text, query: '' }
    : { path: text.slice(0, questionMark), query: text.slice(questionMark + 1) };
}

// "/123456789012/orders/" -> "/123456789012/orders"; "/" -> ""
function queuePath(path) {
  return path.replace(/\/+$/, '');
}

function queryAction(parameters, path) {
  const action = parameters.get('Action');
  if (!action) throw new SqsError('MissingAction', 'The request must contain the parameter Action.');
  const shapes = actionShapes(action);
  // A queue's URL takes only the actions on a queue, as in SQS.
  if (!shapes || (path && !shapes.input.members.QueueUrl)) {
    throw new SqsError('InvalidAction', `The action ${action} is not valid for this endpoint.`);
  }
  return action;
}

function parseQueryRequest(method, url, headers, body) {
  if (method !== 'GET' && method !== 'POST') {
    throw new SqsError('InvalidAction', `The Query protocol takes a GET or a POST, not a ${method}.`);
  }
  const { path, query } = splitUrl(url);
  const parameters = queryParameters([query, formBody(method, headers, body)]);
  const queue = queuePath(path);
  const action = queryAction(parameters, queue);
  const inputShape = actionShapes(action).input;
  const params = decodeQueryStructure(inputShape, parameterTree(parameters), '');
  if (queue && params.QueueUrl === undefined) {
    // The scheme is not in the request; the actions find a queue by path.
    params.QueueUrl = `http://${headerValue(headers, 'host') || 'localhost'}${queue}`;
  }
  requireMembers(inputShape, params);
  return { protocol: 'query', action, params };
}

// Flat names into a tree: "MessageAttribute.1.Value.DataType" is the
// node MessageAttribute > 1 > Value > DataType, holding the value.
function parameterTree(parameters) {
  const root = newNode();
  for (const [name, value] of parameters) {
    let node = root;
    for (const segment of name.split('.')) {
      if (!node.children.has(segment)) node.children.set(segment, newNode());
      node = node.children.get(segment);
    }
    node.value = value;
  }
  return root;
}

function newNode() {
  return { value: undefined, children: new Map() };
}

// The children named 1, 2, 3... in the order of their numbers.
function indexedChildren(node) {
  return [...node.children.entries()]
    .filter(([segment]) => INDEX.test(segment))
    .sort(([a], [b]) => Number(a) - Number(b));
}

function decodeQueryValue(shape, node, path) {
  if (node === undefined) return undefined;
  switch (shape.kind) {
    case 'list':
      return decodeQueryList(shape, node, path);
    case 'map':
      return decodeQueryMap(shape, node, path);
    case 'structure':
      return decodeQueryStructure(shape, node, path);
    default:
      return node.value === undefined ? undefined : decodeQueryScalar(shape, node.value, path);
  }
}

function decodeQueryScalar(shape, text, path) {
  switch (shape.kind) {
    case 'integer': {
      const number = Number(text);
      if (!INTEGER_TEXT.test(text) || !Number.isSafeInteger(number)) throw invalidValue(text, path, 'Must be an integer.');
      return number;
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw invalidValue(text, path, 'Must be true or false.');
      return text === 'true';
    case 'blob':
      return decodeBase64(text, () => invalidValue(text, path, 'Must be base64.'));
    default:
      return text;
  }
}

// An empty list travels as its name with an empty value ("TagKeys=").
function decodeQueryList(shape, node, path) {
  const items = indexedChildren(node);
  if (items.length === 0) return node.value === '' ? [] : undefined;
  return items.map(([index, child]) => {
    const itemPath = `${path}.${index}`;
    const decoded = decodeQueryValue(shape.member, child, itemPath);
    if (decoded === undefined) throw new SqsError('MissingParameter', `The request must contain the parameter ${itemPath}.`);
    return decoded;
  });
}

function decodeQueryMap(shape, node, path) {
  const entries = indexedChildren(node);
  if (entries.length === 0) return undefined;
  const map = {};
  for (const [index, entry] of entries) {
    const entryPath = `${path}.${index}`;
    const key = entry.children.get(shape.keyName)?.value;
    if (key === undefined) throw new SqsError('MissingParameter', `The request must contain the parameter ${entryPath}.${shape.keyName}.`);
    if (Object.prototype.hasOwnProperty.call(map, key)) throw invalidValue(key, `${entryPath}.${shape.keyName}`, 'The name is repeated.');
    const value = decodeQueryValue(shape.value, entry.children.get(shape.valueName), `${entryPath}.${shape.valueName}`);
    if (value === undefined) throw new SqsError('MissingParameter', `The request must contain the parameter ${entryPath}.${shape.valueName}.`);
    setOwn(map, key, value);
  }
  return map;
}

// The input's own required members are checked by the caller, once a
// queue's URL has given QueueUrl.
function decodeQueryStructure(shape, node, path) {
  const structure = {};
  for (const [name, member] of Object.entries(shape.members)) {
    const decoded = decodeQueryMember(member, name, node, path);
    if (decoded !== undefined) structure[name] = decoded;
  }
  if (path) requireMembers(shape, structure, path, true);
  return structure;
}

// botocore sends an empty list under the member's own name
// ("AttributeNames=") when it differs from the wire name.
function decodeQueryMember(member, name, node, path) {
  const decoded = decodeQueryValue(member.shape, node.children.get(member.wireName), joinPath(path, member.wireName));
  if (decoded !== undefined || member.shape.kind !== 'list' || name === member.wireName) return decoded;
  return node.children.get(name)?.value === '' ? [] : undefined;
}

module.exports = { parseRequest, requestProtocol };
