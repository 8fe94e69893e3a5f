/*
 * queue--1.2--1.3.sql
 *		Upgrade script of the queue extension from 1.2 to 1.3:
 *		ALTER EXTENSION queue UPDATE TO '1.3'.
 *
 * 1.3 orders messages the way SQS FIFO queues and job queues do: message
 * groups handed out in put order and one at a time, deduplication of
 * repeated puts within a window, fairness between groups, and priorities.
 * The new columns have defaults that leave every stored message as it was
 * (priority 0, no group), so the update rewrites no row.
 *
 * The claim index is built again (now only for priority 0) and two indexes
 * are added; building them takes a lock that waits for running calls,
 * queue_get(wait => ...) included (see docs/upgrades.md).
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.3'" to load this file. \quit

-- How long a put's deduplication_id is remembered.
ALTER TABLE queue_storage.queues
	ADD COLUMN deduplication_window interval NOT NULL DEFAULT '5 minutes';

-- Appended after body: the C reads the columns by position and runs on the
-- table of 1.2 too, until this update.
ALTER TABLE queue_storage.messages
	ADD COLUMN priority smallint NOT NULL DEFAULT 0,
	ADD COLUMN group_id text;

-- The deduplication_ids of a queue's recent puts, each with the receipt of
-- the message it stored; kept until forget_at (the put's time plus the
-- window), whether the message is still there or not, and then deleted by
-- the sweep.
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

-- The claim walks priority 0, the level of almost every message, in the
-- claim index as before; the other levels, highest first, in
-- messages_priority.  A backlog at one level is never walked over to reach
-- another.
DROP INDEX queue_storage.messages_claim;
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

-- Messages and receipts show their group and priority.
ALTER TYPE @extschema@.queue_message
	ADD ATTRIBUTE group_id text,
	ADD ATTRIBUTE priority integer;
ALTER TYPE @extschema@.queue_receipt
	ADD ATTRIBUTE group_id text,
	ADD ATTRIBUTE priority integer;

DROP FUNCTION @extschema@.queue_inspect(text, integer);
CREATE FUNCTION @extschema@.queue_inspect(
	queue text,
	max_messages integer DEFAULT 100)
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
	priority integer)
AS 'MODULE_PATHNAME', 'queue_inspect' LANGUAGE C VOLATILE;

-- The put functions take a group, a deduplication_id and a priority; a
-- defaulted argument cannot be added in place, so they are made again.
DROP FUNCTION @extschema@.queue_put(text, text, interval, interval, jsonb);
CREATE FUNCTION @extschema@.queue_put(
	queue text,
	body text,
	visibility_timeout interval DEFAULT '0',
	ttl interval DEFAULT NULL,
	headers jsonb DEFAULT NULL,
	group_id text DEFAULT NULL,
	deduplication_id text DEFAULT NULL,
	priority integer DEFAULT 0)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put' LANGUAGE C VOLATILE;

DROP FUNCTION @extschema@.queue_put_batch(text, text[], interval, interval, jsonb[]);
CREATE FUNCTION @extschema@.queue_put_batch(
	queue text,
	bodies text[],
	visibility_timeout interval DEFAULT '0',
	ttl interval DEFAULT NULL,
	headers jsonb[] DEFAULT NULL,
	group_ids text[] DEFAULT NULL,
	deduplication_ids text[] DEFAULT NULL,
	priorities integer[] DEFAULT NULL)
RETURNS SETOF @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put_batch' LANGUAGE C VOLATILE;

DROP FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer);
CREATE FUNCTION @extschema@.queue_create(
	queue text,
	visibility_timeout interval DEFAULT '30 seconds',
	message_ttl interval DEFAULT '7 days',
	max_dequeue_count integer DEFAULT 5,
	max_message_size integer DEFAULT 1048576,
	deduplication_window interval DEFAULT '5 minutes')
RETURNS void
AS 'MODULE_PATHNAME', 'queue_create' LANGUAGE C VOLATILE;

DROP FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer);
CREATE FUNCTION @extschema@.queue_alter(
	queue text,
	visibility_timeout interval DEFAULT NULL,
	message_ttl interval DEFAULT NULL,
	max_dequeue_count integer DEFAULT NULL,
	max_message_size integer DEFAULT NULL,
	deduplication_window interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_alter' LANGUAGE C VOLATILE;

COMMENT ON FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer, interval) IS
	'Creates a queue and, unless max_dequeue_count is NULL, its poison queue <queue>-poison';
COMMENT ON FUNCTION @extschema@.queue_put(text, text, interval, interval, jsonb, text, text, integer) IS
	'Puts a message, visible after visibility_timeout (a delay), expiring after ttl; once per deduplication_id within the queue''s window';
COMMENT ON FUNCTION @extschema@.queue_put_batch(text, text[], interval, interval, jsonb[], text[], text[], integer[]) IS
	'Puts many messages at once, all or none, receipts in input order';
COMMENT ON FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval) IS
	'Changes the settings given (not NULL) of a queue; its messages stay';
COMMENT ON FUNCTION @extschema@.queue_inspect(text, integer) IS
	'Every message of a queue with its state (visible, waiting, delayed, in_flight, expired), group and priority, never a pop receipt';
