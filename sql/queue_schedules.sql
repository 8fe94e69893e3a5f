-- schedules: queue_schedule, queue_unschedule, queue_schedules, and
-- queue_cron_next, which gives the due times the worker keeps to.
SET TimeZone = 'UTC';

-- the fields: lists, ranges, steps, names, and 7 for Sunday
SELECT c, queue_cron_next(c, '2026-11-27 10:07:00+00') AS next FROM (VALUES
	('* * * * *'),
	('*/15 * * * *'),
	('5/20 * * * *'),
	('0-10/5,30 11 * * *'),
	('0 9 * jan-mar mon-fri'),
	('0 0 * * 7'),
	('0 0 * * sun'),
	('0 0 1 * *'),
	('0 0 13 * 5'),
	('0 0 13 * *'),
	('0 0 * * fri'),
	('@hourly'),
	('@daily'),
	('@weekly'),
	('@monthly'),
	('@yearly'),
	('  0   12  *  *  *  '),
	('0 0 29 2 *')
) AS t(c);
-- strictly after: a due time equal to the given one is not next
SELECT queue_cron_next('0 * * * *', '2026-11-27 10:00:00+00');
SELECT queue_cron_next('0 * * * *', '2026-11-27 09:59:59.999999+00');

-- time zones: the wall clock of the zone decides
SELECT queue_cron_next('0 9 * * *', '2026-11-27 00:00:00+00', 'Asia/Tokyo') AS tokyo,
	queue_cron_next('0 9 * * *', '2026-11-27 00:00:00+00', 'America/Los_Angeles') AS los_angeles;
-- the clock set forward (New York, 8 March 2026, 02:00 EST to 03:00 EDT):
-- 02:30 never happens and is due at 03:00 EDT, once
SELECT queue_cron_next('30 2 * * *', '2026-03-07 12:00:00-05', 'America/New_York');
SELECT queue_cron_next('30 2 * * *', '2026-03-08 07:00:00+00', 'America/New_York');
-- every minute of the gap gives one due time, at its end
SELECT queue_cron_next('* * * * *', '2026-03-08 06:59:00+00', 'America/New_York') AS at_gap,
	queue_cron_next('* * * * *', '2026-03-08 07:00:00+00', 'America/New_York') AS after_gap;
-- the clock set back (New York, 1 November 2026, 02:00 EDT to 01:00 EST):
-- 01:30 happens twice and is due the first time only
SELECT queue_cron_next('30 1 * * *', '2026-10-31 12:00:00-04', 'America/New_York') AS first,
	queue_cron_next('30 1 * * *', '2026-11-01 05:30:00+00', 'America/New_York') AS not_again;
-- every 15 minutes through the repeated hour: 01:00 to 01:45 EST are not due again
SELECT queue_cron_next('*/15 * * * *', '2026-11-01 05:45:00+00', 'America/New_York') AS after_last_edt,
	queue_cron_next('*/15 * * * *', '2026-11-01 06:20:00+00', 'America/New_York') AS from_the_second_pass;
-- Paris: 29 March 2026 02:00 CET to 03:00 CEST; 25 October 03:00 CEST to 02:00 CET
SELECT queue_cron_next('15 2 * * *', '2026-03-28 12:00:00+00', 'Europe/Paris') AS gap,
	queue_cron_next('15 2 * * *', '2026-10-24 12:00:00+00', 'Europe/Paris') AS repeated,
	queue_cron_next('15 2 * * *', '2026-10-25 00:15:00+00', 'Europe/Paris') AS next_day;

-- bad expressions and zones: 22023, with what is wrong
SELECT c, message, detail FROM (VALUES
	(''),
	('* * * *'),
	('* * * * * *'),
	('60 * * * *'),
	('* 24 * * *'),
	('* * 0 * *'),
	('* * * 13 *'),
	('* * * * 8'),
	('5-1 * * * *'),
	('*/0 * * * *'),
	('a * * * *'),
	('1,,2 * * * *'),
	('1;2 * * * *'),
	('@reboot'),
	('0 0 30 2 *')
) AS t(c),
LATERAL error_details(format('SELECT queue_cron_next(%L, now())', c));
SELECT check_error($$SELECT queue_cron_next('* * * * *', now(), 'Mars/Olympus_Mons')$$);
SELECT check_error($$SELECT queue_cron_next(NULL, now())$$);
SELECT check_error($$SELECT queue_cron_next('* * * * *', now(), NULL)$$);

