-- Per-queue permissions: every function against every kind of role, real
-- non-superuser roles, grants through a group role (with and without
-- INHERIT), grants on '*', what queue_list and queue_stats show, and a role
-- that plants functions and operators in public (CVE-2018-1058).  Then
-- topics and schedules (at the end).
BEGIN;
SELECT plan(293);

CREATE ROLE q_none;
CREATE ROLE q_send;
CREATE ROLE q_process;
CREATE ROLE q_read;
CREATE ROLE q_manage;
CREATE ROLE q_group;
CREATE ROLE q_member IN ROLE q_group;
CREATE ROLE q_member_noinherit NOINHERIT IN ROLE q_group;
CREATE ROLE q_all_manage;

SELECT queue_create('perm-q');
SELECT queue_create('perm-other');
SELECT queue_grant('perm-q', 'q_send', 'send');
SELECT queue_grant('perm-q', 'q_process', 'process');
SELECT queue_grant('perm-q', 'q_read', 'read');
SELECT queue_grant('perm-q', 'q_manage', 'manage');
SELECT queue_grant('perm-q', 'q_group', 'process');
SELECT queue_grant('*', 'q_all_manage', 'manage');

-- Runs statement as role in a subtransaction that is always rolled back;
-- returns 'ok' or the SQLSTATE of its error.
CREATE FUNCTION pg_temp.try_as(role text, statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('SET LOCAL ROLE %I', role);
	EXECUTE statement;
	RAISE SQLSTATE 'QU000';
EXCEPTION WHEN OTHERS THEN
	RETURN CASE WHEN SQLSTATE = 'QU000' THEN 'ok' ELSE SQLSTATE END;
END
$$;

-- every call x every role: 42501 exactly when the role lacks what the call
-- needs (a call that passes the check may still fail for other reasons,
-- such as QU404 for a message that does not exist)
SELECT is(pg_temp.try_as(r.role, c.statement) = '42501',
		  NOT (r.perms && c.needs AND (r.everywhere OR NOT c.on_all_queues)),
		  format('%s as %s', c.name, r.role))
FROM (VALUES
	('q_none', '{}'::text[], false),
	('q_send', '{send}', false),
	('q_process', '{process}', false),
	('q_read', '{read}', false),
	('q_manage', '{manage}', false),
	('q_member', '{process}', false),
	('q_member_noinherit', '{process}', false),
	('q_all_manage', '{manage}', true)
) AS r(role, perms, everywhere),
(VALUES
	('queue_put', $$SELECT queue_put('perm-q', 'x')$$, '{send}'::text[], false),
	('queue_put_batch', $$SELECT queue_put_batch('perm-q', ARRAY['x'])$$, '{send}', false),
	('queue_get', $$SELECT queue_get('perm-q')$$, '{process}', false),
	('queue_peek', $$SELECT queue_peek('perm-q')$$, '{process,read}', false),
	('queue_update', $$SELECT queue_update('perm-q', -1, gen_random_uuid(), '0')$$, '{process}', false),
	('queue_delete', $$SELECT queue_delete('perm-q', -1, gen_random_uuid())$$, '{process}', false),
	('queue_delete_batch', $$SELECT queue_delete_batch('perm-q', ARRAY[-1], ARRAY[gen_random_uuid()])$$, '{process}', false),
	('queue_delete_and_get', $$SELECT queue_delete_and_get('perm-q', ARRAY[-1], ARRAY[gen_random_uuid()])$$, '{process}', false),
	('queue_update_batch', $$SELECT queue_update_batch('perm-q', ARRAY[-1], ARRAY[gen_random_uuid()], '0')$$, '{process}', false),
	('queue_release', $$SELECT queue_release('perm-q', -1, gen_random_uuid())$$, '{process}', false),
	('queue_release_batch', $$SELECT queue_release_batch('perm-q', ARRAY[-1], ARRAY[gen_random_uuid()])$$, '{process}', false),
	('queue_pause', $$SELECT queue_pause('perm-q')$$, '{manage}', false),
	('queue_resume', $$SELECT queue_resume('perm-q')$$, '{manage}', false),
	('queue_inspect', $$SELECT queue_inspect('perm-q')$$, '{process,read}', false),
	('queue_replay', $$SELECT queue_replay('perm-q')$$, '{manage}', false),
	('queue_alter', $$SELECT queue_alter('perm-q', max_message_size => 2048)$$, '{manage}', false),
	('queue_redrive (manage on perm-q-poison, send on perm-q)', $$SELECT queue_redrive('perm-q-poison', 'perm-q')$$, '{}', false),
	('queue_stats', $$SELECT queue_stats('perm-q')$$, '{send,process,read,manage}', false),
	('queue_clear', $$SELECT queue_clear('perm-q')$$, '{manage}', false),
	('queue_drop', $$SELECT queue_drop('perm-q')$$, '{manage}', false),
	('queue_grant', $$SELECT queue_grant('perm-q', 'q_none', 'send')$$, '{manage}', false),
	('queue_revoke', $$SELECT queue_revoke('perm-q', 'q_send', 'send')$$, '{manage}', false),
	('queue_create', $$SELECT queue_create('perm-new')$$, '{manage}', true),
	('queue_maintain', $$SELECT queue_maintain()$$, '{manage}', true),
	('queue_grant on *', $$SELECT queue_grant('*', 'q_none', 'send')$$, '{manage}', true)
) AS c(name, statement, needs, on_all_queues);

-- the error names the queue and the missing permission
SET ROLE q_read;
SELECT throws_ok($$SELECT queue_put('perm-q', 'x')$$, '42501',
				 'permission denied for queue "perm-q": needs "send"', 'the error names queue and permission');
SELECT throws_ok($$SELECT queue_create('perm-new')$$, '42501',
				 'permission denied for queue "*": needs "manage"', 'creating needs manage on *');
RESET ROLE;

-- queue_list and queue_stats show only the queues one holds something on
SET ROLE q_send;
SELECT is(ARRAY(SELECT queue FROM queue_list()), '{perm-q}', 'queue_list as q_send');
SELECT is(ARRAY(SELECT queue FROM queue_stats()), '{perm-q}', 'queue_stats as q_send');
SELECT is(ARRAY(SELECT DISTINCT queue FROM queue_metrics()), '{perm-q}', 'queue_metrics as q_send');
SET ROLE q_none;
SELECT is(ARRAY(SELECT queue FROM queue_list()), '{}'::text[], 'queue_list as q_none');
SELECT throws_ok($$SELECT queue_stats('perm-other')$$, '42501', NULL, 'queue_stats of a queue one holds nothing on');
SET ROLE q_member;
SELECT is(ARRAY(SELECT queue FROM queue_list()), '{perm-q}', 'queue_list through a group role');
SET ROLE q_all_manage;
SELECT is(ARRAY(SELECT queue FROM queue_list()),
		  '{perm-other,perm-other-poison,perm-q,perm-q-poison}', 'queue_list with a grant on *');
RESET ROLE;

-- a grant on * covers queues created later; a revoke takes effect at once
SELECT queue_create('perm-later');
SELECT is(pg_temp.try_as('q_all_manage', $$SELECT queue_clear('perm-later')$$), 'ok',
		  'a grant on * covers a queue created later');
SELECT queue_revoke('perm-q', 'q_send', 'send');
SELECT is(pg_temp.try_as('q_send', $$SELECT queue_put('perm-q', 'x')$$), '42501', 'revoked');
SELECT lives_ok($$SELECT queue_revoke('perm-q', 'q_send', 'send')$$, 'revoking what is not granted is no error');
-- a manager of a queue can grant on it
SET ROLE q_manage;
SELECT lives_ok($$SELECT queue_grant('perm-q', 'q_send', 'send')$$, 'a manager grants on its queue');
SELECT throws_ok($$SELECT queue_grant('perm-other', 'q_send', 'send')$$, '42501', NULL, '... not on another');
RESET ROLE;
SELECT is(pg_temp.try_as('q_send', $$SELECT queue_put('perm-q', 'x')$$), 'ok', 'granted again');
-- a dropped queue takes its grants along
SELECT queue_grant('perm-later', 'q_send', 'send');
SELECT queue_drop('perm-later');
SELECT queue_create('perm-later');
SELECT is(pg_temp.try_as('q_send', $$SELECT queue_put('perm-later', 'x')$$), '42501',
		  'a queue created again under the same name has no old grants');

-- redrive needs manage on the poison queue and send on the destination
SELECT queue_grant('perm-q-poison', 'q_send', 'manage');
SELECT is(pg_temp.try_as('q_send', $$SELECT queue_redrive('perm-q-poison')$$), 'ok',
		  'redrive with manage on the poison queue and send on its queue');
SELECT is(pg_temp.try_as('q_manage', $$SELECT queue_redrive('perm-q-poison')$$), '42501',
		  '... not with manage on the destination only');

-- bad grants
SELECT throws_ok($$SELECT queue_grant('perm-q', 'q_send', 'write')$$, '22023', NULL, 'unknown permission');
SELECT throws_ok($$SELECT queue_grant('perm-q', NULL, 'send')$$, '22004', NULL, 'NULL grantee');
SELECT throws_ok($$SELECT queue_grant(NULL, 'q_send', 'send')$$, '22004', NULL, 'NULL queue');
SELECT throws_ok($$SELECT queue_grant('perm-q', 'q_send', NULL)$$, '22004', NULL, 'NULL permission');
SELECT throws_ok($$SELECT queue_grant('no-such-queue', 'q_send', 'send')$$, '42704', NULL, 'no such queue');
SELECT throws_ok($$SELECT queue_grant('perm-q', 'no_such_role', 'send')$$, '42704', NULL, 'no such role');

-- CVE-2018-1058: a role plants functions and operators in public that
-- shadow what the extension's statements use; a superuser and the planter
-- call the API with public first in search_path; nothing planted runs and
-- the permission check is not fooled
CREATE ROLE q_evil;
GRANT CREATE ON SCHEMA public TO q_evil;
CREATE TABLE public.planted_calls (what text);
GRANT INSERT ON public.planted_calls TO PUBLIC;
SET ROLE q_evil;
CREATE FUNCTION public.pg_has_role(oid, oid, text) RETURNS boolean
	LANGUAGE sql AS $$ INSERT INTO public.planted_calls VALUES ('pg_has_role') RETURNING true $$;
CREATE FUNCTION public.octet_length(text) RETURNS integer
	LANGUAGE sql AS $$ INSERT INTO public.planted_calls VALUES ('octet_length') RETURNING 0 $$;
CREATE FUNCTION public.nextval(regclass) RETURNS bigint
	LANGUAGE sql AS $$ INSERT INTO public.planted_calls VALUES ('nextval') RETURNING 1::bigint $$;
CREATE FUNCTION public.planted_le(timestamptz, timestamptz) RETURNS boolean
	LANGUAGE sql AS $$ INSERT INTO public.planted_calls VALUES ('<=') RETURNING true $$;
CREATE OPERATOR public.<= (LEFTARG = timestamptz, RIGHTARG = timestamptz, FUNCTION = public.planted_le);
CREATE FUNCTION public.planted_eq(integer, integer) RETURNS boolean
	LANGUAGE sql AS $$ INSERT INTO public.planted_calls VALUES ('=') RETURNING true $$;
CREATE OPERATOR public.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = public.planted_eq);
-- (no pgTAP call while public comes first: pgTAP itself would find them)
SET search_path = public, pg_catalog;
CREATE TEMP TABLE evil_result AS
	SELECT pg_temp.try_as('q_evil', $$SELECT queue_get('perm-q')$$) AS result;
