/*
 * queue--1.9--1.10.sql
 *		Upgrade script of the queue extension from 1.9 to 1.10:
 *		ALTER EXTENSION queue UPDATE TO '1.10'.
 *
 * 1.10 adds topics and schedules:
 *   - topics: a publish puts one message into every subscribed queue whose
 *     filter policy its headers match (queue_storage.topics and
 *     .subscriptions; queue_topic_create, queue_topic_drop, queue_subscribe,
 *     queue_unsubscribe, queue_publish and queue_topics);
 *   - schedules: the background worker puts a message each time a cron
 *     expression is due (queue_storage.schedules; queue_schedule,
 *     queue_unschedule and queue_schedules).
 * Stored queues and messages are left as they are.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.10'" to load this file. \quit

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