-- a schedule: stored with its next due time
SELECT queue_create('reports', max_dequeue_count => NULL);
SELECT queue_schedule('nightly', 'reports', '0 3 * * *', 'build the report',
	'{"kind": "report"}', 'Europe/Paris');
SELECT schedule, queue, cron, time_zone,
	next_at = queue_cron_next('0 3 * * *', now(), 'Europe/Paris') AS next_ok, last_at
FROM queue_schedules();
-- scheduling again replaces it
SELECT queue_schedule('nightly', 'reports', '0 4 * * *', 'build the report');
SELECT schedule, cron, time_zone, next_at = queue_cron_next('0 4 * * *', now()) AS next_ok
FROM queue_schedules();

-- due: queue_maintain (as the worker) puts one message and moves next_at on
UPDATE queue_storage.schedules SET next_at = '2026-01-01 04:00:00+00' WHERE schedule = 'nightly';
SELECT count(*) FROM queue_maintain();
SELECT body, headers - 'scheduled_for' AS headers, (headers ->> 'scheduled_for')::timestamptz AS scheduled_for
FROM queue_peek('reports', 10);
SELECT last_at, next_at > now() AS next_in_the_future FROM queue_schedules();
SELECT count(*) FROM queue_maintain();
SELECT count(*) FROM queue_peek('reports', 10);
-- due times missed meanwhile give one message, for the first of them
UPDATE queue_storage.schedules SET next_at = now() - interval '3 days' WHERE schedule = 'nightly';
SELECT count(*) FROM queue_maintain();
SELECT count(*) FROM queue_peek('reports', 10);
-- a rolled back sweep puts nothing and moves nothing
UPDATE queue_storage.schedules SET next_at = '2026-02-01 04:00:00+00' WHERE schedule = 'nightly';
BEGIN;
SELECT count(*) FROM queue_maintain();
ROLLBACK;
SELECT count(*) FROM queue_peek('reports', 10);
SELECT next_at FROM queue_schedules();
-- a message too large for the queue's max_message_size (altered since) is
-- not put, with a warning; the schedule moves on
SELECT queue_alter('reports', max_message_size => 8);
SELECT count(*) FROM queue_maintain();
SELECT count(*) FROM queue_peek('reports', 10);
SELECT next_at > now() AS moved_on FROM queue_schedules();
SELECT queue_alter('reports', max_message_size => 1048576);

-- bad schedules
SELECT check_error($$SELECT queue_schedule(NULL, 'reports', '* * * * *', 'x')$$);
SELECT check_error($$SELECT queue_schedule('s', NULL, '* * * * *', 'x')$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', NULL, 'x')$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * * *', NULL)$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * * *', 'x', time_zone => NULL)$$);
SELECT check_error($$SELECT queue_schedule('no spaces', 'reports', '* * * * *', 'x')$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * *', 'x')$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * * *', 'x', time_zone => 'Nowhere/Atlantis')$$);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * * *', 'x', '[1]')$$);
SELECT check_error($$SELECT queue_schedule('s', 'no-such-queue', '* * * * *', 'x')$$);
SELECT queue_alter('reports', max_message_size => 4);
SELECT check_error($$SELECT queue_schedule('s', 'reports', '* * * * *', 'too large')$$);
SELECT queue_alter('reports', max_message_size => 1048576);
SELECT check_error($$SELECT queue_unschedule('no-such-schedule')$$);
SELECT check_error($$SELECT queue_unschedule(NULL)$$);
SELECT count(*) FROM queue_schedules() WHERE schedule = 's';

-- unscheduling leaves the messages; dropping the queue takes its schedules
SELECT queue_unschedule('nightly');
SELECT count(*) FROM queue_schedules();
SELECT count(*) FROM queue_peek('reports', 10);
SELECT queue_schedule('hourly', 'reports', '@hourly', 'tick');
SELECT queue_drop('reports');
SELECT count(*) FROM queue_schedules();
SELECT count(*) FROM queue_storage.schedules;

RESET TimeZone;
