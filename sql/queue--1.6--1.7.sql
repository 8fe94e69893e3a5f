/*
 * queue--1.6--1.7.sql
 *		Upgrade script of the queue extension from 1.6 to 1.7:
 *		ALTER EXTENSION queue UPDATE TO '1.7'.
 *
 * 1.7 adds queue_delete_and_get, a consumer's loop at one transaction per
 * batch: it deletes the messages the consumer finished and leases the
 * next ones in one call.
 *
 * It also stores the columns of queue_storage.messages in a new order:
 * those a get never changes, then those it changes, then headers and body,
 * so that the WAL record of a get holds the bytes that changed and not the
 * body again (queue--1.7.sql says why).  A
 * table's columns cannot be reordered in place: the messages are copied,
 * every column as it was, pop receipts and leases included, into a new
 * table, which takes the old one's name, indexes and settings.  The update
 * holds the table's lock for as long as the copy takes.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.7'" to load this file. \quit

-- The old table's indexes and constraints go first, as their names are the
-- new table's (from PostgreSQL 18 on a NOT NULL is a named constraint too,
-- and a name taken in the schema would get the new one's a suffix), and
-- so does the sequence's tie to it (dropping the table would drop it).
DROP INDEX queue_storage.messages_claim, queue_storage.messages_priority,
	queue_storage.messages_group, queue_storage.messages_expiry,
	queue_storage.messages_last_lease, queue_storage.messages_holder;
ALTER TABLE queue_storage.messages DROP CONSTRAINT messages_pkey;
ALTER TABLE queue_storage.messages
	ALTER COLUMN message_id DROP NOT NULL,
	ALTER COLUMN queue_id DROP NOT NULL,
	ALTER COLUMN inserted_at DROP NOT NULL,
	ALTER COLUMN priority DROP NOT NULL,
	ALTER COLUMN visible_at DROP NOT NULL,
	ALTER COLUMN dequeue_count DROP NOT NULL,
	ALTER COLUMN last_lease DROP NOT NULL,
	ALTER COLUMN body DROP NOT NULL;
ALTER SEQUENCE queue_storage.message_id_seq OWNED BY NONE;
ALTER TABLE queue_storage.messages RENAME TO messages_1_6;

CREATE TABLE queue_storage.messages (
	message_id bigint PRIMARY KEY,
	queue_id integer NOT NULL,
	inserted_at timestamptz NOT NULL,
	expires_at timestamptz,
	priority smallint NOT NULL DEFAULT 0,
	group_id text,
	source_queue text,
	visible_at timestamptz NOT NULL,
	dequeue_count integer NOT NULL DEFAULT 0,
	last_lease boolean NOT NULL DEFAULT false,
	pop_receipt uuid,
	holder_pid integer,
	holder_start timestamptz,
	first_dequeued_at timestamptz,
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
INSERT INTO queue_storage.messages (message_id, queue_id, inserted_at, expires_at,
		priority, group_id, source_queue, visible_at, dequeue_count, last_lease,
		pop_receipt, holder_pid, holder_start, first_dequeued_at, headers, body)
	SELECT message_id, queue_id, inserted_at, expires_at, priority, group_id,
		source_queue, visible_at, dequeue_count, last_lease, pop_receipt, holder_pid,
		holder_start, first_dequeued_at, headers, body
	FROM queue_storage.messages_1_6;
-- ALTER EXTENSION DROP takes the old table out of what pg_dump keeps
ALTER EXTENSION queue DROP TABLE queue_storage.messages_1_6;
DROP TABLE queue_storage.messages_1_6;
ALTER SEQUENCE queue_storage.message_id_seq OWNED BY queue_storage.messages.message_id;
REVOKE ALL ON queue_storage.messages FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('queue_storage.messages', '');

CREATE INDEX messages_claim ON queue_storage.messages (queue_id, visible_at, message_id)
	WHERE priority OPERATOR(pg_catalog.=) 0;
CREATE INDEX messages_priority
	ON queue_storage.messages (queue_id, priority DESC, visible_at, message_id)
	WHERE priority OPERATOR(pg_catalog.<>) 0;
CREATE INDEX messages_group
	ON queue_storage.messages (queue_id, group_id COLLATE "C", message_id)
	WHERE group_id IS NOT NULL;
CREATE INDEX messages_expiry ON queue_storage.messages (expires_at)
	WHERE expires_at IS NOT NULL;
CREATE INDEX messages_last_lease ON queue_storage.messages (queue_id, visible_at)
	WHERE last_lease;
CREATE INDEX messages_holder ON queue_storage.messages (message_id)
	WHERE holder_pid IS NOT NULL;
ANALYZE queue_storage.messages;

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
