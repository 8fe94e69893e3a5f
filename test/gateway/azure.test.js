'use strict';
// The gateway's Azure Queue Storage side end to end: a throwaway
// PostgreSQL with the extension, the gateway with an Azure account mapped
// to a role allowed everything (and one mapped to a role that may only
// read), and @azure/storage-queue from npm against it through a connection
// string, as an application or the Azure Functions runtime would connect.
// Every operation, the errors each can answer, Azure's rules of names, the
// base64 encoding of the Functions runtime, dequeue counts, visibility and
// messages that never expire.  Requests the SDK never makes are sent by
// hand (azure_signing.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const { QueueServiceClient, StorageSharedKeyCredential, AccountSASPermissions, generateAccountSASQueryParameters } = require('@azure/storage-queue');
const { AZURE_ACCOUNT, AZURE_KEY, run, startDatabase, startGateway } = require('./end_to_end');
const { signedRequest, errorCode } = require('./azure_signing');

const READER_ACCOUNT = 'gatewayreader';
const READER_KEY = randomBytes(64).toString('base64');
const NEVER = new Date('9999-12-31T23:59:59Z').getTime();

// A RestError's code and status, for assert.rejects.
const azureError = (code, statusCode) => (err) => {
  assert.equal(err.code, code, `${err.code} (${err.statusCode}): ${err.message}`);
  assert.equal(err.statusCode, statusCode);
  return true;
};

