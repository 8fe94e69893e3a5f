'use strict';
// Writing the XML documents of Azure Queue Storage's answers.  A document
// is built from nested [name, content] pairs: content is text, a number,
// an array of more pairs, or null for an empty element.
//
// Text is escaped so that any XML parser reads back exactly what was
// written: a carriage return as a character reference (a parser would
// otherwise turn \r\n into \n), and the characters XML 1.0 cannot hold at
// all (most control characters, lone surrogates) as U+FFFD, as no
// reference can carry them either.  A message put through the Azure API
// never has those (its body came in XML); one put through SQL or SQS may.

const DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';
// what XML 1.0 does not allow in a document, by reference or not
const NOT_IN_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#xD;' };

function escapeText(text) {
  return String(text).replace(NOT_IN_XML, '\uFFFD').replace(/[&<>"'\r]/g, (c) => ESCAPES[c]);
}

function element([name, content], attributes = {}) {
  const start = name + Object.entries(attributes).map(([key, value]) => ` ${key}="${escapeText(value)}"`).join('');
  if (content === null || content === undefined || content === '') return `<${start} />`;
  if (Array.isArray(content)) return `<${start}>${content.map((pair) => element(pair)).join('')}</${name}>`;
  return `<${start}>${escapeText(content)}</${name}>`;
}

// The document whose root is the pair [name, content], with attributes
// (an object of strings) on the root, as a Buffer.
function document(root, attributes) {
  return Buffer.from(DECLARATION + element(root, attributes), 'utf8');
}

module.exports = { document, escapeText };