RESET ROLE;
SET search_path = public, pg_catalog;
SELECT count(*) FROM queue_put('perm-q', 'x', headers => '{"a": 1}');
SELECT count(*) FROM queue_get('perm-q', 10);
SELECT count(*) FROM queue_peek('perm-q');
SELECT count(*) FROM queue_stats();
SELECT count(*) FROM queue_metrics();
SELECT count(*) FROM queue_list();
SELECT count(*) FROM queue_maintain();
SELECT queue_replay('perm-q', since => now() - interval '1 hour', message_ids => ARRAY[1]::bigint[]);
SELECT count(*) FROM queue_put('perm-q', 'y');
SELECT count(*) FROM queue_get('perm-q') m,
	LATERAL queue_update('perm-q', m.message_id, m.pop_receipt, '0', 'new body') u;
SELECT queue_topic_create('perm-planted');
SELECT queue_subscribe('perm-planted', 'perm-other', '{"a": [{"numeric": [">", 0]}, "x"]}');
SELECT count(*) FROM queue_publish('perm-planted', 'z', '{"a": 1}');
SELECT count(*) FROM queue_topics();
SELECT queue_schedule('perm-planted', 'perm-other', '* * * * *', 'tick');
SELECT count(*) FROM queue_schedules();
SELECT queue_unschedule('perm-planted');
SELECT queue_topic_drop('perm-planted');
RESET search_path;
SELECT is((SELECT result FROM evil_result), '42501',
		  'a planted pg_has_role does not give the planter permissions');
