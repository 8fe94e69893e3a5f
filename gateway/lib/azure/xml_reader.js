'use strict';
// Reading the XML documents of Azure Queue Storage's requests: a put's or
// an update's <QueueMessage><MessageText>..</MessageText></QueueMessage>.
//
// A small strict reader of XML 1.0 in UTF-8: a declaration, comments and
// processing instructions around one root element; elements, attributes,
// text, the five named entities, character references and CDATA sections.
// A document type declaration is refused (no entity of a request's own is
// ever expanded), as is anything not well-formed: the caller answers
// InvalidXmlDocument.  Line ends in text are normalised as XML says
// (\r\n and \r become \n); a reference &#xD; stays a carriage return.

class XmlSyntaxError extends Error {}

const NAME = /[A-Za-z_:][A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFD]*/y;
const SPACE = /[ \t\r\n]*/y;
const NAMED = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
// the characters XML 1.0 allows (surrogate pairs stand for the rest)
const XML_CHARACTERS = /^[\t\n\r\u0020-\uD7FF\uE000-\uFFFD\uD800-\uDFFF]*$/;

function isXmlCodePoint(n) {
  return n === 0x9 || n === 0xA || n === 0xD || (n >= 0x20 && n <= 0xD7FF) ||
    (n >= 0xE000 && n <= 0xFFFD) || (n >= 0x10000 && n <= 0x10FFFF);
}

class Reader {
  constructor(text) {
    this.text = text;
    this.at = 0;
  }

  fail(what) {
    throw new XmlSyntaxError(`${what} at character ${this.at}`);
  }

  startsWith(s) {
    return this.text.startsWith(s, this.at);
  }

  expect(s) {
    if (!this.startsWith(s)) this.fail(`expected ${JSON.stringify(s)}`);
    this.at += s.length;
  }

  skipSpace() {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    this.at = SPACE.lastIndex;
  }

  name() {
    NAME.lastIndex = this.at;
    const match = NAME.exec(this.text);
    if (!match) this.fail('expected a name');
    this.at = NAME.lastIndex;
    return match[0];
  }

  // up to and past the end marker; what came before it
  until(end) {
    const stop = this.text.indexOf(end, this.at);
    if (stop < 0) this.fail(`expected ${JSON.stringify(end)}`);
    const inside = this.text.slice(this.at, stop);
    this.at = stop + end.length;
    return inside;
  }

  // comments, processing instructions and space, before or after the root
  misc() {
    for (;;) {
      this.skipSpace();
      if (this.startsWith('<!--')) this.comment();
      else if (this.startsWith('<?')) this.processingInstruction();
      else return;
    }
  }

  comment() {
    this.expect('<!--');
    if (this.until('-->').includes('--')) this.fail('"--" inside a comment');
  }

  processingInstruction() {
    this.expect('<?');
    const target = this.name();
    if (target.toLowerCase() === 'xml') this.fail('an XML declaration out of place');
    this.until('?>');
  }

  reference() {
    this.expect('&');
    const name = this.until(';');
    if (name in NAMED) return NAMED[name];
    const match = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (!match) this.fail(`an unknown entity &${name.slice(0, 20)};`);
    const code = match[1] !== undefined ? parseInt(match[1], 16) : parseInt(match[2], 10);
    if (!isXmlCodePoint(code)) this.fail('a character reference to a character XML does not allow');
    return String.fromCodePoint(code);
  }

  attributeValue() {
    const quote = this.text[this.at];
    if (quote !== '"' && quote !== "'") this.fail('expected a quoted attribute value');
    this.at += 1;
    let value = '';
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined || c === '<') this.fail('an attribute value not closed');
      if (c === quote) {
        this.at += 1;
        return value;
      }
      if (c === '&') value += this.reference();
      else {
        value += /[\t\n\r]/.test(c) ? ' ' : c;
        this.at += 1;
      }
    }
  }

  // an element and everything in it: { name, attributes, children, text }
  element() {
    this.expect('<');
    const node = { name: this.name(), attributes: {}, children: [], text: '' };
    for (;;) {
      const before = this.at;
      this.skipSpace();
      if (this.startsWith('/>')) {
        this.at += 2;
        return node;
      }
      if (this.startsWith('>')) {
        this.at += 1;
        break;
      }
      if (this.at === before) this.fail('expected a space before an attribute');
      const attribute = this.name();
      this.skipSpace();
      this.expect('=');
      this.skipSpace();
      if (attribute in node.attributes) this.fail(`attribute ${attribute} given twice`);
      node.attributes[attribute] = this.attributeValue();
    }
    this.content(node);
    this.expect('</');
    if (this.name() !== node.name) this.fail(`an end tag that does not match <${node.name}>`);
    this.skipSpace();
    this.expect('>');
    return node;
  }

  content(node) {
    for (;;) {
      const stop = this.text.indexOf('<', this.at);
      const amp = this.text.indexOf('&', this.at);
      if (amp >= 0 && (stop < 0 || amp < stop)) {
        node.text += this.literal(amp);
        node.text += this.reference();
        continue;
      }
      if (stop < 0) this.fail(`element <${node.name}> not closed`);
      node.text += this.literal(stop);
      if (this.startsWith('</')) return;
      if (this.startsWith('<![CDATA[')) {
        this.at += '<![CDATA['.length;
        node.text += this.until(']]>').replace(/\r\n?/g, '\n');
      } else if (this.startsWith('<!--')) this.comment();
      else if (this.startsWith('<?')) this.processingInstruction();
      else if (this.startsWith('<!')) this.fail('a declaration inside an element');
      else node.children.push(this.element());
    }
  }

  // the text from here to end, its line ends normalised
  literal(end) {
    const text = this.text.slice(this.at, end);
    if (text.includes(']]>')) this.fail('"]]>" in text');
    this.at = end;
    return text.replace(/\r\n?/g, '\n');
  }
}

// The root element of the document in body (a Buffer); throws
// XmlSyntaxError when it is not well-formed XML in UTF-8.
function readDocument(body) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new XmlSyntaxError('the body is not UTF-8');
  }
  if (!XML_CHARACTERS.test(text)) throw new XmlSyntaxError('a character XML does not allow');
  const reader = new Reader(text);
  if (reader.startsWith('<?xml') && /^<\?xml[ \t\r\n]/.test(text.slice(0, 6))) {
    const declaration = reader.until('?>');
    if (!/^<\?xml[ \t\r\n]+version=(["'])1\.[0-9]+\1/.test(declaration + '?>') ||
        /encoding=(["'])(?!utf-8\1)[^"']*\1/i.test(declaration)) {
      throw new XmlSyntaxError('an XML declaration other than version 1.x in UTF-8');
    }
  }
  reader.misc();
  if (reader.startsWith('<!')) reader.fail('a document type declaration');
  const root = reader.element();
  reader.misc();
  if (reader.at !== text.length) reader.fail('more after the root element');
  return root;
}

module.exports = { readDocument, XmlSyntaxError };
