// Compiled by types.test.js with tsc --noEmit --strict: the declarations
// of index.d.ts describe the calls as the README and the tests use them.
import {
  Client, Worker, Message, Receipt, BatchResult, QueueStats, QueueInfo, InspectedMessage, WorkerMetrics,
  Published, TopicSubscription, ScheduleInfo,
  QueueError, MessageNotFound, ReceiptMismatch, QueueNotFound, QueueExists, PermissionDenied, InvalidArgument,
  MessageTooLarge, ArgumentTypeError, ArgumentRangeError, openPool,
} from '../index';

// what a pg.Pool or pg.Client offers, as far as the client uses it
declare const pool: { query(text: string, values?: unknown[]): Promise<{ rows: any[]; fields: any[] }> };

async function producer(): Promise<string> {
  const client = new Client('postgresql:///app', { schema: 'queue' });
  const receipt: Receipt = await client.put('orders', { order: 42 }, {
    delay: 5, ttl: -1, headers: { kind: 'order' }, groupId: null, deduplicationId: 'order-42', priority: 10,
  });
  const receipts: Receipt[] = await client.putBatch('orders', ['a', 'b'], {
    headers: [{ n: 1 }, null], groupIds: ['g', null], deduplicationIds: [null, 'd'], priorities: [0, 1],
  });
  await client.createQueue('orders', { visibilityTimeout: 30, maxDequeueCount: null, deduplicationWindow: 60 });
  await client.alterQueue('orders', { messageTtl: -1 });
  await client.alterQueue('orders', {
    delay: 10, poisonQueue: 'orders-dlq', attributes: { owner: 'billing', gone: null }, tags: { team: 'a' },
  });
  await client.createQueue('kept', { retention: 86400 });
  await client.alterQueue('kept', { retention: 0 });
  const replayed: number = await client.replay('kept', { since: new Date(0), until: null, messageIds: ['1', 2], maxMessages: 10 });
  const queued: Receipt = await client.put('orders', 'x', { delay: null });
  const n: number = await client.clear('orders') + await client.redrive('orders-poison', { destination: 'orders', maxMessages: 10 });
  await client.dropQueue('orders');
  await client.close();
  return `${receipt.messageId} ${receipts.length} ${n + replayed} ${receipt.expiresAt === null} ${queued.visibleAt}`;
}

async function followsTheLeader(): Promise<number> {
  const leader = openPool('postgresql://app@db1:5432,db2:5432/app?target_session_attrs=read-write&connect_timeout=5', { max: 8 });
  leader.on('error', () => {});
  const client = new Client(leader);
  await client.put('orders', 'x');
  const { rows } = await leader.query('SELECT 1 AS one');
  await leader.end();
  return leader.totalCount + rows.length;
}

async function topicsAndSchedules(): Promise<string> {
  const client = new Client('postgresql:///app');
  await client.createTopic('orders');
  await client.subscribe('orders', 'billing');
  await client.subscribe('orders', 'eu-shipping', { region: [{ prefix: 'eu-' }] });
  await client.subscribe('orders', 'us-shipping', null);
  const published: Published[] = await client.publish('orders', { id: 42 }, {
    headers: { region: 'eu-west' }, delay: 5, ttl: -1, groupId: 'g', deduplicationId: 'order-42', priority: 1,
  });
  const plain: Published[] = await client.publish('orders', 'x');
  const ids: string[] = published.concat(plain).map((p) => `${p.queue}:${p.messageId}`);
  const subscriptions: TopicSubscription[] = await client.topics();
  const unsubscribed: (string | null)[] = subscriptions.map((row) => row.queue);
  const filter: Record<string, unknown> | null = subscriptions[0].filter;
  await client.unsubscribe('orders', 'us-shipping');
  await client.dropTopic('orders');
  await client.schedule('nightly', 'reports', '30 2 * * *', { report: 'sales' }, { headers: { kind: 'report' }, timeZone: 'Europe/Paris' });
  await client.schedule('hourly', 'reports', '@hourly', 'tick');
  const schedules: ScheduleInfo[] = await client.schedules();
  const next: Date = schedules[0].nextAt;
  const last: Date | null = schedules[0].lastAt;
  const zone: string = schedules[0].timeZone;
  const due: Date = await client.cronNext('*/15 * * * *', new Date(), 'UTC');
  const dueUtc: Date = await client.cronNext('@daily', new Date());
  await client.unschedule('nightly');
  void [unsubscribed, filter, next, last, zone, due, dueUtc];
  return ids.join(' ');
}