SELECT is((SELECT string_agg(what, ', ') FROM public.planted_calls), NULL,
		  'no planted function or operator ran');
SELECT is((SELECT body FROM queue_peek('perm-q')), 'new body',
		  'the API worked with public first in search_path');


-- Permissions on topics: every topic function against every kind of role;
-- a publisher with send on the topic reaches queues it holds nothing on;
-- subscribing needs manage on the topic and on the queue; what
-- queue_topics shows; grants on a topic go with its drop.
CREATE ROLE t_none;
CREATE ROLE t_send;
CREATE ROLE t_process;
CREATE ROLE t_read;
CREATE ROLE t_manage;
CREATE ROLE t_all_manage;

SELECT queue_create('tp-q');
SELECT queue_create('tp-other');
SELECT queue_topic_create('tp-topic');
SELECT queue_topic_create('tp-other-topic');
SELECT queue_subscribe('tp-topic', 'tp-q');
SELECT queue_grant('tp-topic', 't_send', 'send');
SELECT queue_grant('tp-topic', 't_process', 'process');
SELECT queue_grant('tp-topic', 't_read', 'read');
SELECT queue_grant('tp-topic', 't_manage', 'manage');
SELECT queue_grant('tp-q', 't_manage', 'manage');
SELECT queue_grant('*', 't_all_manage', 'manage');


