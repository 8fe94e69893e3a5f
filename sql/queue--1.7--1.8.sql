/*
 * queue--1.7--1.8.sql
 *		Upgrade script of the queue extension from 1.7 to 1.8:
 *		ALTER EXTENSION queue UPDATE TO '1.8'.
 *
 * 1.8 gives each queue a retry policy and a pause:
 *   - retry_delay, retry_backoff and retry_delay_max: how long a message a
 *     consumer gives back with queue_release (or queue_release_batch)
 *     stays invisible, by how many times it was handed out;
 *   - paused: while set (queue_pause, queue_resume), gets hand out nothing.
 * Stored queues get no retry delay, no backoff, no cap, and are not paused;
 * stored messages are left as they are.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.8'" to load this file. \quit

ALTER TABLE queue_storage.queues
	ADD COLUMN retry_delay interval NOT NULL DEFAULT '0',
	ADD COLUMN retry_backoff boolean NOT NULL DEFAULT false,
	ADD COLUMN retry_delay_max interval,
	ADD COLUMN paused boolean NOT NULL DEFAULT false;

DROP FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer, interval);
CREATE FUNCTION @extschema@.queue_create(
	queue text,
	visibility_timeout interval DEFAULT '30 seconds',
	message_ttl interval DEFAULT '7 days',
	max_dequeue_count integer DEFAULT 5,
	max_message_size integer DEFAULT 1048576,
	deduplication_window interval DEFAULT '5 minutes',
	retry_delay interval DEFAULT '0',
	retry_backoff boolean DEFAULT false,
	retry_delay_max interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_create' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer, interval, interval, boolean, interval) IS
	'Creates a queue and, unless max_dequeue_count is NULL, its poison queue <queue>-poison';

DROP FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval, interval, text, jsonb, jsonb);
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
	retry_delay_max interval DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_alter' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval, interval, text, jsonb, jsonb, interval, boolean, interval) IS
	'Changes the settings given (not NULL) of a queue; its messages stay. attributes and tags are merged in, a key set to null removed';

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
	paused boolean)
AS 'MODULE_PATHNAME', 'queue_list' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_list() IS
	'One row per queue the caller may see: its settings, poison queue, creation time, attributes, tags, retry policy and whether it is paused';

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
