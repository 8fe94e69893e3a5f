/*
 * queue--1.8--1.9.sql
 *		Upgrade script of the queue extension from 1.8 to 1.9:
 *		ALTER EXTENSION queue UPDATE TO '1.9'.
 *
 * 1.9 keeps what consumers deleted, for a queue that asks for it:
 *   - retention: how long a deleted message is kept (NULL: not kept);
 *   - queue_storage.retained: the messages kept, until the background
 *     worker removes them; queue_inspect shows them as 'deleted';
 *   - queue_replay: retained messages back into their queue.
 * Stored queues keep nothing; stored messages are left as they are.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.9'" to load this file. \quit

ALTER TABLE queue_storage.queues
	ADD COLUMN retention interval;

-- Made as the full script makes it, after its REVOKE: the owner's alone.
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

DROP FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer, interval, interval, boolean, interval);
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

DROP FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval, interval, text, jsonb, jsonb, interval, boolean, interval);
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

DROP FUNCTION @extschema@.queue_list();
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

DROP FUNCTION @extschema@.queue_inspect(text, integer, bigint);
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
