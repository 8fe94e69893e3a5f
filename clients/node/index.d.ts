// Type declarations of pg-lease-queue, the Node client of the queue PostgreSQL
// extension. Durations are seconds; ids are strings (node-postgres gives a
// bigint as a string), and a number is accepted where an id is given.
// The API and its behaviour: docs/clients.md.

/** What the client needs of a node-postgres pg.Pool or pg.Client. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; fields: any[] }>;
}

export interface ClientOptions {
  /** The schema the extension is installed in; found in pg_extension when left out. */
  schema?: string;
  /**
   * Name each statement, so that PostgreSQL parses and plans it once per
   * connection (default true; false behind a pool in transaction mode that
   * cannot keep prepared statements).
   */
  prepare?: boolean;
}

/** A message handed out by get, or shown by peek (without a pop receipt). */
export class Message {
  /** Made by the client from a row of queue_get or queue_peek. */
  constructor(queue: string, row: Record<string, any>);
  queue: string;
  messageId: string;
  body: string;
  headers: Record<string, unknown> | null;
  dequeueCount: number;
  insertedAt: Date;
  /** null: never expires */
  expiresAt: Date | null;
  visibleAt: Date;
  /** null for a message from peek */
  popReceipt: string | null;
  groupId: string | null;
  priority: number;
  /** when it was first handed out (extension 1.6); null: never, or before 1.6 */
  firstDequeuedAt: Date | null;
  /** The body parsed as JSON. */
  json(): any;
}

/** What a put returns. */
export class Receipt {
  /** Made by the client from a row of queue_put or queue_put_batch. */
  constructor(row: Record<string, any>);
  messageId: string;
  popReceipt: string;
  /** Infinity while the message waits for its group's turn */
  visibleAt: Date | number;
  insertedAt: Date;
  expiresAt: Date | null;
  groupId: string | null;
  priority: number;
}

/** The fields of a message that update, delete and the batch calls use. */
export interface MessageRef {
  queue: string;
  messageId: string | number;
  popReceipt: string | null;
  visibleAt?: Date | number;
}

export interface BatchResult {
  messageId: string;
  status: 'deleted' | 'updated' | 'released' | 'poisoned' | 'not_found' | 'pop_receipt_mismatch';
}

export interface PutOptions {
  /** seconds before the message is visible (default: the queue's delay, 0 unless set) */
  delay?: number | null;
  /** seconds the message lives (default: the queue's message_ttl); -1: never expires */
  ttl?: number | null;
  /** a JSON object */
  headers?: Record<string, unknown> | null;
  groupId?: string | null;
  deduplicationId?: string | null;
  /** -100 to 100, default 0 */
  priority?: number | null;
}

export interface PutBatchOptions {
  delay?: number | null;
  ttl?: number | null;
  /** one element (or null) per body */
  headers?: Array<Record<string, unknown> | null> | null;
  groupIds?: Array<string | null> | null;
  deduplicationIds?: Array<string | null> | null;
  priorities?: Array<number | null> | null;
}

export interface GetOptions {
  /** 1 to 1000, default 1 */
  maxMessages?: number | null;
  /** the lease in seconds (default: the queue's visibility_timeout) */
  visibilityTimeout?: number | null;
  /** seconds to wait for a message when none is visible, at most 20 (default 0) */
  wait?: number | null;
  releaseOnDisconnect?: boolean | null;
}

export interface UpdateOptions {
  /** a new body; not a string: stored as JSON */
  body?: unknown;
  headers?: Record<string, unknown> | null;
}

export interface MaxMessagesOptions {
  maxMessages?: number | null;
}

export interface InspectOptions {
  /** 1 to 10,000, default 100 */
  maxMessages?: number | null;
  /**
   * only the messages whose id is greater (keyset paging: the last id of
   * the page before); needs extension 1.4, and is not passed when left out
   */
  afterMessageId?: string | number | null;
}

