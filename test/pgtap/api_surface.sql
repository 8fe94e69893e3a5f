-- The API surface: every function with its exact arguments, defaults and
-- result type, and the two composite types.
BEGIN;
SELECT plan(109);

SELECT has_function(name, args, name || ' exists')
FROM (VALUES
	('queue_create', ARRAY['text', 'interval', 'interval', 'integer', 'integer', 'interval', 'interval', 'boolean', 'interval', 'interval']),
	('queue_drop', ARRAY['text']),
	('queue_clear', ARRAY['text']),
	('queue_list', ARRAY[]::text[]),
	('queue_stats', ARRAY['text']),
	('queue_put', ARRAY['text', 'text', 'interval', 'interval', 'jsonb', 'text', 'text', 'integer']),
	('queue_put_batch', ARRAY['text', 'text[]', 'interval', 'interval', 'jsonb[]', 'text[]', 'text[]', 'integer[]']),
	('queue_get', ARRAY['text', 'integer', 'interval', 'interval', 'boolean']),
	('queue_peek', ARRAY['text', 'integer']),
	('queue_update', ARRAY['text', 'bigint', 'uuid', 'interval', 'text', 'jsonb']),
	('queue_delete', ARRAY['text', 'bigint', 'uuid']),
	('queue_maintain', ARRAY[]::text[]),
	('queue_delete_batch', ARRAY['text', 'bigint[]', 'uuid[]']),
	('queue_delete_and_get', ARRAY['text', 'bigint[]', 'uuid[]', 'integer', 'interval', 'interval', 'boolean']),
	('queue_update_batch', ARRAY['text', 'bigint[]', 'uuid[]', 'interval', 'boolean']),
	('queue_alter', ARRAY['text', 'interval', 'interval', 'integer', 'integer', 'interval', 'interval', 'text', 'jsonb', 'jsonb', 'interval', 'boolean', 'interval', 'interval']),
	('queue_release', ARRAY['text', 'bigint', 'uuid']),
	('queue_release_batch', ARRAY['text', 'bigint[]', 'uuid[]']),
	('queue_pause', ARRAY['text']),
	('queue_resume', ARRAY['text']),
	('queue_inspect', ARRAY['text', 'integer', 'bigint']),
	('queue_metrics', ARRAY[]::text[]),
	('queue_redrive', ARRAY['text', 'text', 'bigint']),
	('queue_replay', ARRAY['text', 'timestamptz', 'timestamptz', 'bigint[]', 'bigint']),
	('queue_grant', ARRAY['text', 'regrole', 'text']),
	('queue_revoke', ARRAY['text', 'regrole', 'text']),
	('queue_topic_create', ARRAY['text']),
	('queue_topic_drop', ARRAY['text']),
	('queue_subscribe', ARRAY['text', 'text', 'jsonb']),
	('queue_unsubscribe', ARRAY['text', 'text']),
	('queue_publish', ARRAY['text', 'text', 'jsonb', 'interval', 'interval', 'text', 'text', 'integer']),
	('queue_topics', ARRAY[]::text[]),
	('queue_schedule', ARRAY['text', 'text', 'text', 'text', 'jsonb', 'text']),
	('queue_unschedule', ARRAY['text']),
	('queue_schedules', ARRAY[]::text[]),
	('queue_cron_next', ARRAY['text', 'timestamptz', 'text'])
) AS f(name, args);

