'use strict';
/*-------------------------------------------------------------------------
 *
 * render.js
 *		Writing an SQS answer, result or error, in the protocol asked in.
 *
 * A result is the nested value of the action's output shape (shapes.js),
 * as the JSON protocol carries it.  JSON writes it as it is, binary values
 * in base64; Query writes the XML SQS answers with:
 *
 *   <SendMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/">
 *     <SendMessageResult>...</SendMessageResult>
 *     <ResponseMetadata><RequestId>...</RequestId></ResponseMetadata>
 *   </SendMessageResponse>
 *
 * each member under its wire name, lists and maps flattened.  Both follow
 * the shape, so what is not in it is not written, and numbers that came as
 * text (PostgreSQL's bigints do) are written as numbers.
 *
 * An error is written as SQS writes it: in Query an ErrorResponse with the
 * Query code; in JSON {"__type", "message"} with the x-amzn-query-error
 * header, from which current SDKs take the Query code (errors.js).
 *
 * The XML is written here rather than by a library: it is generated, from
 * a handful of element kinds, and the one thing to get right is escaping.
 * Text may hold any character an SQS message may (#x9 | #xA | #xD |
 * #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF).  A carriage return is
 * written as a character reference: XML parsers turn a literal one into a
 * line feed.  Characters XML cannot hold at all become U+FFFD.
 *
 *-------------------------------------------------------------------------
 */

const { randomUUID } = require('node:crypto');
const { SqsError, errorInfo } = require('./errors');
const { actionShapes } = require('./shapes');

const XML_NAMESPACE = 'http://queue.amazonaws.com/doc/2012-11-05/';
const XML_DECLARATION = '<?xml version="1.0"?>';
const JSON_CONTENT_TYPE = 'application/x-amz-json-1.0';
const XML_CONTENT_TYPE = 'text/xml';

const NOT_XML_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#xD;' };

/* ---------------------------------------------------------------- */
/* The answer                                                        */
/* ---------------------------------------------------------------- */

function checkProtocol(protocol) {
  if (protocol !== 'json' && protocol !== 'query') throw new TypeError(`not an SQS protocol: ${protocol}`);
}

function response(status, contentType, text, requestId, extraHeaders = {}) {
  const body = Buffer.from(text, 'utf8');
  return {
    status,
    headers: {
      'Content-Type': contentType,
      'Content-Length': String(body.length),
      'x-amzn-RequestId': requestId,
      ...extraHeaders,
    },
    body,
  };
}

// result: the output shape's value; ignored for actions that return nothing.
function renderResult(protocol, action, result, requestId = randomUUID()) {
  checkProtocol(protocol);
  const shapes = actionShapes(action);
  if (!shapes) throw new TypeError(`not an SQS action of the gateway: ${action}`);
  if (protocol === 'json') {
    const value = shapes.output ? jsonValue(shapes.output, result || {}) : {};
    return response(200, JSON_CONTENT_TYPE, JSON.stringify(value), requestId);
  }
  return response(200, XML_CONTENT_TYPE, resultDocument(action, shapes.output, result || {}, requestId), requestId);
}

// Anything but an SqsError is a failure of the gateway: it is answered as
// InternalFailure, without its message.
function renderError(protocol, error, requestId = randomUUID()) {
  checkProtocol(protocol);
  const sqsError = error instanceof SqsError ? error : new SqsError('InternalFailure');
  const info = errorInfo(sqsError.code);
  if (protocol === 'json') {
    const headers = info.queryCode ? { 'x-amzn-query-error': `${info.queryCode};${info.fault}` } : {};
    const text = JSON.stringify({ __type: info.jsonType, message: sqsError.message });
    return response(info.status, JSON_CONTENT_TYPE, text, requestId, headers);
  }
  return response(info.status, XML_CONTENT_TYPE, errorDocument(info, sqsError.message, requestId), requestId);
}

/* ---------------------------------------------------------------- */
/* Scalars, as the shape says                                        */
/* ---------------------------------------------------------------- */

function integerOf(value) {
  const number = Number(value);
  const wellFormed = typeof value !== 'string' || /^[+-]?[0-9]+$/.test(value);
  if (!wellFormed || !Number.isSafeInteger(number)) throw new TypeError(`not an integer: ${value}`);
  return number;
}

