/*
 * queue--1.0.sql
 *		Install script of the queue extension.
 *
 * The API (types and functions) goes into the extension's schema, public
 * unless CREATE EXTENSION says otherwise.  All data lives in the schema
 * queue_storage, which belongs to the extension and which no ordinary role
 * can read or write: the C functions reach it as the extension owner, with
 * search_path pinned to pg_catalog.
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
	created_at timestamptz NOT NULL
);
ALTER SEQUENCE queue_storage.queue_id_seq OWNED BY queue_storage.queues.queue_id;

-- Every message of every queue.  Rows live seconds to minutes, so vacuum is
-- asked to come after a fixed number of dead rows rather than a fraction of
-- the table, and not to throttle itself.  Nor to give the table's empty tail
-- back: the traffic would extend it again at once.  The worker's vacuum does
-- that when the table is far bigger than the traffic needs (src/vacuum.c).
CREATE TABLE queue_storage.messages (
	message_id bigint PRIMARY KEY,
	queue_id integer NOT NULL,
	visible_at timestamptz NOT NULL,
	expires_at timestamptz,				-- NULL: never expires
	dequeue_count integer NOT NULL DEFAULT 0,
	last_lease boolean NOT NULL DEFAULT false,	-- see messages_last_lease
	pop_receipt uuid,
	inserted_at timestamptz NOT NULL,
	source_queue text,					-- set when moved to a poison queue
	holder_pid integer,					-- release_on_disconnect: the session
	holder_start timestamptz,			-- holding the lease (pid, start time)
	headers jsonb,
	body text NOT NULL
) WITH (
	autovacuum_vacuum_scale_factor = 0.01,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0.01,
	autovacuum_vacuum_insert_threshold = 1000,
	autovacuum_analyze_scale_factor = 0.05,
	autovacuum_vacuum_cost_delay = 0,
	vacuum_truncate = false
);
ALTER SEQUENCE queue_storage.message_id_seq OWNED BY queue_storage.messages.message_id;

-- queue_get starts at the first visible message of its queue and walks
-- forward in visibility order: in-flight and delayed messages sort after
-- now() and are never walked over.
CREATE INDEX messages_claim ON queue_storage.messages (queue_id, visible_at, message_id);

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

CREATE TYPE @extschema@.queue_message AS (
	message_id bigint,
	body text,
	headers jsonb,
	dequeue_count integer,
	inserted_at timestamptz,
	expires_at timestamptz,
	visible_at timestamptz,
	pop_receipt uuid
);

CREATE TYPE @extschema@.queue_receipt AS (
	message_id bigint,
	pop_receipt uuid,
	visible_at timestamptz,
	inserted_at timestamptz,
	expires_at timestamptz
);

CREATE FUNCTION @extschema@.queue_create(
	queue text,
	visibility_timeout interval DEFAULT '30 seconds',
	message_ttl interval DEFAULT '7 days',
	max_dequeue_count integer DEFAULT 5,
	max_message_size integer DEFAULT 1048576)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_create' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_drop(queue text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_drop' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_clear(queue text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'queue_clear' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_list()
RETURNS TABLE (
	queue text,
	visibility_timeout interval,
	message_ttl interval,
	max_dequeue_count integer,
	max_message_size integer,
	poison_queue text,
	created_at timestamptz)
AS 'MODULE_PATHNAME', 'queue_list' LANGUAGE C VOLATILE;

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

CREATE FUNCTION @extschema@.queue_put(
	queue text,
	body text,
	visibility_timeout interval DEFAULT '0',
	ttl interval DEFAULT NULL,
	headers jsonb DEFAULT NULL)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_put_batch(
	queue text,
	bodies text[],
	visibility_timeout interval DEFAULT '0',
	ttl interval DEFAULT NULL,
	headers jsonb[] DEFAULT NULL)
RETURNS SETOF @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_put_batch' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_get(
	queue text,
	max_messages integer DEFAULT 1,
	visibility_timeout interval DEFAULT NULL,
	wait interval DEFAULT '0',
	release_on_disconnect boolean DEFAULT false)
RETURNS SETOF @extschema@.queue_message
AS 'MODULE_PATHNAME', 'queue_get' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_peek(
	queue text,
	max_messages integer DEFAULT 1)
RETURNS SETOF @extschema@.queue_message
AS 'MODULE_PATHNAME', 'queue_peek' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_update(
	queue text,
	message_id bigint,
	pop_receipt uuid,
	visibility_timeout interval,
	body text DEFAULT NULL,
	headers jsonb DEFAULT NULL)
RETURNS @extschema@.queue_receipt
AS 'MODULE_PATHNAME', 'queue_update' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_delete(
	queue text,
	message_id bigint,
	pop_receipt uuid)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_delete' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_delete_batch(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[])
RETURNS TABLE (message_id bigint, status text)
AS 'MODULE_PATHNAME', 'queue_delete_batch' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_update_batch(
	queue text,
	message_ids bigint[],
	pop_receipts uuid[],
	visibility_timeout interval)
RETURNS TABLE (message_id bigint, pop_receipt uuid, visible_at timestamptz, status text)
AS 'MODULE_PATHNAME', 'queue_update_batch' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_alter(
	queue text,
	visibility_timeout interval DEFAULT NULL,
	message_ttl interval DEFAULT NULL,
	max_dequeue_count integer DEFAULT NULL,
	max_message_size integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_alter' LANGUAGE C VOLATILE;

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
	body text)
AS 'MODULE_PATHNAME', 'queue_inspect' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_redrive(
	source text,
	destination text DEFAULT NULL,
	max_messages bigint DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'queue_redrive' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_maintain()
RETURNS TABLE (expired bigint, poisoned bigint)
AS 'MODULE_PATHNAME', 'queue_maintain' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_grant(queue text, grantee regrole, permission text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_grant' LANGUAGE C VOLATILE;

CREATE FUNCTION @extschema@.queue_revoke(queue text, grantee regrole, permission text)
RETURNS void
AS 'MODULE_PATHNAME', 'queue_revoke' LANGUAGE C VOLATILE;

-- Every role may call every function (EXECUTE stays granted to PUBLIC):
-- each function checks the caller's permission on the queue it names, and
-- answers 42501 when it is missing.