-- every call x every role: 42501 exactly when the role lacks what the call needs
SELECT is(pg_temp.try_as(r.role, c.statement) = '42501',
		  NOT (r.perms && c.needs AND (r.everywhere OR NOT c.on_all)),
		  format('%s as %s', c.name, r.role))
FROM (VALUES
	('t_none', '{}'::text[], false),
	('t_send', '{send}', false),
	('t_process', '{process}', false),
	('t_read', '{read}', false),
	('t_manage', '{manage}', false),
	('t_all_manage', '{manage}', true)
) AS r(role, perms, everywhere),
(VALUES
	('queue_publish', $$SELECT queue_publish('tp-topic', 'x')$$, '{send}'::text[], false),
	('queue_subscribe', $$SELECT queue_subscribe('tp-topic', 'tp-q', '{"a": ["b"]}')$$, '{manage}', false),
	('queue_unsubscribe', $$SELECT queue_unsubscribe('tp-topic', 'tp-q')$$, '{manage}', false),
	('queue_topic_drop', $$SELECT queue_topic_drop('tp-topic')$$, '{manage}', false),
	('queue_grant on a topic', $$SELECT queue_grant('tp-topic', 't_none', 'send')$$, '{manage}', false),
	('queue_revoke on a topic', $$SELECT queue_revoke('tp-topic', 't_send', 'send')$$, '{manage}', false),
	('queue_topic_create', $$SELECT queue_topic_create('tp-new')$$, '{manage}', true)
) AS c(name, statement, needs, on_all);

-- send on the topic is enough to reach a queue the publisher holds nothing on
SET ROLE t_send;
SELECT is((SELECT array_agg(queue) FROM queue_publish('tp-topic', 'from t_send')), '{tp-q}',
		  'a publisher puts into a subscribed queue through the topic');
SELECT throws_ok($$SELECT queue_put('tp-q', 'x')$$, '42501', NULL, '... but not directly');
SELECT throws_ok($$SELECT queue_publish('tp-other-topic', 'x')$$, '42501',
				 'permission denied for topic "tp-other-topic": needs "send"',
				 'the error names the topic and the permission');
RESET ROLE;
SELECT is((SELECT body FROM queue_peek('tp-q')), 'from t_send', 'the message is there');

-- subscribing needs manage on the queue as well as on the topic
SELECT queue_grant('tp-other-topic', 't_manage', 'manage');
SELECT is(pg_temp.try_as('t_manage', $$SELECT queue_subscribe('tp-other-topic', 'tp-other')$$), '42501',
		  'subscribing a queue one does not manage');
SELECT is(pg_temp.try_as('t_manage', $$SELECT queue_subscribe('tp-other-topic', 'tp-q')$$), 'ok',
		  'subscribing a queue one manages to a topic one manages');
-- unsubscribing needs manage on either
SELECT queue_grant('tp-other', 't_read', 'manage');
SELECT queue_subscribe('tp-topic', 'tp-other');
SELECT is(pg_temp.try_as('t_read', $$SELECT queue_unsubscribe('tp-topic', 'tp-other')$$), 'ok',
		  'the manager of the queue unsubscribes it');