SELECT is(pg_get_function_arguments(sig::regprocedure), args, sig || ' arguments and defaults')
FROM (VALUES
	('queue_create(text,interval,interval,integer,integer,interval,interval,boolean,interval,interval)',
	 'queue text, visibility_timeout interval DEFAULT ''00:00:30''::interval, message_ttl interval DEFAULT ''7 days''::interval, max_dequeue_count integer DEFAULT 5, max_message_size integer DEFAULT 1048576, deduplication_window interval DEFAULT ''00:05:00''::interval, retry_delay interval DEFAULT ''00:00:00''::interval, retry_backoff boolean DEFAULT false, retry_delay_max interval DEFAULT NULL::interval, retention interval DEFAULT NULL::interval'),
	('queue_drop(text)', 'queue text'),
	('queue_clear(text)', 'queue text'),
	('queue_stats(text)', 'queue text DEFAULT NULL::text'),
	('queue_put(text,text,interval,interval,jsonb,text,text,integer)',
	 'queue text, body text, visibility_timeout interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, headers jsonb DEFAULT NULL::jsonb, group_id text DEFAULT NULL::text, deduplication_id text DEFAULT NULL::text, priority integer DEFAULT 0'),
	('queue_put_batch(text,text[],interval,interval,jsonb[],text[],text[],integer[])',
	 'queue text, bodies text[], visibility_timeout interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, headers jsonb[] DEFAULT NULL::jsonb[], group_ids text[] DEFAULT NULL::text[], deduplication_ids text[] DEFAULT NULL::text[], priorities integer[] DEFAULT NULL::integer[]'),
	('queue_get(text,integer,interval,interval,boolean)',
	 'queue text, max_messages integer DEFAULT 1, visibility_timeout interval DEFAULT NULL::interval, wait interval DEFAULT ''00:00:00''::interval, release_on_disconnect boolean DEFAULT false'),
	('queue_peek(text,integer)', 'queue text, max_messages integer DEFAULT 1'),
	('queue_update(text,bigint,uuid,interval,text,jsonb)',
	 'queue text, message_id bigint, pop_receipt uuid, visibility_timeout interval, body text DEFAULT NULL::text, headers jsonb DEFAULT NULL::jsonb'),
	('queue_delete(text,bigint,uuid)', 'queue text, message_id bigint, pop_receipt uuid'),
	('queue_delete_batch(text,bigint[],uuid[])', 'queue text, message_ids bigint[], pop_receipts uuid[]'),
	('queue_delete_and_get(text,bigint[],uuid[],integer,interval,interval,boolean)',
	 'queue text, message_ids bigint[], pop_receipts uuid[], max_messages integer DEFAULT 1, visibility_timeout interval DEFAULT NULL::interval, wait interval DEFAULT ''00:00:00''::interval, release_on_disconnect boolean DEFAULT false'),
	('queue_update_batch(text,bigint[],uuid[],interval,boolean)', 'queue text, message_ids bigint[], pop_receipts uuid[], visibility_timeout interval, keep_pop_receipts boolean DEFAULT false'),
	('queue_alter(text,interval,interval,integer,integer,interval,interval,text,jsonb,jsonb,interval,boolean,interval,interval)',
	 'queue text, visibility_timeout interval DEFAULT NULL::interval, message_ttl interval DEFAULT NULL::interval, max_dequeue_count integer DEFAULT NULL::integer, max_message_size integer DEFAULT NULL::integer, deduplication_window interval DEFAULT NULL::interval, delay interval DEFAULT NULL::interval, poison_queue text DEFAULT NULL::text, attributes jsonb DEFAULT NULL::jsonb, tags jsonb DEFAULT NULL::jsonb, retry_delay interval DEFAULT NULL::interval, retry_backoff boolean DEFAULT NULL::boolean, retry_delay_max interval DEFAULT NULL::interval, retention interval DEFAULT NULL::interval'),
	('queue_release(text,bigint,uuid)', 'queue text, message_id bigint, pop_receipt uuid'),
	('queue_release_batch(text,bigint[],uuid[])', 'queue text, message_ids bigint[], pop_receipts uuid[]'),
	('queue_pause(text)', 'queue text'),
	('queue_resume(text)', 'queue text'),
	('queue_inspect(text,integer,bigint)', 'queue text, max_messages integer DEFAULT 100, after_message_id bigint DEFAULT NULL::bigint'),
	('queue_redrive(text,text,bigint)', 'source text, destination text DEFAULT NULL::text, max_messages bigint DEFAULT NULL::bigint'),
	('queue_replay(text,timestamptz,timestamptz,bigint[],bigint)', 'queue text, since timestamp with time zone DEFAULT NULL::timestamp with time zone, until timestamp with time zone DEFAULT NULL::timestamp with time zone, message_ids bigint[] DEFAULT NULL::bigint[], max_messages bigint DEFAULT NULL::bigint'),
	('queue_grant(text,regrole,text)', 'queue text, grantee regrole, permission text'),
	('queue_revoke(text,regrole,text)', 'queue text, grantee regrole, permission text'),
	('queue_topic_create(text)', 'topic text'),
	('queue_topic_drop(text)', 'topic text'),
	('queue_subscribe(text,text,jsonb)', 'topic text, queue text, filter jsonb DEFAULT NULL::jsonb'),
	('queue_unsubscribe(text,text)', 'topic text, queue text'),
	('queue_publish(text,text,jsonb,interval,interval,text,text,integer)',
	 'topic text, body text, headers jsonb DEFAULT NULL::jsonb, visibility_timeout interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, group_id text DEFAULT NULL::text, deduplication_id text DEFAULT NULL::text, priority integer DEFAULT 0'),
	('queue_topics()', ''),
	('queue_schedule(text,text,text,text,jsonb,text)',
	 'schedule text, queue text, cron text, body text, headers jsonb DEFAULT NULL::jsonb, time_zone text DEFAULT ''UTC''::text'),
	('queue_unschedule(text)', 'schedule text'),
	('queue_schedules()', ''),
	('queue_cron_next(text,timestamptz,text)', 'cron text, after timestamp with time zone, time_zone text DEFAULT ''UTC''::text')
) AS f(sig, args);

