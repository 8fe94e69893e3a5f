'use strict';
/*-------------------------------------------------------------------------
 *
 * md5.js
 *		The MD5 digests of a message that SQS returns and clients check.
 *
 * SendMessage, SendMessageBatch and ReceiveMessage return the MD5 of the
 * body, of the message attributes and of the message system attributes;
 * clients compare them with their own to learn that the message arrived
 * whole, and some SDKs refuse an answer whose digest differs.  The body's
 * digest is that of its UTF-8 bytes.  An attribute map's digest is the one
 * the SQS Developer Guide describes: the attributes sorted by name, each
 * written as its name, its data type, one byte telling the transport type
 * (1 for String and Number, 2 for Binary) and its value, every name, type
 * and value preceded by its length in bytes as a 4-byte big-endian
 * integer; the digest is the MD5 of all of it, in lowercase hex.
 *
 *-------------------------------------------------------------------------
 */

const { createHash } = require('node:crypto');

const STRING_TRANSPORT = 1;
const BINARY_TRANSPORT = 2;

function md5Hex(bytes) {
  return createHash('md5').update(bytes).digest('hex');
}

function md5OfBody(body) {
  if (typeof body !== 'string') throw new TypeError('a message body is a string');
  return md5Hex(Buffer.from(body, 'utf8'));
}

function lengthPrefixed(bytes) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return [length, bytes];
}

// A custom type ("Number.float", "Binary.png") travels as its base type.
function transportOf(dataType) {
  const baseType = dataType.split('.')[0];
  if (baseType === 'String' || baseType === 'Number') return STRING_TRANSPORT;
  if (baseType === 'Binary') return BINARY_TRANSPORT;
  throw new TypeError(`not a data type of SQS: ${dataType}`);
}

function valueBytes(name, value, transport) {
  if (transport === STRING_TRANSPORT) {
    if (typeof value.StringValue !== 'string') throw new TypeError(`attribute ${name} has no StringValue`);
    return Buffer.from(value.StringValue, 'utf8');
  }
  if (!(value.BinaryValue instanceof Uint8Array)) throw new TypeError(`attribute ${name} has no BinaryValue`);
  return value.BinaryValue;
}

function encodeAttribute(name, value) {
  if (typeof value.DataType !== 'string') throw new TypeError(`attribute ${name} has no DataType`);
  const transport = transportOf(value.DataType);
  return [
    ...lengthPrefixed(Buffer.from(name, 'utf8')),
    ...lengthPrefixed(Buffer.from(value.DataType, 'utf8')),
    Buffer.of(transport),
    ...lengthPrefixed(valueBytes(name, value, transport)),
  ];
}

// undefined for no attributes: SQS then leaves the digest out.
function md5OfAttributeMap(attributes) {
  const names = Object.keys(attributes || {}).sort();
  if (names.length === 0) return undefined;
  const parts = names.flatMap((name) => encodeAttribute(name, attributes[name]));
  return md5Hex(Buffer.concat(parts));
}

// attributes: { name: { DataType, StringValue } or { DataType, BinaryValue: Buffer } }
function md5OfMessageAttributes(attributes) {
  return md5OfAttributeMap(attributes);
}

// The same encoding, over MessageSystemAttributes (AWSTraceHeader).
function md5OfMessageSystemAttributes(attributes) {
  return md5OfAttributeMap(attributes);
}

module.exports = { md5OfBody, md5OfMessageAttributes, md5OfMessageSystemAttributes };
