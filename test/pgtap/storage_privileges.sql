-- Storage is closed to ordinary roles: they reach messages only through the
-- functions, which everyone may call and which check per-queue permissions
-- (test/pgtap/permissions.sql).  A call leaves the caller's identity and
-- search_path as they were.
BEGIN;
SELECT plan(44);

CREATE ROLE queue_plain;
SELECT queue_create('priv-q');
SELECT count(*) FROM queue_put('priv-q', 'secret');

SELECT ok(NOT has_schema_privilege('queue_plain', 'queue_storage', 'USAGE'),
		  'no USAGE on schema queue_storage');
SELECT ok(NOT has_table_privilege('queue_plain', 'queue_storage.' || t, p),
		  'no ' || p || ' on queue_storage.' || t)
FROM unnest(ARRAY['queues', 'messages', 'counters', 'topics', 'subscriptions', 'schedules']) AS t,
	 unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) AS p;
SELECT ok(NOT has_sequence_privilege('queue_plain', 'queue_storage.' || s, 'USAGE'),
		  'no USAGE on queue_storage.' || s)
FROM unnest(ARRAY['message_id_seq', 'queue_id_seq']) AS s;
SELECT ok(has_function_privilege('queue_plain', 'queue_put(text,text,interval,interval,jsonb,text,text,integer)', 'EXECUTE'),
		  'everyone may call the API');

SET ROLE queue_plain;
SELECT throws_ok('SELECT * FROM queue_storage.messages', '42501', NULL, 'cannot read messages');
SELECT throws_ok($$INSERT INTO queue_storage.messages (message_id, queue_id, visible_at, inserted_at, body) VALUES (1, 1, now(), now(), 'x')$$,
				 '42501', NULL, 'cannot insert messages');
SELECT throws_ok($$UPDATE queue_storage.queues SET max_dequeue_count = 100$$, '42501', NULL, 'cannot change queues');
SELECT throws_ok('DELETE FROM queue_storage.counters', '42501', NULL, 'cannot delete counters');
RESET ROLE;

SELECT queue_grant('priv-q', 'queue_plain', 'send');
SELECT queue_grant('priv-q', 'queue_plain', 'process');

SET ROLE queue_plain;
SELECT lives_ok($$SELECT queue_put('priv-q', 'from plain')$$, 'with "send", queue_put works');
SELECT is((SELECT string_agg(body, ',' ORDER BY message_id) FROM queue_get('priv-q', 10)),
		  'secret,from plain', 'with "process", queue_get works');
SELECT is(current_user::text, 'queue_plain', 'the caller is the current user again after a call');
SELECT throws_ok('SELECT * FROM queue_storage.messages', '42501', NULL, 'still cannot read messages directly');

-- the caller's search_path neither breaks the functions nor is changed by them
SET search_path = '';
CREATE TEMP TABLE after_call AS
	SELECT (public.queue_put('priv-q', 'empty search_path')).message_id IS NOT NULL AS worked,
		   pg_catalog.current_setting('search_path') AS path;
RESET search_path;
SELECT ok((SELECT worked FROM after_call), 'works with an empty search_path');
SELECT is((SELECT path FROM after_call), '""', 'search_path is the caller''s after a call');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
