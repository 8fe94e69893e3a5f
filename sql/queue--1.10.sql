/*
 * queue--1.10.sql
 *		Install script of the queue extension, version 1.10.
 *
 * CREATE EXTENSION queue runs this script alone.  It makes what
 * queue--1.0.sql and the upgrade scripts after it make, object for object
 * (test/t/013_upgrade.pl compares the catalogs); an installed earlier
 * version is brought here by those upgrade scripts.
 *
 * The API (types and functions) goes into the extension's schema, public
 * unless CREATE EXTENSION says otherwise.  All data lives in the schema
 * queue_storage, which belongs to the extension and which no ordinary role
 * can read or write: the C functions reach it as the extension owner, with
 * search_path pinned to pg_catalog.
 *
 * The script runs with search_path set to the extension's schema, where
 * other roles may be able to create functions and operators: every function
 * and operator it calls is named with its schema (test/layout.py checks).
 */

\echo Use "CREATE EXTENSION queue" to load this file. \quit

CREATE SCHEMA queue_storage;
REVOKE ALL ON SCHEMA queue_storage FROM PUBLIC;

CREATE SEQUENCE queue_storage.queue_id_seq AS integer;
CREATE SEQUENCE queue_storage.message_id_seq AS bigint;

-- One row per queue.  A poison queue is an ordinary row with is_poison set;
-- its parent points at it through poison_queue_id.
CREATE TABLE queue_storage.queues (
	queue_id integer PRIMARY KEY
		DEFAULT pg_catalog.nextval('queue_storage.queue_id_seq'),
	name text NOT NULL UNIQUE,
	visibility_timeout interval NOT NULL,
	message_ttl interval,				-- NULL: messages never expire
	max_dequeue_count integer,			-- NULL: no poison routing
	max_message_size integer NOT NULL,
	poison_queue_id integer,
	is_poison boolean NOT NULL,
	created_at timestamptz NOT NULL,
	-- how long a put's deduplication_id is remembered
	deduplication_window interval NOT NULL DEFAULT '5 minutes',
	-- how long a put that names no visibility_timeout stays invisible
	delay interval NOT NULL DEFAULT '0',
	-- JSON objects of strings kept for clients, not interpreted: the
	-- attributes of another protocol (the SQS gateway's) and tags
	attributes jsonb NOT NULL DEFAULT '{}',
	tags jsonb NOT NULL DEFAULT '{}',
	-- how long a message given back by queue_release stays invisible: the
	-- delay, doubled for each delivery before the last with backoff, capped
	retry_delay interval NOT NULL DEFAULT '0',
	retry_backoff boolean NOT NULL DEFAULT false,
	retry_delay_max interval,			-- NULL: no cap
	paused boolean NOT NULL DEFAULT false,	-- queue_pause: gets hand out nothing
	-- how long a message a consumer deleted is kept in retained; NULL: not kept
	retention interval
);
ALTER SEQUENCE queue_storage.queue_id_seq OWNED BY queue_storage.queues.queue_id;

-- Every message of every queue.  Rows live seconds to minutes, so vacuum is
-- asked to come after a fixed number of dead rows rather than a fraction of
-- the table, and not to throttle itself.  Nor to give the table's empty tail
-- back: the traffic would extend it again at once.  The worker's vacuum does
-- that when the table is far bigger than the traffic needs (src/vacuum.c).
-- Puts fill its pages to half, so that a get's new version of a row finds
-- room on the page of the old one, and the WAL record of the get holds only
-- the bytes that changed, not the body again: PostgreSQL leaves out of
-- that record the bytes the old and the new version share at their start
-- and at their end.  So the columns a get changes stand together, after
-- those it never changes and before headers and body.
CREATE TABLE queue_storage.messages (
	message_id bigint PRIMARY KEY,
	queue_id integer NOT NULL,
	inserted_at timestamptz NOT NULL,
	expires_at timestamptz,				-- NULL: never expires
	priority smallint NOT NULL DEFAULT 0,
	group_id text,
	source_queue text,					-- set when moved to a poison queue
	-- what a get changes
	visible_at timestamptz NOT NULL,
	dequeue_count integer NOT NULL DEFAULT 0,
	last_lease boolean NOT NULL DEFAULT false,	-- see messages_last_lease
	pop_receipt uuid,
	holder_pid integer,					-- release_on_disconnect: the session
	holder_start timestamptz,			-- holding the lease (pid, start time)
	first_dequeued_at timestamptz,		-- when first handed out; NULL: never
	headers jsonb,
	body text NOT NULL
) WITH (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0.01,
	autovacuum_vacuum_insert_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.05,
	autovacuum_vacuum_cost_delay = 0,
	vacuum_truncate = false,
	fillfactor = 50
);
ALTER SEQUENCE queue_storage.message_id_seq OWNED BY queue_storage.messages.message_id;

-- queue_get starts at the first visible message of its queue and walks
-- forward in visibility order: in-flight and delayed messages sort after
-- now() and are never walked over.  Priority 0, the level of almost every
-- message, is walked in the claim index; the other levels, highest first, in
-- messages_priority.  A backlog at one level is never walked over to reach
-- another.
CREATE INDEX messages_claim ON queue_storage.messages (queue_id, visible_at, message_id)
	WHERE priority OPERATOR(pg_catalog.=) 0;
CREATE INDEX messages_priority
	ON queue_storage.messages (queue_id, priority DESC, visible_at, message_id)
	WHERE priority OPERATOR(pg_catalog.<>) 0;

-- The messages of a group in put order: the group's first message, and the
-- next ones a get takes after it.  Messages waiting behind the first one of
-- their group are kept out of the claim's way with visible_at 'infinity'.
CREATE INDEX messages_group
	ON queue_storage.messages (queue_id, group_id COLLATE "C", message_id)
	WHERE group_id IS NOT NULL;

-- The sweep deletes expired messages oldest first.
CREATE INDEX messages_expiry ON queue_storage.messages (expires_at)
	WHERE expires_at IS NOT NULL;

-- The sweep looks for poison messages only among messages whose lease is
-- their last: handed out max_dequeue_count times, so that when the lease
-- ends they go to the poison queue.  The get sets last_lease, and
-- queue_alter marks a queue's messages again when it changes the limit.
-- Only those few messages have an entry, not every message handed out.
CREATE INDEX messages_last_lease ON queue_storage.messages (queue_id, visible_at)
	WHERE last_lease;

-- The sweep looks for leases whose session ended among the few taken with
-- release_on_disconnect.
CREATE INDEX messages_holder ON queue_storage.messages (message_id)
	WHERE holder_pid IS NOT NULL;

-- Counters since a queue's creation.  Each backend adds to its own row
-- (shard = its backend id), so concurrent sessions never wait on each other
-- to count; queue_stats sums the shards.  Every committing transaction
-- updates its backend's row in place (HOT), leaving a chain of versions that
-- the next update walks until the page is pruned; fillfactor 10 has the page
-- pruned after about ten versions instead of about a hundred (measured: a
-- quarter of a get's instructions went to walking the chain at fillfactor 50).
CREATE TABLE queue_storage.counters (
	queue_id integer NOT NULL,
	shard integer NOT NULL,
	puts bigint NOT NULL DEFAULT 0,
	gets bigint NOT NULL DEFAULT 0,
	deletes bigint NOT NULL DEFAULT 0,
	poisoned bigint NOT NULL DEFAULT 0,
	expired bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (queue_id, shard)
) WITH (
	fillfactor = 10,
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);

-- Per-queue permissions (queue_grant, queue_revoke).  queue_id 0 stands
-- for '*': every queue, present and future.
CREATE TABLE queue_storage.grants (
	queue_id integer NOT NULL,
	grantee regrole NOT NULL,
	permission text NOT NULL
		CHECK (permission OPERATOR(pg_catalog.=) ANY (ARRAY['send', 'process', 'read', 'manage'])),
	PRIMARY KEY (queue_id, grantee, permission)
);

REVOKE ALL ON ALL TABLES IN SCHEMA queue_storage FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA queue_storage FROM PUBLIC;

-- pg_dump keeps queues, messages (pop receipts included) and counters.
SELECT pg_catalog.pg_extension_config_dump('queue_storage.queues', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.messages', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.counters', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.grants', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.queue_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.message_id_seq', '');

-- The deduplication_ids of a queue's recent puts, each with the receipt of
-- the message it stored; kept until forget_at (the put's time plus the
-- window), whether the message is still there or not, and then deleted by
-- the sweep.  Made after the REVOKE above, as the update to 1.3 makes it:
-- its privileges are a new table's, its owner's alone.
CREATE TABLE queue_storage.deduplication (
	queue_id integer NOT NULL,
	deduplication_id text COLLATE "C" NOT NULL,	-- compared byte by byte: cheaper
	message_id bigint NOT NULL,
	visible_at timestamptz NOT NULL,
	inserted_at timestamptz NOT NULL,
	expires_at timestamptz,
	forget_at timestamptz NOT NULL,
	group_id text,
	priority smallint NOT NULL,
	PRIMARY KEY (queue_id, deduplication_id)
) WITH (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);
CREATE INDEX deduplication_forget ON queue_storage.deduplication (forget_at);
-- pg_dump keeps the ids, so that a restored queue still refuses repeats
SELECT pg_catalog.pg_extension_config_dump('queue_storage.deduplication', '');

-- How many messages each queue held by state when the background worker
-- last counted them (src/worker/census.c), so that a scrape reads one row
-- per queue instead of every message.  The worker counts every
-- queue.metrics_interval while queue_metrics is read, and writes only the
-- rows that changed.  The row of queue_id 0 is the census itself: its
-- taken_at is when the last one ran.
CREATE TABLE queue_storage.census (
	queue_id integer PRIMARY KEY,
	visible bigint NOT NULL,
	in_flight bigint NOT NULL,
	delayed bigint NOT NULL,
	oldest_visible_at timestamptz,		-- inserted_at of the oldest visible one
	taken_at timestamptz NOT NULL		-- the census that wrote this row
) WITH (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000
);
REVOKE ALL ON queue_storage.census FROM PUBLIC;

-- The messages consumers deleted from a queue with a retention, kept for
-- audit and replay until the background worker removes them (deleted_at
-- plus the queue's retention).  A table apart from messages, so that what
-- is kept never lengthens a claim's scan nor the table's vacuum.  Its
-- privileges are a new table's, its owner's alone, as the update to 1.9
-- makes it.
CREATE TABLE queue_storage.retained (
	queue_id integer NOT NULL,
	message_id bigint NOT NULL,
	deleted_at timestamptz NOT NULL,
	inserted_at timestamptz NOT NULL,
	expires_at timestamptz,
	priority smallint NOT NULL,
	group_id text,
	source_queue text,
	dequeue_count integer NOT NULL,
	first_dequeued_at timestamptz,
	headers jsonb,
	body text NOT NULL
) WITH (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0.01,
	autovacuum_vacuum_insert_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0
);
-- One index, each queue's messages by the time of their delete: for the
-- worker's removal and a replay by time.  Every delete that keeps a
-- message adds an entry to each index, so there is no other: a replay by
-- id and queue_inspect walk the queue's entries instead.  Without a primary key, deletes from
-- the table are published whole where it is replicated logically.
CREATE INDEX retained_deleted ON queue_storage.retained (queue_id, deleted_at);
ALTER TABLE queue_storage.retained REPLICA IDENTITY FULL;
SELECT pg_catalog.pg_extension_config_dump('queue_storage.retained', '');

-- Topics (queue_topic_create): a name in the namespace of queues, with an
-- id from the queues' sequence, so that grants and locks keyed by a
-- queue's id serve a topic as well.  Their privileges are new tables',
-- the owner's alone, as the update to 1.10 makes them.
CREATE TABLE queue_storage.topics (
	topic_id integer PRIMARY KEY
		DEFAULT pg_catalog.nextval('queue_storage.queue_id_seq'),
	name text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL
);
-- Which queues a topic's publishes go to (queue_subscribe), each with the
-- filter policy on headers a message must match (NULL: every message).
CREATE TABLE queue_storage.subscriptions (
	topic_id integer NOT NULL,
	queue_id integer NOT NULL,
	filter jsonb,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (topic_id, queue_id)
);
CREATE INDEX subscriptions_queue ON queue_storage.subscriptions (queue_id);
SELECT pg_catalog.pg_extension_config_dump('queue_storage.topics', '');
SELECT pg_catalog.pg_extension_config_dump('queue_storage.subscriptions', '');

-- Schedules (queue_schedule): a message put into a queue each time a cron
-- expression is due in a time zone.  next_at is the next due time; the
-- background worker puts the message and moves it on in one transaction.
CREATE TABLE queue_storage.schedules (
	schedule text PRIMARY KEY,
	queue_id integer NOT NULL,
	cron text NOT NULL,
	time_zone text NOT NULL,
	body text NOT NULL,
	headers jsonb,
	next_at timestamptz NOT NULL,
	last_at timestamptz,				-- the due time of the last message put
	created_at timestamptz NOT NULL
);
CREATE INDEX schedules_due ON queue_storage.schedules (next_at);
CREATE INDEX schedules_queue ON queue_storage.schedules (queue_id);
SELECT pg_catalog.pg_extension_config_dump('queue_storage.schedules', '');


CREATE TYPE @extschema@.queue_message AS (
	message_id bigint,
	body text,
	headers jsonb,
	dequeue_count integer,
	inserted_at timestamptz,
	expires_at timestamptz,
	visible_at timestamptz,
	pop_receipt uuid,
	group_id text,
	priority integer,
	first_dequeued_at timestamptz
);
COMMENT ON TYPE @extschema@.queue_message IS
	'A message as queue_get, queue_peek return it; pop_receipt is the lease''s receipt (NULL from queue_peek), first_dequeued_at when it was first handed out';

CREATE TYPE @extschema@.queue_receipt AS (
	message_id bigint,
	pop_receipt uuid,
	visible_at timestamptz,
	inserted_at timestamptz,
	expires_at timestamptz,
	group_id text,
	priority integer
);
COMMENT ON TYPE @extschema@.queue_receipt IS
	'What queue_put and queue_update return: the message id, its newest pop receipt and its times';

CREATE FUNCTION @extschema@.queue_create(
	queue text,
	visibility_timeout interval DEFAULT '30 seconds',
	message_ttl interval DEFAULT '7 days',
	max_dequeue_count integer DEFAULT 5,
	max_message_size integer DEFAULT 1048576,
	deduplication_window interval DEFAULT '5 minutes',
	retry_delay interval DEFAULT '0',
	retry_backoff boolean DEFAULT false,
	retry_delay_max interval DEFAULT NULL,
	retention interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_create' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer, interval, interval, boolean, interval, interval) IS
	'Creates a queue and, unless max_dequeue_count is NULL, its poison queue <queue>-poison';

CREATE FUNCTION @extschema@.queue_drop(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_drop' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_drop(text) IS
	'Removes a queue and its messages; its poison queue stays';

CREATE FUNCTION @extschema@.queue_clear(queue text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'queue_clear' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_clear(text) IS
	'Deletes every message of a queue; returns how many';

CREATE FUNCTION @extschema@.queue_list()
RETURNS TABLE (
	queue text,
	visibility_timeout interval,
	message_ttl interval,
	max_dequeue_count integer,
	max_message_size integer,
	poison_queue text,
	created_at timestamptz,
	delay interval,
	attributes jsonb,
	tags jsonb,
	retry_delay interval,
	retry_backoff boolean,
	retry_delay_max interval,
	paused boolean,
	retention interval)
AS 'MODULE_PATHNAME', 'queue_list' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_list() IS
	'One row per queue the caller may see: its settings, poison queue, creation time, attributes, tags, retry policy, whether it is paused, and its retention';

CREATE FUNCTION @extschema@.queue_stats(queue text DEFAULT NULL)
RETURNS TABLE (
	queue text,
	visible bigint,
	in_flight bigint,
	delayed bigint,
	total bigint,
	oldest_visible_age interval,
	puts bigint,
	gets bigint,
	deletes bigint,
	poisoned bigint,
	expired bigint)
AS 'MODULE_PATHNAME', 'queue_stats' LANGUAGE C VOLATILE CALLED ON NULL INPUT;
COMMENT ON FUNCTION @extschema@.queue_stats(text) IS
	'Per queue: visible, in-flight and delayed messages, the oldest visible one''s age, and counters since creation';

CREATE FUNCTION @extschema@.queue_put(
	queue text,
	body text,
	visibility_timeout interval DEFAULT NULL,
	ttl interval DEFAULT NULL,
	headers jsonb DEFAULT NULL,
	group_id text DEFAULT NULL,
	deduplication_id text DEFAULT NULL,
	priority integer DEFAULT 0)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_put(text, text, interval, interval, jsonb, text, text, integer) IS
	'Puts a message, visible after visibility_timeout (a delay; NULL: the queue''s), expiring after ttl; once per deduplication_id within the queue''s window';

CREATE FUNCTION @extschema@.queue_put_batch(
	queue text,
	bodies text[],
	visibility_timeout interval DEFAULT NULL,
	ttl interval DEFAULT NULL,
	headers jsonb[] DEFAULT NULL,
	group_ids text[] DEFAULT NULL,
	deduplication_ids text[] DEFAULT NULL,
	priorities integer[] DEFAULT NULL)
RETURNS SETOF @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put_batch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_put_batch(text, text[], interval, interval, jsonb[], text[], text[], integer[]) IS
	'Puts many messages at once, all or none, receipts in input order';

CREATE FUNCTION @extschema@.queue_get(
	queue text,
	max_messages integer DEFAULT 1,
	visibility_timeout interval DEFAULT NULL,
	wait interval DEFAULT '0',
	release_on_disconnect boolean DEFAULT false)
RETURNS SETOF @extschema@.queue_message
AS 'MODULE_PATHNAME', 'queue_get' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_get(text, integer, interval, interval, boolean) IS
	'Leases up to max_messages visible messages, oldest visible first, waiting up to wait for one';

CREATE FUNCTION @extschema@.queue_peek(
	queue text,
	max_messages integer DEFAULT 1)
RETURNS SETOF @extschema@.queue_message
AS 'MODULE_PATHNAME', 'queue_peek' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_peek(text, integer) IS
	'The messages queue_get would return, changing nothing';

CREATE FUNCTION @extschema@.queue_update(
	queue text,
	message_id bigint,
	pop_receipt uuid,
	visibility_timeout interval,
	body text DEFAULT NULL,
	headers jsonb DEFAULT NULL)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_update' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_update(text, bigint, uuid, interval, text, jsonb) IS
	'Extends, releases or rewrites a leased message; needs its newest pop receipt and returns a new one';

CREATE FUNCTION @extschema@.queue_release(
	queue text,
	message_id bigint,
	pop_receipt uuid)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_release' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_release(text, bigint, uuid) IS
	'Gives a leased message back as failed: visible again after the queue''s retry delay for its delivery, or moved to the poison queue at the dequeue limit';

CREATE FUNCTION @extschema@.queue_release_batch(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[])
RETURNS TABLE (message_id bigint, pop_receipt uuid, visible_at timestamptz, status text)
AS 'MODULE_PATHNAME', 'queue_release_batch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_release_batch(text, bigint[], uuid[]) IS
	'Gives many leased messages back as failed; a status per entry (released, poisoned, not_found, pop_receipt_mismatch)';

CREATE FUNCTION @extschema@.queue_pause(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_pause' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_pause(text) IS
	'Pauses a queue: its gets hand out nothing (a waiting get waits on) until queue_resume; everything else goes on';

CREATE FUNCTION @extschema@.queue_resume(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_resume' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_resume(text) IS
	'Resumes a paused queue and wakes its waiting gets';

CREATE FUNCTION @extschema@.queue_delete(
	queue text,
	message_id bigint,
	pop_receipt uuid)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_delete' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_delete(text, bigint, uuid) IS
	'Deletes a message; needs its newest pop receipt';

CREATE FUNCTION @extschema@.queue_delete_batch(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[])
RETURNS TABLE (message_id bigint, status text)
AS 'MODULE_PATHNAME', 'queue_delete_batch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_delete_batch(text, bigint[], uuid[]) IS
	'Deletes many messages by id and pop receipt; a status per entry (deleted, not_found, pop_receipt_mismatch)';

CREATE FUNCTION @extschema@.queue_delete_and_get(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[],
	max_messages integer DEFAULT 1,
	visibility_timeout interval DEFAULT NULL,
	wait interval DEFAULT '0',
	release_on_disconnect boolean DEFAULT false)
RETURNS TABLE (
	status text,
	message_id bigint,
	body text,
	headers jsonb,
	dequeue_count integer,
	inserted_at timestamptz,
	expires_at timestamptz,
	visible_at timestamptz,
	pop_receipt uuid,
	group_id text,
	priority integer,
	first_dequeued_at timestamptz)
AS 'MODULE_PATHNAME', 'queue_delete_and_get' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_delete_and_get(text, bigint[], uuid[], integer, interval, interval, boolean) IS
	'Deletes the finished messages (a row each: deleted, not_found, pop_receipt_mismatch) and leases the next ones (rows with status claimed), in one transaction; waits only when given nothing to delete';

CREATE FUNCTION @extschema@.queue_update_batch(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[],
	visibility_timeout interval,
	keep_pop_receipts boolean DEFAULT false)
RETURNS TABLE (message_id bigint, pop_receipt uuid, visible_at timestamptz, status text)
AS 'MODULE_PATHNAME', 'queue_update_batch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_update_batch(text, bigint[], uuid[], interval, boolean) IS
	'Sets the visibility timeout of many leased messages; a new receipt (or the same, keep_pop_receipts) and a status per entry';

CREATE FUNCTION @extschema@.queue_alter(
	queue text,
	visibility_timeout interval DEFAULT NULL,
	message_ttl interval DEFAULT NULL,
	max_dequeue_count integer DEFAULT NULL,
	max_message_size integer DEFAULT NULL,
	deduplication_window interval DEFAULT NULL,
	delay interval DEFAULT NULL,
	poison_queue text DEFAULT NULL,
	attributes jsonb DEFAULT NULL,
	tags jsonb DEFAULT NULL,
	retry_delay interval DEFAULT NULL,
	retry_backoff boolean DEFAULT NULL,
	retry_delay_max interval DEFAULT NULL,
	retention interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_alter' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval, interval, text, jsonb, jsonb, interval, boolean, interval, interval) IS
	'Changes the settings given (not NULL) of a queue; its messages stay. attributes and tags are merged in, a key set to null removed; retention ''0'' keeps no more';

CREATE FUNCTION @extschema@.queue_inspect(
	queue text,
	max_messages integer DEFAULT 100,
	after_message_id bigint DEFAULT NULL)
RETURNS TABLE (
	message_id bigint,
	state text,
	dequeue_count integer,
	inserted_at timestamptz,
	expires_at timestamptz,
	visible_at timestamptz,
	source_queue text,
	headers jsonb,
	body text,
	group_id text,
	priority integer,
	deleted_at timestamptz)
AS 'MODULE_PATHNAME', 'queue_inspect' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_inspect(text, integer, bigint) IS
	'The messages of a queue in id order, after after_message_id, with their state, group and priority, never a pop receipt; retained ones as deleted';

CREATE FUNCTION @extschema@.queue_redrive(
	source text,
	destination text DEFAULT NULL,
	max_messages bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'queue_redrive' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_redrive(text, text, bigint) IS
	'Moves messages of a poison queue back to their source queue (or to destination), dequeue count 0';

CREATE FUNCTION @extschema@.queue_replay(
	queue text,
	since timestamptz DEFAULT NULL,
	until timestamptz DEFAULT NULL,
	message_ids bigint[] DEFAULT NULL,
	max_messages bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'queue_replay' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_replay(text, timestamptz, timestamptz, bigint[], bigint) IS
	'Puts retained (deleted) messages back into their queue, visible at once, dequeue count 0: those deleted from since until until, or those of message_ids';

CREATE FUNCTION @extschema@.queue_topic_create(topic text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_topic_create' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_topic_create(text) IS
	'Creates a topic; its name may be no queue''s';

CREATE FUNCTION @extschema@.queue_topic_drop(topic text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_topic_drop' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_topic_drop(text) IS
	'Drops a topic, its subscriptions and its grants; the queues and their messages stay';

CREATE FUNCTION @extschema@.queue_subscribe(
	topic text,
	queue text,
	filter jsonb DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_subscribe' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_subscribe(text, text, jsonb) IS
	'Subscribes a queue to a topic: a publish puts a message into it when the headers match filter, an SNS filter policy (NULL: always); again, replaces the filter';

CREATE FUNCTION @extschema@.queue_unsubscribe(topic text, queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_unsubscribe' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_unsubscribe(text, text) IS
	'Ends the subscription of a queue to a topic, if there is one';

CREATE FUNCTION @extschema@.queue_publish(
	topic text,
	body text,
	headers jsonb DEFAULT NULL,
	visibility_timeout interval DEFAULT NULL,
	ttl interval DEFAULT NULL,
	group_id text DEFAULT NULL,
	deduplication_id text DEFAULT NULL,
	priority integer DEFAULT 0)
RETURNS TABLE (queue text, message_id bigint)
AS 'MODULE_PATHNAME', 'queue_publish' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_publish(text, text, jsonb, interval, interval, text, text, integer) IS
	'Puts the message into every queue subscribed to the topic whose filter its headers match, in the caller''s transaction; one row per message put';

CREATE FUNCTION @extschema@.queue_topics()
RETURNS TABLE (topic text, queue text, filter jsonb)
AS 'MODULE_PATHNAME', 'queue_topics' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_topics() IS
	'The topics the caller may see, one row per subscription (queue NULL for a topic without any), with its filter';

CREATE FUNCTION @extschema@.queue_schedule(
	schedule text,
	queue text,
	cron text,
	body text,
	headers jsonb DEFAULT NULL,
	time_zone text DEFAULT 'UTC')
RETURNS void
AS 'MODULE_PATHNAME', 'queue_schedule' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_schedule(text, text, text, text, jsonb, text) IS
	'Puts body into queue each time the five-field cron expression is due in time_zone (the background worker puts it); again, replaces the schedule';

CREATE FUNCTION @extschema@.queue_unschedule(schedule text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_unschedule' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_unschedule(text) IS
	'Removes a schedule; the messages it put stay';

CREATE FUNCTION @extschema@.queue_schedules()
RETURNS TABLE (schedule text, queue text, cron text, time_zone text,
	next_at timestamptz, last_at timestamptz)
AS 'MODULE_PATHNAME', 'queue_schedules' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_schedules() IS
	'The schedules of the queues the caller may see, with their next and last due times';

CREATE FUNCTION @extschema@.queue_cron_next(
	cron text,
	after timestamptz,
	time_zone text DEFAULT 'UTC')
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'queue_cron_next' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_cron_next(text, timestamptz, text) IS
	'The first time a cron expression is due in time_zone after after, as a schedule''s message would be put';

CREATE FUNCTION @extschema@.queue_maintain()
RETURNS TABLE (expired bigint, poisoned bigint)
AS 'MODULE_PATHNAME', 'queue_maintain' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_maintain() IS
	'One sweep of this database: deletes expired messages, moves poison messages; what the background worker runs';

CREATE FUNCTION @extschema@.queue_grant(queue text, grantee regrole, permission text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_grant' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_grant(text, regrole, text) IS
	'Grants send, process, read or manage on a queue (''*'': every queue) to a role';

CREATE FUNCTION @extschema@.queue_revoke(queue text, grantee regrole, permission text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_revoke' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_revoke(text, regrole, text) IS
	'Revokes what queue_grant granted';

CREATE FUNCTION @extschema@.queue_metrics()
RETURNS TABLE (
	queue text,
	metric text,
	type text,
	value double precision)
AS 'MODULE_PATHNAME', 'queue_metrics' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_metrics() IS
	'One row per queue the caller may see and metric, named for Prometheus: message counts from the worker''s last census, counters since creation';

-- Every role may call every function (EXECUTE stays granted to PUBLIC):
-- each function checks the caller's permission on the queue it names, and
-- answers 42501 when it is missing.

-- A warning, at install and at update, when roles other than the schema's
-- owner may create objects in the schema that holds the API: such a role
-- could create a function there that a call resolves to instead of ours
-- (queue_delete(text, integer, text) is a closer match for
-- queue_delete('q', 5, '...') than queue_delete(text, bigint, uuid)), and
-- that function would run with the rights of whoever calls it.  The schema
-- of the storage tables is the extension's own.
DO $$
DECLARE
	api_schema regnamespace := '@extschema@'::regnamespace;
	creators text;
BEGIN
	-- who may CREATE in it: not its owner, a superuser or the extension owner.
	-- Every function and operator is pg_catalog's, named so: this runs with
	-- search_path set to that schema, where such a role could have planted
	-- closer matches (quote_ident(name)) that would run as the superuser.
	SELECT pg_catalog.string_agg(
			CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
				 ELSE pg_catalog.quote_ident(r.rolname) END,
			', ' ORDER BY r.rolname NULLS FIRST)
	INTO creators
	FROM pg_catalog.pg_namespace n
	CROSS JOIN LATERAL pg_catalog.aclexplode(
		coalesce(n.nspacl, pg_catalog.acldefault('n', n.nspowner))) a
	LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
	WHERE n.oid OPERATOR(pg_catalog.=) api_schema
		AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
		AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner
		AND NOT coalesce(r.rolsuper, false)
		AND a.grantee OPERATOR(pg_catalog.<>) ALL (
			SELECT extowner FROM pg_catalog.pg_extension
			WHERE extname OPERATOR(pg_catalog.=) 'queue');
	IF creators IS NOT NULL THEN
		RAISE WARNING 'queue: roles other than its owner may create objects in schema %, which holds the queue functions: %',
			api_schema, creators
		USING DETAIL = 'A function such a role creates there, with argument types closer to a call than ours, runs instead of the queue function, with the rights of the role that calls it.',
			  HINT = pg_catalog.format('Take the right away (REVOKE CREATE ON SCHEMA %s FROM %s), or install into a schema of its own that only its owner may create in (CREATE SCHEMA queue; CREATE EXTENSION queue SCHEMA queue), and call the functions schema-qualified: SELECT * FROM queue.queue_get(...).',
						   api_schema, creators);
	END IF;
END
$$;