test('the gateway with @azure/storage-queue', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'queue-gateway-azure-'));
  const database = startDatabase(dir, 55560);
  database.psql('CREATE ROLE azure_reader NOLOGIN');
  database.psql("SELECT queue_grant('*', 'azure_reader', 'read')");
  const gateway = await startGateway(dir, database.dsn, {
    azurePort: 0,
    azureAccounts: [
      { name: AZURE_ACCOUNT, key: AZURE_KEY, role: 'sqs_app' },
      { name: READER_ACCOUNT, key: READER_KEY, role: 'azure_reader' },
    ],
  });
  t.after(() => {
    gateway.child.kill('SIGTERM');
    database.stop();
  });
  const service = QueueServiceClient.fromConnectionString(gateway.azureConnectionString);
  const url = (p) => `${gateway.azureUrl}${p}`;
  const raw = (method, p, options) => signedRequest(AZURE_ACCOUNT, AZURE_KEY, method, url(p), options);

  await t.test('the gateway says where the account is', () => {
    assert.match(gateway.azureUrl, new RegExp(`^http://127\\.0\\.0\\.1:[0-9]+/${AZURE_ACCOUNT}$`));
  });

  await t.test('create a queue: 201, again with the same metadata 204, with other metadata 409', async () => {
    const queue = service.getQueueClient('orders');
    const created = await queue.create({ metadata: { Team: 'billing', owner: 'ann' } });
    assert.equal(created._response.status, 201);
    const again = await queue.create({ metadata: { team: 'billing', OWNER: 'ann' } });
    assert.equal(again._response.status, 204);
    await assert.rejects(queue.create({ metadata: { team: 'other' } }), azureError('QueueAlreadyExists', 409));
    await assert.rejects(queue.create(), azureError('QueueAlreadyExists', 409));
    assert.equal((await queue.createIfNotExists({ metadata: { team: 'billing', owner: 'ann' } })).succeeded, false);
  });

  await t.test('metadata: lower-cased names, replaced as a whole, and the approximate count', async () => {
    const queue = service.getQueueClient('orders');
    let properties = await queue.getProperties();
    assert.deepEqual(properties.metadata, { team: 'billing', owner: 'ann' });
    assert.equal(properties.approximateMessagesCount, 0);
    await queue.setMetadata({ Region: 'eu', team: 'ops' });
    properties = await queue.getProperties();
    assert.deepEqual(properties.metadata, { region: 'eu', team: 'ops' });
    await queue.sendMessage('one');
    await queue.sendMessage('two', { visibilityTimeout: 60 });
    properties = await queue.getProperties();
    assert.equal(properties.approximateMessagesCount, 2);
    assert.equal(await queue.exists(), true);
    assert.equal(await service.getQueueClient('nowhere').exists(), false);
    // names that sort apart in the service's order and in code points
    // (underscores before digits), signed by the SDK in the service's
    const tricky = { a_1: 'x', a1: 'y', a_b: 'z', ab: 'w', b2_: 'v', _z: 'u' };
    await queue.setMetadata(tricky);
    assert.deepEqual((await queue.getProperties()).metadata, tricky);
    await queue.setMetadata();
    assert.deepEqual((await queue.getProperties()).metadata, {});
    await queue.clearMessages();
    assert.equal((await queue.getProperties()).approximateMessagesCount, 0);
  });

  await t.test('list queues: prefix, metadata, pages of maxresults', async () => {
    for (const name of ['list-a', 'list-b', 'list-c', 'list-d', 'list-e']) {
      await service.createQueue(name, { metadata: { letter: name.slice(-1) } });
    }
    const names = [];
    for await (const item of service.listQueues({ prefix: 'list-' })) names.push(item.name);
    assert.deepEqual(names, ['list-a', 'list-b', 'list-c', 'list-d', 'list-e']);
    const pages = [];
    for await (const page of service.listQueues({ prefix: 'list-', includeMetadata: true }).byPage({ maxPageSize: 2 })) {
      pages.push(page.queueItems.map((q) => [q.name, q.metadata.letter]));
      if (pages.length === 1) assert.ok(page.continuationToken);
    }
    assert.deepEqual(pages, [[['list-a', 'a'], ['list-b', 'b']], [['list-c', 'c'], ['list-d', 'd']], [['list-e', 'e']]]);
    const withoutMetadata = (await service.listQueues({ prefix: 'list-a' }).byPage().next()).value;
    assert.equal(withoutMetadata.queueItems[0].metadata, undefined);
    // a queue whose name Azure does not allow, made through SQL, is not listed
    database.psql("SELECT queue_create('Not_Azure')");
    const all = [];
    for await (const item of service.listQueues()) all.push(item.name);
    assert.ok(!all.includes('Not_Azure'));
    assert.ok(all.includes('orders'));
  });

  await t.test('put, get, peek, update, delete: the messages and their receipts', async () => {
    const queue = service.getQueueClient('work');
    await queue.create();
    const texts = ['plain', ' spaced\tout ', '<xml attr="1"> & \'quotes\'', '12345', 'unicode \u00e9\u4e2d\u{1F600}', ''];
    const sent = [];
    for (const text of texts) sent.push(await queue.sendMessage(text));
    // this SDK's XML writer drops a line feed and writes a carriage return
    // as it is, which XML reads as a line feed (as Azure's own parser does):
    // a carriage return survives only as a character reference (by hand, below)
    const crlfQueue = service.getQueueClient('crlf');
    await crlfQueue.create();
    await crlfQueue.sendMessage('a\r\nb\nc');
    assert.match(sent[0].messageId, /^[0-9]+$/);
    assert.ok(sent[0].popReceipt);
    assert.ok(sent[0].insertedOn instanceof Date);
    // Azure's default life: 7 days
    const life = sent[0].expiresOn.getTime() - sent[0].insertedOn.getTime();
    assert.ok(Math.abs(life - 7 * 24 * 3600 * 1000) <= 1000, String(life));
    assert.equal((await crlfQueue.peekMessages()).peekedMessageItems[0].messageText, 'a\nbc');
    const peeked = await queue.peekMessages({ numberOfMessages: 32 });
    assert.deepEqual(peeked.peekedMessageItems.map((m) => m.messageText), texts);
    assert.equal(peeked.peekedMessageItems[0].dequeueCount, 0);
    assert.equal(peeked.peekedMessageItems[0].popReceipt, undefined);
    const got = await queue.receiveMessages({ numberOfMessages: 32, visibilityTimeout: 30 });
    assert.deepEqual(got.receivedMessageItems.map((m) => m.messageText), texts);
    const first = got.receivedMessageItems[0];
    assert.equal(first.messageId, sent[0].messageId);
    assert.equal(first.dequeueCount, 1);
    assert.notEqual(first.popReceipt, sent[0].popReceipt);
    const lease = first.nextVisibleOn.getTime() - Date.now();
    assert.ok(lease > 25_000 && lease <= 31_000, String(lease));
    // leased: nothing left to get, and the count still counts them
    assert.equal((await queue.receiveMessages()).receivedMessageItems.length, 0);
    assert.equal((await queue.getProperties()).approximateMessagesCount, texts.length);
    // update: a new text and a release; the old receipt no longer works
    const updated = await queue.updateMessage(first.messageId, first.popReceipt, 'changed', 0);
    assert.ok(updated.popReceipt && updated.popReceipt !== first.popReceipt);
    assert.ok(updated.nextVisibleOn instanceof Date);
    await assert.rejects(queue.deleteMessage(first.messageId, first.popReceipt), azureError('PopReceiptMismatch', 400));
    const again = await queue.receiveMessages();
    assert.equal(again.receivedMessageItems[0].messageText, 'changed');
    assert.equal(again.receivedMessageItems[0].dequeueCount, 2);
    // an update without a text keeps it, and extends the lease
    const kept = await queue.updateMessage(first.messageId, again.receivedMessageItems[0].popReceipt, undefined, 120);
    assert.ok(kept.nextVisibleOn.getTime() - Date.now() > 100_000);
    assert.equal((await queue.peekMessages({ numberOfMessages: 32 })).peekedMessageItems.some((m) => m.messageText === 'changed'), false);
    await queue.deleteMessage(first.messageId, kept.popReceipt);
    await assert.rejects(queue.deleteMessage(first.messageId, kept.popReceipt), azureError('MessageNotFound', 404));
    await assert.rejects(queue.updateMessage(first.messageId, kept.popReceipt, 'x', 0), azureError('MessageNotFound', 404));
    for (const m of got.receivedMessageItems.slice(1)) await queue.deleteMessage(m.messageId, m.popReceipt);
    assert.equal((await queue.getProperties()).approximateMessagesCount, 0);
  });

  await t.test('visibility on put, messages that never expire, and a short life', async () => {
    const queue = service.getQueueClient('timing');
    await queue.create();
    const before = Date.now();
    const later = await queue.sendMessage('later', { visibilityTimeout: 2, messageTimeToLive: -1 });
    assert.equal(later.expiresOn.getTime(), NEVER);
    // 2 s after the put, which came after `before`; the protocol gives whole
    // seconds, so at least 1 s after `before` however long the request took
    assert.ok(later.nextVisibleOn.getTime() - before >= 1000);
    assert.equal((await queue.receiveMessages()).receivedMessageItems.length, 0);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const got = (await queue.receiveMessages({ visibilityTimeout: 1 })).receivedMessageItems[0];
    assert.equal(got.messageText, 'later');
    assert.equal(got.expiresOn.getTime(), NEVER);
    // the lease of 1 s runs out: the message comes again, counted twice
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = (await queue.receiveMessages()).receivedMessageItems[0];
    assert.equal(second.dequeueCount, 2);
    await queue.deleteMessage(second.messageId, second.popReceipt);
    const short = await queue.sendMessage('short', { messageTimeToLive: 1 });
    assert.ok(short.expiresOn.getTime() - short.insertedOn.getTime() <= 1000);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal((await queue.receiveMessages()).receivedMessageItems.length, 0);
  });

  await t.test('the base64 encoding of the Functions runtime', async () => {
    const queue = service.getQueueClient('functions-in');
    await queue.create();
    const payload = JSON.stringify({ order: 42, note: 'caf\u00e9' });
    await queue.sendMessage(Buffer.from(payload, 'utf8').toString('base64'));
    const got = (await queue.receiveMessages()).receivedMessageItems[0];
    assert.equal(Buffer.from(got.messageText, 'base64').toString('utf8'), payload);
    await queue.deleteMessage(got.messageId, got.popReceipt);
  });

  await t.test('the errors of queues and messages', async () => {
    const missing = service.getQueueClient('no-such-queue');
    await assert.rejects(missing.sendMessage('x'), azureError('QueueNotFound', 404));
    await assert.rejects(missing.receiveMessages(), azureError('QueueNotFound', 404));
    await assert.rejects(missing.peekMessages(), azureError('QueueNotFound', 404));
    await assert.rejects(missing.getProperties(), azureError('QueueNotFound', 404));
    await assert.rejects(missing.setMetadata({ a: 'b' }), azureError('QueueNotFound', 404));
    await assert.rejects(missing.clearMessages(), azureError('QueueNotFound', 404));
    await assert.rejects(missing.delete(), azureError('QueueNotFound', 404));
    assert.equal((await missing.deleteIfExists()).succeeded, false);
    // Azure's rules of names
    await assert.rejects(service.createQueue('Upper'), azureError('InvalidResourceName', 400));
    await assert.rejects(service.createQueue('two--hyphens'), azureError('InvalidResourceName', 400));
    await assert.rejects(service.createQueue('-edge'), azureError('InvalidResourceName', 400));
    await assert.rejects(service.createQueue('under_score'), azureError('InvalidResourceName', 400));
    await assert.rejects(service.createQueue('ab'), azureError('OutOfRangeInput', 400));
    await assert.rejects(service.createQueue('a'.repeat(64)), azureError('OutOfRangeInput', 400));
    await service.createQueue(`a${'-b'.repeat(31)}`);
    await assert.rejects(service.createQueue('bad-meta', { metadata: { '1st': 'x' } }), azureError('InvalidMetadata', 400));
    // 64 KiB of text at most
    const queue = service.getQueueClient('errors');
    await queue.create();
    await queue.sendMessage('x'.repeat(65536));
    await assert.rejects(queue.sendMessage('x'.repeat(65537)), azureError('RequestBodyTooLarge', 413));
    await assert.rejects(queue.sendMessage('\u00e9'.repeat(32769)), azureError('RequestBodyTooLarge', 413));
    await queue.clearMessages();
    // a receipt of another form, and a message id that is none of ours
    const sent = await queue.sendMessage('m');
    await assert.rejects(queue.deleteMessage(sent.messageId, 'not-a-receipt'), azureError('InvalidQueryParameterValue', 400));
    await assert.rejects(queue.deleteMessage('no-such-id', sent.popReceipt), azureError('MessageNotFound', 404));
    await assert.rejects(queue.deleteMessage('99999999', sent.popReceipt), azureError('MessageNotFound', 404));
    await assert.rejects(queue.updateMessage(sent.messageId, sent.popReceipt, 'y', 7 * 24 * 3600 + 1), azureError('OutOfRangeQueryParameterValue', 400));
    await queue.deleteMessage(sent.messageId, sent.popReceipt);
    // the queue deleted: its messages with it
    await queue.delete();
    await assert.rejects(queue.getProperties(), azureError('QueueNotFound', 404));
  });

  await t.test('what the gateway does not have: service properties, statistics, access policies', async () => {
    await assert.rejects(service.getProperties(), azureError('UnsupportedQueryParameter', 400));
    await assert.rejects(service.setProperties({}), azureError('UnsupportedQueryParameter', 400));
    await assert.rejects(service.getStatistics(), azureError('UnsupportedQueryParameter', 400));
    await assert.rejects(service.getQueueClient('orders').getAccessPolicy(), azureError('UnsupportedQueryParameter', 400));
    await assert.rejects(service.getQueueClient('orders').setAccessPolicy([]), azureError('UnsupportedQueryParameter', 400));
  });

  await t.test('a role without the grant: AuthorizationPermissionMismatch', async () => {
    const reader = new QueueServiceClient(`${gateway.azureUrl.replace(AZURE_ACCOUNT, READER_ACCOUNT)}`,
      new StorageSharedKeyCredential(READER_ACCOUNT, READER_KEY));
    const names = [];
    for await (const item of reader.listQueues({ prefix: 'orders' })) names.push(item.name);
    assert.deepEqual(names, ['orders']);
    const queue = reader.getQueueClient('orders');
    assert.equal((await queue.peekMessages()).peekedMessageItems.length, 0);
    await assert.rejects(queue.sendMessage('x'), azureError('AuthorizationPermissionMismatch', 403));
    await assert.rejects(queue.receiveMessages(), azureError('AuthorizationPermissionMismatch', 403));
    await assert.rejects(reader.createQueue('reader-made'), azureError('AuthorizationPermissionMismatch', 403));
    await assert.rejects(queue.delete(), azureError('AuthorizationPermissionMismatch', 403));
  });

  await t.test('Shared Key: a wrong key, another account, the clock window, no signature', async () => {
    const wrong = new QueueServiceClient(gateway.azureUrl,
      new StorageSharedKeyCredential(AZURE_ACCOUNT, randomBytes(64).toString('base64')));
    await assert.rejects(wrong.getQueueClient('orders').getProperties(), azureError('AuthenticationFailed', 403));
    // the reader's key on the first account's URL
    const other = new QueueServiceClient(gateway.azureUrl, new StorageSharedKeyCredential(READER_ACCOUNT, READER_KEY));
    await assert.rejects(other.getQueueClient('orders').getProperties(), azureError('AuthenticationFailed', 403));
    // an account not configured
    const unknown = new QueueServiceClient(gateway.azureUrl.replace(AZURE_ACCOUNT, 'nosuchaccount'),
      new StorageSharedKeyCredential('nosuchaccount', AZURE_KEY));
    await assert.rejects(unknown.getQueueClient('orders').getProperties(), azureError('AuthenticationFailed', 403));
    // what this test signs by hand is what the SDK signs
    assert.equal((await raw('GET', '/orders?comp=metadata')).status, 200);
    const stale = await raw('GET', '/orders?comp=metadata', { date: new Date(Date.now() - 16 * 60 * 1000) });
    assert.deepEqual([stale.status, errorCode(stale)], [403, 'AuthenticationFailed']);
    assert.match(stale.body, /<AuthenticationErrorDetail>Request date header too old/);
    const future = await raw('GET', '/orders?comp=metadata', { date: new Date(Date.now() + 16 * 60 * 1000) });
    assert.equal(errorCode(future), 'AuthenticationFailed');
    const within = await raw('GET', '/orders?comp=metadata', { date: new Date(Date.now() - 14 * 60 * 1000) });
    assert.equal(within.status, 200);
    const unsigned = await raw('GET', '/orders?comp=metadata', { authorization: null });
    assert.deepEqual([unsigned.status, errorCode(unsigned)], [403, 'AuthenticationFailed']);
    const garbled = await raw('GET', '/orders?comp=metadata', { authorization: 'Bearer abc' });
    assert.equal(errorCode(garbled), 'AuthenticationFailed');
    // a signature over other query parameters than those sent
    const moved = await raw('GET', '/orders/messages?numofmessages=1', { signWith: READER_KEY });
    assert.equal(errorCode(moved), 'AuthenticationFailed');
    // the refusal comes before any database work: the queue need not exist
    const refused = await raw('PUT', '/refused-queue', { signWith: READER_KEY });
    assert.equal(errorCode(refused), 'AuthenticationFailed');
    assert.equal(await service.getQueueClient('refused-queue').exists(), false);
  });

  await t.test('account SAS: what it grants, its time, its service, protocol and signature', async () => {
    const credential = new StorageSharedKeyCredential(AZURE_ACCOUNT, AZURE_KEY);
    const hour = new Date(Date.now() + 3600 * 1000);
    const sas = (fields) => generateAccountSASQueryParameters({ expiresOn: hour, services: 'q', resourceTypes: 'sco', ...fields,
      permissions: AccountSASPermissions.parse(fields.permissions || 'rwdlacup') }, credential).toString();
    const clientWith = (token) => new QueueServiceClient(`${gateway.azureUrl}?${token}`);
    // everything, through a connection string as the Functions runtime takes one
    const full = QueueServiceClient.fromConnectionString(`QueueEndpoint=${gateway.azureUrl};SharedAccessSignature=${sas({})}`);
    const queue = full.getQueueClient('sas-queue');
    await queue.create({ metadata: { by: 'sas' } });
    assert.deepEqual((await queue.getProperties()).metadata, { by: 'sas' });
    await queue.sendMessage('by sas');
    const got = (await queue.receiveMessages()).receivedMessageItems[0];
    const updated = await queue.updateMessage(got.messageId, got.popReceipt, 'again', 0);
    await queue.deleteMessage(got.messageId, updated.popReceipt);
    const names = [];
    for await (const item of full.listQueues({ prefix: 'sas-' })) names.push(item.name);
    assert.deepEqual(names, ['sas-queue']);
    // the SDK's own account SAS URL
    const sasUrl = new QueueServiceClient(gateway.azureUrl, credential).generateAccountSasUrl(hour, AccountSASPermissions.parse('rl'), 'sco');
    const generated = new QueueServiceClient(sasUrl);
    assert.equal((await generated.getQueueClient('sas-queue').getProperties()).approximateMessagesCount, 0);
    // read alone: peek yes, put, get and delete no
    const reader = clientWith(sas({ permissions: 'r' })).getQueueClient('sas-queue');
    assert.equal((await reader.peekMessages()).peekedMessageItems.length, 0);
    await assert.rejects(reader.sendMessage('x'), azureError('AuthorizationPermissionMismatch', 403));
    await assert.rejects(reader.receiveMessages(), azureError('AuthorizationPermissionMismatch', 403));
    await assert.rejects(reader.delete(), azureError('AuthorizationPermissionMismatch', 403));
    // add and process, the Functions runtime's pair, on messages only
    const worker = clientWith(sas({ permissions: 'ap', resourceTypes: 'o' }));
    await worker.getQueueClient('sas-queue').sendMessage('work');
    const work = (await worker.getQueueClient('sas-queue').receiveMessages()).receivedMessageItems[0];
    await worker.getQueueClient('sas-queue').deleteMessage(work.messageId, work.popReceipt);
    await assert.rejects(worker.getQueueClient('sas-queue').getProperties(), azureError('AuthorizationResourceTypeMismatch', 403));
    await assert.rejects(worker.listQueues().next(), azureError('AuthorizationResourceTypeMismatch', 403));
    // time, service, protocol
    const expired = clientWith(sas({ expiresOn: new Date(Date.now() - 1000) }));
    await assert.rejects(expired.getQueueClient('sas-queue').getProperties(), azureError('AuthenticationFailed', 403));
    const early = clientWith(sas({ startsOn: new Date(Date.now() + 600 * 1000) }));
    await assert.rejects(early.getQueueClient('sas-queue').getProperties(), azureError('AuthenticationFailed', 403));
    const blobs = clientWith(sas({ services: 'b' }));
    await assert.rejects(blobs.getQueueClient('sas-queue').getProperties(), azureError('AuthorizationServiceMismatch', 403));
    const httpsOnly = clientWith(sas({ protocol: 'https' }));
    await assert.rejects(httpsOnly.getQueueClient('sas-queue').getProperties(), azureError('AuthorizationProtocolMismatch', 403));
    const elsewhere = clientWith(sas({ ipRange: { start: '10.1.1.1', end: '10.1.1.9' } }));
    await assert.rejects(elsewhere.getQueueClient('sas-queue').getProperties(), azureError('AuthorizationSourceIPMismatch', 403));
    const here = clientWith(sas({ ipRange: { start: '127.0.0.1' } }));
    assert.equal((await here.getQueueClient('sas-queue').getProperties()).approximateMessagesCount, 0);
    // a permission added to the token after signing, another account's key
    const widened = clientWith(sas({ permissions: 'r' }).replace('sp=r', 'sp=rwdlacup'));
    await assert.rejects(widened.getQueueClient('sas-queue').getProperties(), azureError('AuthenticationFailed', 403));
    const otherKey = generateAccountSASQueryParameters({ expiresOn: hour, services: 'q', resourceTypes: 'sco',
      permissions: AccountSASPermissions.parse('r') }, new StorageSharedKeyCredential(AZURE_ACCOUNT, READER_KEY)).toString();
    await assert.rejects(clientWith(otherKey).getQueueClient('sas-queue').getProperties(), azureError('AuthenticationFailed', 403));
    // an older version's string to sign (no encryption scope)
    const older = clientWith(sas({ version: '2019-12-12', permissions: 'r' }));
    assert.equal((await older.getQueueClient('sas-queue').getProperties()).approximateMessagesCount, 0);
  });

  await t.test('requests the SDK never makes: versions, XML, parameters, verbs, sizes', async () => {
    await service.createQueue('by-hand');
    const noVersion = await raw('GET', '/by-hand?comp=metadata', { version: null });
    assert.deepEqual([noVersion.status, errorCode(noVersion)], [400, 'MissingRequiredHeader']);
    const badVersion = await raw('GET', '/by-hand?comp=metadata', { version: 'latest' });
    assert.deepEqual([badVersion.status, errorCode(badVersion)], [400, 'InvalidHeaderValue']);
    // the answer repeats the request's version, old or new
    for (const version of ['2018-03-28', '2026-04-06']) {
      const answer = await raw('GET', '/by-hand?comp=metadata', { version, headers: { 'x-ms-client-request-id': 'abc-1' } });
      assert.equal(answer.headers['x-ms-version'], version);
      assert.equal(answer.headers['x-ms-client-request-id'], 'abc-1');
      assert.ok(answer.headers['x-ms-request-id']);
    }
    for (const body of ['<QueueMessage><MessageText>x</MessageText>', 'not xml', '<!DOCTYPE a [<!ENTITY e "x">]><QueueMessage><MessageText>&e;</MessageText></QueueMessage>',
      '<Other><MessageText>x</MessageText></Other>', '<QueueMessage></QueueMessage>', Buffer.from([0x3c, 0xff, 0x3e])]) {
      const answer = await raw('POST', '/by-hand/messages', { body });
      assert.deepEqual([answer.status, errorCode(answer)], [400, 'InvalidXmlDocument'], String(body));
    }
    // a CDATA section and character references, as XML allows
    const cdata = await raw('POST', '/by-hand/messages', { body: '<?xml version="1.0"?><QueueMessage><MessageText><![CDATA[a<b]]>&#x41;&#66;</MessageText></QueueMessage>' });
    assert.equal(cdata.status, 201);
    assert.match(cdata.body, /<QueueMessagesList><QueueMessage><MessageId>[0-9]+<\/MessageId><InsertionTime>/);
    assert.equal((await service.getQueueClient('by-hand').peekMessages()).peekedMessageItems[0].messageText, 'a<bAB');
    // line ends: \r\n and \r read as \n, a reference as what it names,
    // and a carriage return answered as a reference
    const lines = await raw('POST', '/by-hand/messages', { body: '<QueueMessage><MessageText>1\r\n2\r3&#xD;&#10;4</MessageText></QueueMessage>' });
    assert.equal(lines.status, 201);
    const peek = await raw('GET', '/by-hand/messages?peekonly=true&numofmessages=2');
    assert.match(peek.body, /<MessageText>1\n2\n3&#xD;\n4<\/MessageText>/);
    for (const [query, code] of [['numofmessages=33', 'OutOfRangeQueryParameterValue'], ['numofmessages=0', 'OutOfRangeQueryParameterValue'],
      ['numofmessages=two', 'InvalidQueryParameterValue'], ['visibilitytimeout=0', 'OutOfRangeQueryParameterValue'],
      ['visibilitytimeout=604801', 'OutOfRangeQueryParameterValue']]) {
      const answer = await raw('GET', `/by-hand/messages?${query}`);
      assert.deepEqual([answer.status, errorCode(answer)], [400, code], query);
      assert.match(answer.body, new RegExp(`<QueryParameterName>${query.split('=')[0]}</QueryParameterName>`));
    }
    const put = (query) => raw('POST', `/by-hand/messages?${query}`, { body: '<QueueMessage><MessageText>t</MessageText></QueueMessage>' });
    for (const [query, code] of [['messagettl=0', 'OutOfRangeQueryParameterValue'], ['messagettl=-2', 'OutOfRangeQueryParameterValue'],
      ['visibilitytimeout=10&messagettl=10', 'OutOfRangeQueryParameterValue'], ['visibilitytimeout=-1', 'OutOfRangeQueryParameterValue']]) {
      assert.equal(errorCode(await put(query)), code, query);
    }
    assert.equal((await put('visibilitytimeout=604800&messagettl=-1')).status, 201);
    const update = await raw('PUT', '/by-hand/messages/1?visibilitytimeout=0');
    assert.deepEqual([update.status, errorCode(update)], [400, 'MissingRequiredQueryParameter']);
    const listed = await raw('GET', '?comp=list&prefix=list-&maxresults=2&marker=%2Fgatewaytest%2Flist-b');
    assert.equal(listed.status, 200);
    assert.equal(listed.body, '<?xml version="1.0" encoding="utf-8"?>' +
      `<EnumerationResults ServiceEndpoint="${gateway.azureUrl}/"><Prefix>list-</Prefix><Marker>/gatewaytest/list-b</Marker>` +
      '<MaxResults>2</MaxResults><Queues><Queue><Name>list-b</Name></Queue><Queue><Name>list-c</Name></Queue></Queues>' +
      '<NextMarker>/gatewaytest/list-d</NextMarker></EnumerationResults>');
    const maxResults = await raw('GET', '?comp=list&maxresults=0');
    assert.equal(errorCode(maxResults), 'OutOfRangeQueryParameterValue');
    for (const comp of ['constructor', '__proto__', 'nothing']) {
      assert.equal(errorCode(await raw('GET', `/by-hand?comp=${comp}`)), 'InvalidQueryParameterValue', comp);
    }
    const verb = await raw('POST', '/by-hand');
    assert.deepEqual([verb.status, errorCode(verb)], [405, 'UnsupportedHttpVerb']);
    const nowhere = await raw('GET', '/by-hand/other');
    assert.deepEqual([nowhere.status, errorCode(nowhere)], [400, 'InvalidUri']);
    const huge = await raw('POST', '/by-hand/messages', { body: Buffer.alloc(1024 * 1024 + 1, 0x20) });
    assert.deepEqual([huge.status, errorCode(huge)], [413, 'RequestBodyTooLarge']);
    const head = await raw('HEAD', '/by-hand?comp=metadata');
    assert.equal(head.status, 200);
    assert.equal(head.headers['x-ms-approximate-messages-count'], '3');
    const headMissing = await raw('HEAD', '/no-such-queue?comp=metadata');
    assert.deepEqual([headMissing.status, headMissing.headers['x-ms-error-code'], headMissing.body], [404, 'QueueNotFound', '']);
  });

  await t.test('the Azure SDK for Python from Debian (azure.storage.queue)', () => {
    const out = JSON.parse(run('/usr/bin/python3', ['-I', path.join(__dirname, 'azure_clients.py'),
      gateway.azureConnectionString, randomBytes(64).toString('base64')]));
    assert.deepEqual(out.exists_twice, ['QueueAlreadyExists', 409]);
    assert.deepEqual(out.metadata, { kind: 'python' });
    assert.deepEqual(out.metadata_tricky, { a_1: 'x', a1: 'y', a_b: 'z', ab: 'w' });
    assert.deepEqual(out.metadata_set, { stage: 'test', n: '1' });
    assert.match(out.sent_id, /^[0-9]+$/);
    assert.equal(out.sent_expiry_days, 7);
    assert.equal(out.forever_year, 9999);
    assert.equal(out.count, 2);
    // this SDK writes a carriage return as it is too, and XML reads \r\n
    // as \n, as Azure's own parser does
    const text = 'hello\nworld <&> "q" \u00e9\u{1F600}';
    assert.deepEqual(out.peeked, [[text, 0]]);
    assert.deepEqual(out.received, [[text, 1], ['forever', 1]]);
    assert.ok(out.received_year[0] < 9999);
    assert.equal(out.received_year[1], 9999);
    assert.equal(out.nothing_left, 0);
    assert.equal(out.new_receipt, true);
    assert.deepEqual(out.stale_receipt, ['PopReceiptMismatch', 400]);
    assert.deepEqual(out.again, ['updated', 2]);
    assert.deepEqual(out.deleted_again, ['MessageNotFound', 404]);
    assert.equal(out.base64_raw, '{"order": 7, "note": "caf\u00e9"}');
    assert.equal(out.base64_decoded, '{"order": 7, "note": "caf\u00e9"}');
    assert.equal(out.cleared_count, 0);
    assert.deepEqual(out.pages, [[['py-list-1', '1'], ['py-list-2', '2']], [['py-list-3', '3']]]);
    assert.deepEqual(out.missing, ['QueueNotFound', 404]);
    assert.deepEqual(out.missing_send, ['QueueNotFound', 404]);
    assert.deepEqual(out.bad_name, ['InvalidResourceName', 400]);
    assert.deepEqual(out.too_large, ['RequestBodyTooLarge', 413]);
    assert.deepEqual(out.unsupported, ['UnsupportedQueryParameter', 400]);
    assert.deepEqual(out.wrong_key, ['AuthenticationFailed', 403]);
    assert.deepEqual(out.deleted_queue, ['QueueNotFound', 404]);
    assert.equal(out.sas_message, 'by sas');
    assert.deepEqual(out.sas_properties, ['AuthorizationResourceTypeMismatch', 403]);
    assert.equal(out.sas_read_peek, 0);
    assert.deepEqual(out.sas_read_send, ['AuthorizationPermissionMismatch', 403]);
  });

  await t.test('the gateway logged no error and no key', () => {
    const logged = gateway.errors().split('\n').filter((line) => line !== '' && !line.startsWith('gateway: installing its dependencies'));
    assert.deepEqual(logged, []);
  });
});
