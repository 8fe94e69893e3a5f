/*
 * queue--1.0--1.1.sql
 *		Upgrade script of the queue extension from 1.0 to 1.1:
 *		ALTER EXTENSION queue UPDATE TO '1.1'.
 *
 * 1.1 describes every type and function of the API in the catalog (\df+,
 * \dT+, obj_description); nothing else changes, and no message, receipt,
 * grant or counter is touched.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.1'" to load this file. \quit

COMMENT ON TYPE @extschema@.queue_message IS
	'A message as queue_get, queue_peek return it; pop_receipt is the lease''s receipt (NULL from queue_peek)';
COMMENT ON TYPE @extschema@.queue_receipt IS
	'What queue_put and queue_update return: the message id, its newest pop receipt and its times';
COMMENT ON FUNCTION @extschema@.queue_create(text, interval, interval, integer, integer) IS
	'Creates a queue and, unless max_dequeue_count is NULL, its poison queue <queue>-poison';
COMMENT ON FUNCTION @extschema@.queue_drop(text) IS
	'Removes a queue and its messages; its poison queue stays';
COMMENT ON FUNCTION @extschema@.queue_clear(text) IS
	'Deletes every message of a queue; returns how many';
COMMENT ON FUNCTION @extschema@.queue_list() IS
	'One row per queue the caller may see: its settings, poison queue and creation time';
COMMENT ON FUNCTION @extschema@.queue_stats(text) IS
	'Per queue: visible, in-flight and delayed messages, the oldest visible one''s age, and counters since creation';
COMMENT ON FUNCTION @extschema@.queue_put(text, text, interval, interval, jsonb) IS
	'Puts a message, visible after visibility_timeout (a delay), expiring after ttl';
COMMENT ON FUNCTION @extschema@.queue_put_batch(text, text[], interval, interval, jsonb[]) IS
	'Puts many messages at once, all or none, receipts in input order';
COMMENT ON FUNCTION @extschema@.queue_get(text, integer, interval, interval, boolean) IS
	'Leases up to max_messages visible messages, oldest visible first, waiting up to wait for one';
COMMENT ON FUNCTION @extschema@.queue_peek(text, integer) IS
	'The messages queue_get would return, changing nothing';
COMMENT ON FUNCTION @extschema@.queue_update(text, bigint, uuid, interval, text, jsonb) IS
	'Extends, releases or rewrites a leased message; needs its newest pop receipt and returns a new one';
COMMENT ON FUNCTION @extschema@.queue_delete(text, bigint, uuid) IS
	'Deletes a message; needs its newest pop receipt';
COMMENT ON FUNCTION @extschema@.queue_delete_batch(text, bigint[], uuid[]) IS
	'Deletes many messages by id and pop receipt; a status per entry (deleted, not_found, pop_receipt_mismatch)';
COMMENT ON FUNCTION @extschema@.queue_update_batch(text, bigint[], uuid[], interval) IS
	'Sets the visibility timeout of many leased messages; a new receipt and a status per entry';
COMMENT ON FUNCTION @extschema@.queue_alter(text, interval, interval, integer, integer) IS
	'Changes the settings given (not NULL) of a queue; its messages stay';
COMMENT ON FUNCTION @extschema@.queue_inspect(text, integer) IS
	'Every message of a queue with its state (visible, delayed, in_flight, expired), never a pop receipt';
COMMENT ON FUNCTION @extschema@.queue_redrive(text, text, bigint) IS
	'Moves messages of a poison queue back to their source queue (or to destination), dequeue count 0';
COMMENT ON FUNCTION @extschema@.queue_maintain() IS
	'One sweep of this database: deletes expired messages, moves poison messages; what the background worker runs';
COMMENT ON FUNCTION @extschema@.queue_grant(text, regrole, text) IS
	'Grants send, process, read or manage on a queue (''*'': every queue) to a role';
COMMENT ON FUNCTION @extschema@.queue_revoke(text, regrole, text) IS
	'Revokes what queue_grant granted';