export interface ReplayOptions {
  /** the messages deleted at or after this */
  since?: Date | null;
  /** the messages deleted before this */
  until?: Date | null;
  /** only these messages */
  messageIds?: Array<string | number> | null;
  /** at most this many, the oldest deletion first */
  maxMessages?: number | null;
}

export interface PublishOptions {
  /** a JSON object, matched against each subscription's filter */
  headers?: Record<string, unknown> | null;
  /** seconds before the messages are visible (default: each queue's delay) */
  delay?: number | null;
  /** seconds the messages live (default: each queue's message_ttl); -1: never expire */
  ttl?: number | null;
  groupId?: string | null;
  deduplicationId?: string | null;
  /** -100 to 100, default 0 */
  priority?: number | null;
}

/** One message a publish put: the queue, and the message's id in it. */
export interface Published {
  queue: string;
  messageId: string;
}

/** A row of queue_topics (extension 1.10). */
export interface TopicSubscription {
  topic: string;
  /** null: the row of a topic without subscriptions */
  queue: string | null;
  /** the SNS filter policy; null: every message */
  filter: Record<string, unknown> | null;
}

export interface ScheduleOptions {
  /** a JSON object; the worker adds "schedule" and "scheduled_for" to it */
  headers?: Record<string, unknown> | null;
  /** a name of pg_timezone_names, default 'UTC' */
  timeZone?: string | null;
}

/** A row of queue_schedules (extension 1.10). */
export interface ScheduleInfo {
  schedule: string;
  queue: string;
  cron: string;
  timeZone: string;
  /** the next due time */
  nextAt: Date;
  /** the due time of the last message put; null before the first */
  lastAt: Date | null;
  [column: string]: unknown;
}

export interface RedriveOptions {
  destination?: string | null;
  maxMessages?: number | null;
}

/**
 * Settings of createQueue and alterQueue. A setting left out takes the
 * extension's default (create) or stays as it is (alter); null is passed
 * as NULL: for createQueue, maxDequeueCount null means no poison queue and
 * messageTtl null means messages never expire; for alterQueue, null leaves
 * the setting unchanged and messageTtl -1 means new messages never expire.
 */
export interface QueueSettings {
  visibilityTimeout?: number | null;
  messageTtl?: number | null;
  maxDequeueCount?: number | null;
  maxMessageSize?: number | null;
  deduplicationWindow?: number | null;
  /**
   * extension 1.8 on, the retry policy of release: seconds a message given
   * back stays invisible, doubled for each delivery before with
   * retryBackoff (give or take 10 %), never more than retryDelayMax
   */
  retryDelay?: number | null;
  retryBackoff?: boolean | null;
  retryDelayMax?: number | null;
  /**
   * extension 1.9 on: seconds a message deleted by a consumer is kept for
   * replay (createQueue: null or 0, not kept; alterQueue: null leaves it,
   * 0 keeps no more), at most 365 days
   */
  retention?: number | null;
}

/**
 * What alterQueue alone sets (extension 1.6): the delay of puts that name
 * none, any other queue as the poison queue, and attributes and tags
 * (objects of strings, merged in; a key set to null is removed).
 */
export interface AlterQueueSettings extends QueueSettings {
  delay?: number | null;
  poisonQueue?: string | null;
  attributes?: Record<string, string | null> | null;
  tags?: Record<string, string | null> | null;
}

/** A row of queue_inspect. */
export interface InspectedMessage {
  messageId: string;
  /** 'deleted': kept after its delete by the queue's retention (extension 1.9) */
  state: 'visible' | 'waiting' | 'delayed' | 'in_flight' | 'expired' | 'deleted';
  dequeueCount: number;
  insertedAt: Date;
  expiresAt: Date | null;
  /** Infinity while the message waits for its group's turn */
  visibleAt: Date | number;
  sourceQueue: string | null;
  headers: Record<string, unknown> | null;
  body: string;
  groupId: string | null;
  priority: number;
  /** extension 1.9 on: when a message in state 'deleted' was deleted; null for the others */
  deletedAt?: Date | null;
  [column: string]: unknown;
}

