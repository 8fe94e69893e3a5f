/*
 * queue--1.3--1.4.sql
 *		Upgrade script of the queue extension from 1.3 to 1.4:
 *		ALTER EXTENSION queue UPDATE TO '1.4'.
 *
 * 1.4 is made for watching queues: queue_metrics, one row per queue and
 * metric for scrapers (Prometheus through postgres_exporter, say), cheap at
 * thousands of queues because it reads the message counts from a census the
 * background worker takes, not from the messages; and queue_inspect pages
 * through a queue (after_message_id).  Stored messages are not touched.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.4'" to load this file. \quit

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

-- queue_inspect pages: after_message_id is the last id of the page before.
DROP FUNCTION @extschema@.queue_inspect(text, integer);
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
	priority integer)
AS 'MODULE_PATHNAME', 'queue_inspect' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_inspect(text, integer, bigint) IS
	'The messages of a queue in id order, after after_message_id, with their state, group and priority, never a pop receipt';

CREATE FUNCTION @extschema@.queue_metrics()
RETURNS TABLE (
	queue text,
	metric text,
	type text,
	value double precision)
AS 'MODULE_PATHNAME', 'queue_metrics' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION @extschema@.queue_metrics() IS
	'One row per queue the caller may see and metric, named for Prometheus: message counts from the worker''s last census, counters since creation';
