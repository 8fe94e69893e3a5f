/*
 * queue--1.6--1.7.sql
 *		Upgrade script of the queue extension from 1.6 to 1.7:
 *		ALTER EXTENSION queue UPDATE TO '1.7'.
 *
 * 1.7 adds queue_delete_and_get, a consumer's loop at one transaction per
 * batch: it deletes the messages the consumer finished and leases the
 * next ones in one call.  Nothing stored changes.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.7'" to load this file. \quit

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