SELECT is(pg_get_function_result(sig::regprocedure), result, sig || ' result')
FROM (VALUES
	('queue_create(text,interval,interval,integer,integer,interval,interval,boolean,interval,interval)', 'void'),
	('queue_drop(text)', 'void'),
	('queue_clear(text)', 'bigint'),
	('queue_list()', 'TABLE(queue text, visibility_timeout interval, message_ttl interval, max_dequeue_count integer, max_message_size integer, poison_queue text, created_at timestamp with time zone, delay interval, attributes jsonb, tags jsonb, retry_delay interval, retry_backoff boolean, retry_delay_max interval, paused boolean, retention interval)'),
	('queue_stats(text)', 'TABLE(queue text, visible bigint, in_flight bigint, delayed bigint, total bigint, oldest_visible_age interval, puts bigint, gets bigint, deletes bigint, poisoned bigint, expired bigint)'),
	('queue_put(text,text,interval,interval,jsonb,text,text,integer)', 'queue_receipt'),
	('queue_put_batch(text,text[],interval,interval,jsonb[],text[],text[],integer[])', 'SETOF queue_receipt'),
	('queue_get(text,integer,interval,interval,boolean)', 'SETOF queue_message'),
	('queue_peek(text,integer)', 'SETOF queue_message'),
	('queue_update(text,bigint,uuid,interval,text,jsonb)', 'queue_receipt'),
	('queue_delete(text,bigint,uuid)', 'void'),
	('queue_maintain()', 'TABLE(expired bigint, poisoned bigint)'),
	('queue_delete_batch(text,bigint[],uuid[])', 'TABLE(message_id bigint, status text)'),
	('queue_delete_and_get(text,bigint[],uuid[],integer,interval,interval,boolean)', 'TABLE(status text, message_id bigint, body text, headers jsonb, dequeue_count integer, inserted_at timestamp with time zone, expires_at timestamp with time zone, visible_at timestamp with time zone, pop_receipt uuid, group_id text, priority integer, first_dequeued_at timestamp with time zone)'),
	('queue_update_batch(text,bigint[],uuid[],interval,boolean)', 'TABLE(message_id bigint, pop_receipt uuid, visible_at timestamp with time zone, status text)'),
	('queue_alter(text,interval,interval,integer,integer,interval,interval,text,jsonb,jsonb,interval,boolean,interval,interval)', 'void'),
	('queue_release(text,bigint,uuid)', 'queue_receipt'),
	('queue_release_batch(text,bigint[],uuid[])', 'TABLE(message_id bigint, pop_receipt uuid, visible_at timestamp with time zone, status text)'),
	('queue_pause(text)', 'void'),
	('queue_resume(text)', 'void'),
	('queue_metrics()', 'TABLE(queue text, metric text, type text, value double precision)'),
	('queue_inspect(text,integer,bigint)', 'TABLE(message_id bigint, state text, dequeue_count integer, inserted_at timestamp with time zone, expires_at timestamp with time zone, visible_at timestamp with time zone, source_queue text, headers jsonb, body text, group_id text, priority integer, deleted_at timestamp with time zone)'),
	('queue_redrive(text,text,bigint)', 'bigint'),
	('queue_replay(text,timestamptz,timestamptz,bigint[],bigint)', 'bigint'),
	('queue_grant(text,regrole,text)', 'void'),
	('queue_revoke(text,regrole,text)', 'void'),
	('queue_topic_create(text)', 'void'),
	('queue_topic_drop(text)', 'void'),
	('queue_subscribe(text,text,jsonb)', 'void'),
	('queue_unsubscribe(text,text)', 'void'),
	('queue_publish(text,text,jsonb,interval,interval,text,text,integer)', 'TABLE(queue text, message_id bigint)'),
	('queue_topics()', 'TABLE(topic text, queue text, filter jsonb)'),
	('queue_schedule(text,text,text,text,jsonb,text)', 'void'),
	('queue_unschedule(text)', 'void'),
	('queue_schedules()', 'TABLE(schedule text, queue text, cron text, time_zone text, next_at timestamp with time zone, last_at timestamp with time zone)'),
	('queue_cron_next(text,timestamptz,text)', 'timestamp with time zone')
) AS f(sig, result);

SELECT is(
	(SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
	 FROM pg_attribute WHERE attrelid = 'queue_message'::regclass AND attnum > 0),
	'message_id bigint, body text, headers jsonb, dequeue_count integer, inserted_at timestamp with time zone, expires_at timestamp with time zone, visible_at timestamp with time zone, pop_receipt uuid, group_id text, priority integer, first_dequeued_at timestamp with time zone',
	'queue_message columns');
SELECT is(
	(SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
	 FROM pg_attribute WHERE attrelid = 'queue_receipt'::regclass AND attnum > 0),
	'message_id bigint, pop_receipt uuid, visible_at timestamp with time zone, inserted_at timestamp with time zone, expires_at timestamp with time zone, group_id text, priority integer',
	'queue_receipt columns');

-- NULLs are the functions' own business (22004), never a silent NULL result
SELECT is((SELECT count(*)::integer FROM pg_proc p
		   JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
		   JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'
		   WHERE p.proisstrict OR p.provolatile <> 'v' OR p.prosecdef),
		  0, 'no function is strict, non-volatile or SECURITY DEFINER');
SELECT is((SELECT count(*)::integer FROM pg_proc p
		   JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
		   JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'queue'),
		  36, 'the extension has exactly 36 functions');

SELECT * FROM finish();
ROLLBACK;
