'use strict';
// The XML of the gateway's Azure side, without a server: the reader of
// request bodies (gateway/lib/azure/xml_reader.js) and the writer of
// answers (xml.js), each text written read back exactly.
const test = require('node:test');
const assert = require('node:assert/strict');
const { readDocument, XmlSyntaxError } = require('../../gateway/lib/azure/xml_reader');
const { document } = require('../../gateway/lib/azure/xml');

const read = (text) => readDocument(Buffer.from(text, 'utf8'));
const messageText = (text) => read(text).children.find((c) => c.name === 'MessageText').text;

test('what the SDKs send is read', () => {
  // Python's ElementTree and the JavaScript SDK's writer
  assert.equal(messageText("<?xml version='1.0' encoding='utf-8'?>\n<QueueMessage><MessageText>a &lt;b&gt; &amp; &quot;c&quot;</MessageText></QueueMessage>"), 'a <b> & "c"');
  assert.equal(messageText('<?xml version="1.0" encoding="UTF-8" standalone="yes"?><QueueMessage><MessageText>x</MessageText></QueueMessage>'), 'x');
  assert.equal(messageText('\uFEFF<QueueMessage><MessageText/></QueueMessage>'), '');
});

test('references, CDATA, comments and line ends', () => {
  assert.equal(messageText('<QueueMessage><MessageText>&#65;&#x42;&#x1F600;&apos;</MessageText></QueueMessage>'), "AB\u{1F600}'");
  assert.equal(messageText('<QueueMessage><!-- c --><MessageText><![CDATA[<&>]]>x<?pi data?></MessageText></QueueMessage>'), '<&>x');
  assert.equal(messageText('<QueueMessage><MessageText>1\r\n2\r3&#xD;4</MessageText></QueueMessage>'), '1\n2\n3\r4');
  assert.deepEqual(read('<a x="1" y=\'&lt;\'/>').attributes, { x: '1', y: '<' });
});

test('what is not well-formed is refused', () => {
  const bad = [
    '', 'text', '<a>', '<a></b>', '<a><b></a></b>', '<a>x</a><b/>', '<a>&unknown;</a>', '<a>&#0;</a>', '<a>&#xD800;</a>',
    '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', '<a x="1" x="2"/>', '<a x=1/>', '<a>]]></a>', '<a>\u0001</a>',
    '<?xml version="1.0" encoding="utf-16"?><a/>', '<a><!-- -- --></a>', '<a/><?xml version="1.0"?>',
  ];
  for (const text of bad) assert.throws(() => read(text), XmlSyntaxError, JSON.stringify(text));
  assert.throws(() => readDocument(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e])), XmlSyntaxError);
});

test('every text written is read back, a carriage return as a reference', () => {
  const texts = ['plain', '<&>"\'', '1\r\n2\r3\n', ' \t spaced \t ', 'caf\u00e9 \u4e2d \u{1F600}', ''];
  for (const text of texts) {
    const written = document(['QueueMessage', [['MessageText', text]]]);
    assert.equal(messageText(written.toString('utf8')), text, JSON.stringify(text));
  }
  assert.match(document(['A', [['B', 'x\ry']]]).toString(), /x&#xD;y/);
});

test('characters XML cannot hold are written as U+FFFD', () => {
  const written = document(['QueueMessage', [['MessageText', 'a\u0000b\u001Fc\uD800d']]]).toString('utf8');
  assert.equal(messageText(written), 'a\uFFFDb\uFFFDc\uFFFDd');
});

test('a root with attributes and empty elements', () => {
  assert.equal(document(['EnumerationResults', [['Queues', []], ['NextMarker', null]]], { ServiceEndpoint: 'http://h/a/' }).toString(),
    '<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://h/a/"><Queues></Queues><NextMarker /></EnumerationResults>');
});