/** A row of queue_stats. */
export interface QueueStats {
  queue: string;
  visible: number;
  inFlight: number;
  delayed: number;
  total: number;
  /** seconds; null when no message is visible */
  oldestVisibleAge: number | null;
  puts: number;
  gets: number;
  deletes: number;
  poisoned: number;
  expired: number;
  [column: string]: unknown;
}

/** A row of queue_list. */
export interface QueueInfo {
  queue: string;
  visibilityTimeout: number;
  /** null: messages never expire */
  messageTtl: number | null;
  maxDequeueCount: number | null;
  maxMessageSize: number;
  poisonQueue: string | null;
  createdAt: Date;
  /** extension 1.6 on: seconds a put that names no delay stays invisible */
  delay?: number;
  /** extension 1.6 on: the queue's attributes and tags, set by alterQueue */
  attributes?: Record<string, string>;
  tags?: Record<string, string>;
  /** extension 1.8 on: the retry policy, and whether the queue is paused */
  retryDelay?: number;
  retryBackoff?: boolean;
  retryDelayMax?: number | null;
  paused?: boolean;
  /** extension 1.9 on: seconds a deleted message is kept; null: not kept */
  retention?: number | null;
  [column: string]: unknown;
}

export class Client {
  /**
   * A connection string: the client opens a pg.Pool of its own (closed by
   * close()), and each Worker on the client opens one more connection for
   * its long poll. A string may list several servers, as libpq takes them
   * (postgresql://app@db1,db2,db3/app?target_session_attrs=read-write):
   * each new connection goes to the first that connects and, with
   * read-write or primary, takes writes (see openPool). A pg.Pool or pg.Client: used as it is, never closed; see
   * Worker for the connections a worker then takes.
   *
   * What the client checks itself rejects before any call to the server:
   * with ArgumentTypeError (an unknown option, a duration that is not a
   * number, an array that is not one) or ArgumentRangeError (a batch of
   * messages of several queues). What the server refuses rejects with the
   * QueueError of its SQLSTATE.
   */
  constructor(dsnOrConnection: string | Queryable, options?: ClientOptions);
  put(queue: string, body: unknown, options?: PutOptions): Promise<Receipt>;
  putBatch(queue: string, bodies: unknown[], options?: PutBatchOptions): Promise<Receipt[]>;
  get(queue: string, options?: GetOptions): Promise<Message[]>;
  /** Extends (or with 0 releases) the lease; refreshes the message's popReceipt and visibleAt. */
  update<M extends MessageRef>(message: M, visibilityTimeout: number, options?: UpdateOptions): Promise<M>;
  delete(message: MessageRef): Promise<void>;
  /** Gives the message back as failed (extension 1.8 on): visible after the queue's retry delay, or moved to poison at the dequeue limit (popReceipt null). */
  release<M extends MessageRef>(message: M): Promise<M>;
  /** The messages must be of one queue; status released or poisoned, or why not. */
  releaseBatch(messages: MessageRef[]): Promise<BatchResult[]>;
  /** The messages must be of one queue. */
  deleteBatch(messages: MessageRef[]): Promise<BatchResult[]>;
  /** Deletes the messages done with and gets the next ones in one call (extension 1.7 on); does not wait when given messages to delete. */
  deleteAndGet(queue: string, done: MessageRef[], options?: GetOptions): Promise<{ deleted: BatchResult[]; messages: Message[] }>;
  /** The messages must be of one queue; those updated get their new popReceipt and visibleAt. */
  updateBatch(messages: MessageRef[], visibilityTimeout: number, options?: { keepPopReceipts?: boolean }): Promise<BatchResult[]>;
  peek(queue: string, options?: MaxMessagesOptions): Promise<Message[]>;
  inspect(queue: string, options?: InspectOptions): Promise<InspectedMessage[]>;
  stats(queue: string): Promise<QueueStats>;
  stats(): Promise<QueueStats[]>;
  listQueues(): Promise<QueueInfo[]>;
  createQueue(queue: string, settings?: QueueSettings): Promise<void>;
  alterQueue(queue: string, settings?: AlterQueueSettings): Promise<void>;
  dropQueue(queue: string): Promise<void>;
  /** Gets hand out nothing until resume (extension 1.8 on). */
  pause(queue: string): Promise<void>;
  resume(queue: string): Promise<void>;
  /** Deletes every message of the queue; returns how many. */
  clear(queue: string): Promise<number>;
  /** Moves a poison queue's visible messages back; returns how many. */
  redrive(source: string, options?: RedriveOptions): Promise<number>;
  /** Puts messages kept after their delete back into the queue (extension 1.9 on, needs manage); returns how many. */
  replay(queue: string, options?: ReplayOptions): Promise<number>;
  /** Creates a topic (extension 1.10 on); its name may be no queue's. */
  createTopic(topic: string): Promise<void>;
  /** Drops the topic, its subscriptions and its grants; the queues and their messages stay. */
  dropTopic(topic: string): Promise<void>;
  /** Subscribes the queue; filter is an SNS filter policy on headers (left out or null: every message). Again: replaces the filter. */
  subscribe(topic: string, queue: string, filter?: Record<string, unknown> | null): Promise<void>;
  /** Ends the subscription, if there is one. */
  unsubscribe(topic: string, queue: string): Promise<void>;
  /** Puts the message into every subscribed queue whose filter the headers match; one entry per message, in the order of the queues' names. */
  publish(topic: string, body: unknown, options?: PublishOptions): Promise<Published[]>;
  /** The topics the role holds some permission on, a row per subscription. */
  topics(): Promise<TopicSubscription[]>;
  /** Puts body into queue each time cron is due in the time zone (extension 1.10 on); again: replaces the schedule. */
  schedule(name: string, queue: string, cron: string, body: unknown, options?: ScheduleOptions): Promise<void>;
  /** Removes the schedule; QueueNotFound (42704) if there is none. */
  unschedule(name: string): Promise<void>;
  /** The schedules of the queues the role may see. */
  schedules(): Promise<ScheduleInfo[]>;
  /** The first time cron is due in timeZone (default 'UTC') strictly after after. */
  cronNext(cron: string, after: Date, timeZone?: string | null): Promise<Date>;
  /** Closes the pool the client opened. */
  close(): Promise<void>;
}