function booleanOf(value) {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new TypeError(`not a boolean: ${value}`);
}

function base64Of(value) {
  if (!(value instanceof Uint8Array)) throw new TypeError('a binary value is a Buffer');
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
}

function scalar(shape, value) {
  switch (shape.kind) {
    case 'integer': return integerOf(value);
    case 'boolean': return booleanOf(value);
    case 'blob': return base64Of(value);
    default: return String(value);
  }
}

function present(value) {
  return value !== undefined && value !== null;
}

function itemsOf(value) {
  if (!Array.isArray(value)) throw new TypeError('a list of a result is an array');
  return value;
}

function entriesOf(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError('a map of a result is an object');
  }
  return Object.entries(value).filter(([, item]) => present(item));
}

/* ---------------------------------------------------------------- */
/* JSON                                                              */
/* ---------------------------------------------------------------- */

function jsonValue(shape, value) {
  switch (shape.kind) {
    case 'list':
      return itemsOf(value).map((item) => jsonValue(shape.member, item));
    case 'map':
      return Object.fromEntries(entriesOf(value).map(([key, item]) => [key, jsonValue(shape.value, item)]));
    case 'structure':
      return jsonStructure(shape, value);
    default:
      return scalar(shape, value);
  }
}

function structureOf(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError('a structure of a result is an object');
  }
  return value;
}

function jsonStructure(shape, value) {
  structureOf(value);
  const structure = {};
  for (const [name, member] of Object.entries(shape.members)) {
    if (present(value[name])) structure[name] = jsonValue(member.shape, value[name]);
  }
  return structure;
}

/* ---------------------------------------------------------------- */
/* XML                                                               */
/* ---------------------------------------------------------------- */

function escapeText(text) {
  return String(text).replace(NOT_XML_CHARACTER, '\uFFFD').replace(/[&<>"'\r]/g, (c) => ESCAPES[c]);
}

function element(name, content) {
  return content === '' ? `<${name}/>` : `<${name}>${content}</${name}>`;
}

function xmlContent(shape, value) {
  if (shape.kind === 'structure') return xmlMembers(shape, value);
  return escapeText(scalar(shape, value));
}

// A flattened list repeats the member's element; a flattened map repeats
// it too, each holding a key and a value element.
function xmlMember(wireName, shape, value) {
  if (shape.kind === 'list') {
    return itemsOf(value).map((item) => element(wireName, xmlContent(shape.member, item))).join('');
  }
  if (shape.kind === 'map') {
    return entriesOf(value)
      .map(([key, item]) => element(wireName,
        element(shape.keyName, escapeText(key)) + element(shape.valueName, xmlContent(shape.value, item))))
      .join('');
  }
  return element(wireName, xmlContent(shape, value));
}

function xmlMembers(shape, value) {
  structureOf(value);
  return Object.entries(shape.members)
    .filter(([name]) => present(value[name]))
    .map(([name, member]) => xmlMember(member.wireName, member.shape, value[name]))
    .join('');
}

function responseMetadata(requestId) {
  return element('ResponseMetadata', element('RequestId', escapeText(requestId)));
}

// An action that returns nothing has no <XResult> at all; one that
// returns an empty result has an empty one.
function resultDocument(action, outputShape, result, requestId) {
  const resultElement = outputShape ? element(`${action}Result`, xmlMembers(outputShape, result)) : '';
  const responseName = `${action}Response`;
  return `${XML_DECLARATION}<${responseName} xmlns="${XML_NAMESPACE}">${resultElement}${responseMetadata(requestId)}</${responseName}>`;
}

function errorDocument(info, message, requestId) {
  const error = element('Error', [
    element('Type', info.fault),
    element('Code', escapeText(info.queryCode || info.code)),
    element('Message', escapeText(message)),
    '<Detail/>',
  ].join(''));
  return `${XML_DECLARATION}<ErrorResponse xmlns="${XML_NAMESPACE}">${error}${element('RequestId', escapeText(requestId))}</ErrorResponse>`;
}

module.exports = { renderResult, renderError };
