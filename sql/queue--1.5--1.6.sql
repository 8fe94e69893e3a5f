/*
 * queue--1.5--1.6.sql
 *		Upgrade script of the queue extension from 1.5 to 1.6:
 *		ALTER EXTENSION queue UPDATE TO '1.6'.
 *
 * 1.6 keeps more with a queue, for clients that speak another queue
 * service's protocol (the SQS gateway) and for users:
 *   - delay: how long a put that names no visibility_timeout stays
 *     invisible (SQS's queue-level DelaySeconds);
 *   - attributes and tags: JSON objects of strings the extension keeps and
 *     shows but does not interpret (SQS's queue attributes of the gateway's
 *     own, and queue tags), kept by pg_dump with the queue;
 *   - a poison queue may be any queue, named by queue_alter's poison_queue
 *     (an SQS dead-letter queue named by its RedrivePolicy).
 * queue_update_batch can keep the pop receipts it was given (SQS's
 * ChangeMessageVisibility leaves the receipt handle valid), queue names
 * may end in ".fifo", and a message remembers when it was first handed
 * out (first_dequeued_at, in queue_message: SQS's
 * ApproximateFirstReceiveTimestamp).  Stored queues get a delay of 0 and
 * empty attributes and tags, stored messages no first_dequeued_at, which
 * their next get does not set if they were handed out before.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.6'" to load this file. \quit

ALTER TABLE queue_storage.queues
	ADD COLUMN delay interval NOT NULL DEFAULT '0',
	ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}',
	ADD COLUMN tags jsonb NOT NULL DEFAULT '{}';

ALTER TABLE queue_storage.messages ADD COLUMN first_dequeued_at timestamptz;
ALTER TYPE @extschema@.queue_message ADD ATTRIBUTE first_dequeued_at timestamptz;
COMMENT ON TYPE @extschema@.queue_message IS
	'A message as queue_get, queue_peek return it; pop_receipt is the lease''s receipt (NULL from queue_peek), first_dequeued_at when it was first handed out';

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
	tags jsonb)
AS 'MODULE_PATHNAME', 'queue_list' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_list() IS
	'One row per queue the caller may see: its settings, poison queue, creation time, attributes and tags';

DROP FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval);
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
	tags jsonb DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_alter' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer, interval, interval, text, jsonb, jsonb) IS
	'Changes the settings given (not NULL) of a queue; its messages stay. attributes and tags are merged in, a key set to null removed';

-- the same functions, NULL now the default delay: the queue's.  Made
-- again rather than replaced: an extension script replaces nothing.
DROP FUNCTION @extschema@.queue_put(text, text, interval, interval, jsonb, text, text, integer);
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

DROP FUNCTION @extschema@.queue_put_batch(text, text[], interval, interval, jsonb[], text[], text[], integer[]);
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

DROP FUNCTION @extschema@.queue_update_batch(text, bigint[], uuid[], interval);
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