export interface Logger {
  warn(message: string): void;
}

export interface WorkerOptions {
  /** messages per get, 1 to 1000 (default 16) */
  batchSize?: number;
  /** fetch again when this few are in process (default batchSize / 2) */
  newBatchThreshold?: number;
  /** the lease, in seconds (default 30) */
  visibilityTimeout?: number;
  /** extend a lease when less than this is left, in seconds (default 5); less than visibilityTimeout */
  extensionThreshold?: number;
  /** how often leases are checked, in seconds (default 1) */
  heartbeatInterval?: number;
  /**
   * the longest pause between two tries of a failed get, in seconds
   * (default 60); a failed lease call is tried again at the next heartbeat.
   * A long poll waits min(maxPollingInterval, 20) s.
   */
  maxPollingInterval?: number;
  /**
   * a failed message is visible again after this, in seconds; null
   * (default): after the queue's retry delay (release)
   */
  failureDelay?: number | null;
  /** handlers running at once (default batchSize + newBatchThreshold) */
  concurrency?: number;
  /** where warnings go (default console); null: nowhere */
  logger?: Logger | null;
}

export interface WorkerMetrics {
  fetched: number;
  /** handled and deleted */
  processed: number;
  /** the handler threw or rejected */
  failed: number;
  lostLeases: number;
  /** leases extended, one per message */
  extensions: number;
  /**
   * messages given back unhandled at a stop: those whose handler had not
   * started, and after stop(timeout)'s deadline those still running (a
   * failed message, given back, counts in failed only)
   */
  released: number;
  /** failed calls to the server */
  errors: number;
}