-- queue_topics shows the topics one holds something on
SET ROLE t_send;
SELECT is(ARRAY(SELECT DISTINCT topic FROM queue_topics()), '{tp-topic}', 'queue_topics as t_send');
SET ROLE t_none;
SELECT is(ARRAY(SELECT DISTINCT topic FROM queue_topics()), '{}'::text[], 'queue_topics as t_none');
SET ROLE t_all_manage;
SELECT is(ARRAY(SELECT DISTINCT topic FROM queue_topics() ORDER BY 1), '{tp-other-topic,tp-topic}',
		  'queue_topics with a grant on *');
RESET ROLE;

-- a dropped topic takes its grants along
SELECT queue_topic_drop('tp-topic');
SELECT queue_topic_create('tp-topic');
SELECT is(pg_temp.try_as('t_send', $$SELECT queue_publish('tp-topic', 'x')$$), '42501',
		  'a topic created again under the same name has no old grants');
SELECT throws_ok($$SELECT queue_grant('tp-none', 't_send', 'send')$$, '42704',
				 'queue "tp-none" does not exist', 'a grant on a name that is no queue or topic');

-- Permissions on schedules: scheduling, replacing and unscheduling need
-- manage on the schedule's queue (and on the queue of the schedule it
-- replaces); queue_schedules shows the schedules of the queues one holds
-- something on; queue_cron_next needs nothing.
CREATE ROLE s_none;
CREATE ROLE s_send;
CREATE ROLE s_manage;

SELECT queue_create('sp-q', max_dequeue_count => NULL);
SELECT queue_create('sp-other', max_dequeue_count => NULL);
SELECT queue_grant('sp-q', 's_send', 'send');
SELECT queue_grant('sp-q', 's_manage', 'manage');
SELECT queue_schedule('sp-on-other', 'sp-other', '@daily', 'x');


SELECT is(pg_temp.try_as('s_manage', $$SELECT queue_schedule('sp-new', 'sp-q', '@daily', 'x')$$), 'ok',
		  'a manager of the queue schedules into it');
SELECT is(pg_temp.try_as('s_send', $$SELECT queue_schedule('sp-new', 'sp-q', '@daily', 'x')$$), '42501',
		  'send on the queue is not enough');
SELECT is(pg_temp.try_as('s_none', $$SELECT queue_schedule('sp-new', 'sp-q', '@daily', 'x')$$), '42501',
		  'nor nothing');
SELECT is(pg_temp.try_as('s_manage', $$SELECT queue_schedule('sp-on-other', 'sp-q', '@daily', 'x')$$), '42501',
		  'replacing a schedule needs manage on the queue it had');
SELECT is(pg_temp.try_as('s_manage', $$SELECT queue_unschedule('sp-on-other')$$), '42501',
		  'unscheduling needs manage on its queue');
SELECT is(pg_temp.try_as('s_send', $$SELECT queue_cron_next('* * * * *', now())$$), 'ok',
		  'queue_cron_next needs nothing');
SET ROLE s_manage;
SELECT throws_ok($$SELECT queue_schedule('sp-new', 'sp-other', '@daily', 'x')$$, '42501',
				 'permission denied for queue "sp-other": needs "manage"', 'the error names the queue');
RESET ROLE;

SELECT queue_schedule('sp-mine', 'sp-q', '@daily', 'x');
SELECT is(pg_temp.try_as('s_manage', $$SELECT queue_unschedule('sp-mine')$$), 'ok',
		  'a manager of the queue unschedules');
SET ROLE s_send;
SELECT is(ARRAY(SELECT schedule FROM queue_schedules()), '{sp-mine}', 'queue_schedules as s_send');
SET ROLE s_none;
SELECT is(ARRAY(SELECT schedule FROM queue_schedules()), '{}'::text[], 'queue_schedules as s_none');
RESET ROLE;
SELECT is(ARRAY(SELECT schedule FROM queue_schedules() ORDER BY 1), '{sp-mine,sp-on-other}',
		  'queue_schedules as a superuser');
-- the storage is the owner's: the table is no role's to write
SELECT is(has_table_privilege('s_manage', 'queue_storage.schedules', 'UPDATE'), false,
		  'queue_storage.schedules is closed to other roles');

SELECT * FROM finish();
ROLLBACK;