async function consumer(): Promise<void> {
  const client = new Client(pool);
  const messages: Message[] = await client.get('orders', { maxMessages: 10, visibilityTimeout: 30, wait: 5, releaseOnDisconnect: false });
  for (const message of messages) {
    const id: string = message.messageId;
    const count: number = message.dequeueCount;
    const parsed: unknown = message.json();
    const updated: Message = await client.update(message, 60, { body: { done: false }, headers: { step: 2 } });
    const visible: Date = updated.visibleAt;
    void [id, count, parsed, visible];
    try {
      await client.delete(message);
    } catch (err) {
      if (err instanceof MessageNotFound || err instanceof ReceiptMismatch) {
        const code: string = err.code;
        void code;
      } else if (err instanceof QueueError) {
        const cause: unknown = err.cause;
        void cause;
      }
    }
  }
  const results: BatchResult[] = await client.deleteBatch(messages);
  const statuses: string[] = (await client.updateBatch(messages, 0)).map((r) => r.status).concat(results.map((r) => r.status));
  const kept: BatchResult[] = await client.updateBatch(messages, 30, { keepPopReceipts: true });
  const peeked: (string | null)[] = (await client.peek('orders', { maxMessages: 2 })).map((m) => m.popReceipt);
  const rows: InspectedMessage[] = await client.inspect('orders', { maxMessages: 100 });
  const nextPage: InspectedMessage[] = await client.inspect('orders', { maxMessages: 50, afterMessageId: rows[0].messageId });
  const byNumber: InspectedMessage[] = await client.inspect('orders', { afterMessageId: 42 });
  const one: QueueStats = await client.stats('orders');
  const all: QueueStats[] = await client.stats();
  const queues: QueueInfo[] = await client.listQueues();
  const ttl: number | null = queues[0].messageTtl;
  const delay: number | undefined = queues[0].delay;
  const tags: Record<string, string> | undefined = queues[0].tags;
  const retention: number | null | undefined = queues[0].retention;
  const deletedAt: Date | null | undefined = rows.find((row) => row.state === 'deleted')?.deletedAt;
  void [retention, deletedAt];
  void [statuses, kept, peeked, rows, nextPage, byNumber, one.inFlight, all, ttl, delay, tags, queues[0].attributes];
  const errors = [QueueNotFound, QueueExists, PermissionDenied, InvalidArgument, MessageTooLarge];
  void errors;

  const worker = new Worker(client, 'orders', async (message: Message) => {
    if (message.body === 'fail') throw new Error('failed');
  }, {
    batchSize: 16, newBatchThreshold: 8, visibilityTimeout: 30, extensionThreshold: 5, heartbeatInterval: 1,
    maxPollingInterval: 60, failureDelay: 0, concurrency: 24, logger: { warn: (line: string) => void line },
  });
  const plain = new Worker(client, 'orders', (message) => { void message.body; }, { logger: null });
  const run: Promise<void> = worker.start();
  const metrics: WorkerMetrics = worker.metrics;
  const sum: number = metrics.fetched + metrics.processed + metrics.failed + metrics.lostLeases +
    metrics.extensions + metrics.released + metrics.errors;
  void [plain, sum];
  await worker.stop(10);
  await run;
}

// The client's own argument errors are the language's TypeError and RangeError.
function argumentError(err: unknown): string {
  if (err instanceof ArgumentTypeError) {
    const asTypeError: TypeError = err;
    const code: '22023' = err.code;
    return `${asTypeError.message} ${code}`;
  }
  if (err instanceof ArgumentRangeError) {
    const asRangeError: RangeError = err;
    return `${asRangeError.name} ${err.code}`;
  }
  return err instanceof InvalidArgument ? err.code : '';
}

// Misuse that must not compile: each line below is an error tsc expects.
async function misuse(client: Client): Promise<void> {
  // @ts-expect-error: the options of put are camelCase
  await client.put('orders', 'x', { group_id: 'g' });
  // @ts-expect-error: a duration is a number of seconds
  await client.get('orders', { visibilityTimeout: '30 seconds' });
  // @ts-expect-error: a worker needs a handler
  new Worker(client, 'orders');
  // @ts-expect-error: createQueue does not take the settings only alterQueue has
  await client.createQueue('orders', { delay: 10 });
  // @ts-expect-error: the values of tags are strings
  await client.alterQueue('orders', { tags: { n: 1 } });
  // @ts-expect-error: since is a Date
  await client.replay('orders', { since: '2024-01-01' });
  // @ts-expect-error: the options of publish are camelCase
  await client.publish('orders', 'x', { group_id: 'g' });
  // @ts-expect-error: after is a Date
  await client.cronNext('* * * * *', '2026-01-01');
  // @ts-expect-error: the time zone of a schedule is an option
  await client.schedule('nightly', 'reports', '0 3 * * *', 'x', 'Europe/Paris');
}

void [producer, consumer, topicsAndSchedules, misuse, argumentError];