/** Returns (or resolves) when the message is done; throws (or rejects) when it failed. */
export type Handler = (message: Message) => unknown;

/**
 * The consumer loop of docs/clients.md. Its long poll waits on a
 * connection the lease calls do not use, where the client allows it, so
 * that they are not held up behind it:
 * - a client made from a connection string: the worker opens one connection
 *   (with the same string) for its long poll, connects it again after it is
 *   lost, and closes it at the stop; the lease calls use the client's pool;
 * - a client on a pg.Pool: each worker holds one of the pool's connections
 *   for the time of each long poll (up to 20 s), so the pool needs more
 *   connections (`max`) than there are workers on it, or the lease calls
 *   wait behind the polls and leases run out;
 * - a client on one pg.Client (or a pool of one): the worker shares it, and
 *   polls no longer than heartbeatInterval so that the leases are kept.
 */
export class Worker {
  /**
   * Throws ArgumentTypeError (a TypeError) for an argument or option of the
   * wrong type, ArgumentRangeError (a RangeError) for one out of range, e.g.
   * extensionThreshold not less than visibilityTimeout.
   */
  constructor(client: Client, queue: string, handler: Handler, options?: WorkerOptions);
  readonly metrics: WorkerMetrics;
  /** Runs until stop(); resolves then, never rejects. */
  start(): Promise<void>;
  /**
   * Stops fetching (a waiting get is cancelled), releases what has not
   * started, waits for the running handlers (at most timeoutSeconds, then
   * releases theirs too), deletes or releases what they finished. A call the
   * server does not take is tried again at every heartbeat until it does, or
   * until timeoutSeconds have passed: what is left then comes back after
   * its lease.
   */
  stop(timeoutSeconds?: number): Promise<void>;
}

export class QueueError extends Error {
  constructor(message: string, code: string, cause?: unknown);
  /** the SQLSTATE */
  code: string;
  /** the driver's error */
  cause?: unknown;
}
/** QU404: the message was deleted, expired or moved to poison */
export class MessageNotFound extends QueueError {}
/** QU409: another consumer got the message since */
export class ReceiptMismatch extends QueueError {}
/** 42704 */
export class QueueNotFound extends QueueError {}
/** 42710 */
export class QueueExists extends QueueError {}
/** 42501 */
export class PermissionDenied extends QueueError {}
/**
 * 22023, 22004: a bad or missing argument, from the server.
 * `instanceof InvalidArgument` (and `instanceof QueueError`) also holds for
 * the client's own ArgumentTypeError and ArgumentRangeError.
 */
export class InvalidArgument extends QueueError {}
/** 54000 */
export class MessageTooLarge extends QueueError {}

/**
 * An argument of the wrong type, refused by the client before it calls the
 * server (an unknown option, a duration that is not a number, ...).
 */
export class ArgumentTypeError extends TypeError {
  constructor(message: string);
  /** '22023', as the server would say */
  code: '22023';
}

/**
 * An argument out of range, refused by the client before it calls the
 * server (a batch of messages of several queues, a worker option).
 */
export class ArgumentRangeError extends RangeError {
  constructor(message: string);
  /** '22023', as the server would say */
  code: '22023';
}

/**
 * A pool for a connection string: a pg.Pool for one server; for a string
 * that lists several (postgresql://app@db1:5432,db2:5432/app), or asks for
 * target_session_attrs=read-write or primary, a pool whose every new
 * connection tries the servers in turn, from the one that served last, and
 * keeps the first that connects and takes writes, as libpq does: after a
 * failover it finds the new primary. connect_timeout (seconds) bounds each
 * attempt. What the client and the gateway use; options are pg.Pool's.
 */
export function openPool(dsn: string, options?: { max?: number; [option: string]: unknown }): Queryable & {
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error' | 'connect', listener: (arg: any) => void): unknown;
  readonly totalCount: number;
};
