/*-------------------------------------------------------------------------
 *
 * schedule.c
 *		queue_schedule and queue_unschedule: recurring messages.
 *
 * A schedule is checked whole here (its name, cron expression, time zone,
 * and its message against the queue's limits) and stored with its first
 * due time; the background worker puts its messages (schedules/due.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/rules.h"
#include "queue_storage/queue_storage.h"
#include "schedules/schedules.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_schedule);
PG_FUNCTION_INFO_V1(queue_unschedule);

/*
 * Locks the schedule name, if there is one, against its firing, and
 * raises 42501 unless the caller manages its queue; false if there is no
 * such schedule.
 */
static bool
open_schedule(const char *schedule)
{
	bool		isnull;
	char	   *queue_name;
	QueueInfo	queue;

	if (queue_plan_run1(PLAN_SCHEDULE_QUEUE, "schedule", CStringGetTextDatum(schedule)) == 0)
		return false;
	queue_name = TextDatumGetCString(queue_row_value(SPI_tuptable, 0, "queue", &isnull));
	queue_open(queue_name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	return true;
}

/*
 * queue_schedule(schedule, queue, cron, body, headers, time_zone): needs
 * manage on the queue, and on the queue of the schedule it replaces.
 */
Datum
queue_schedule(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg_of(fcinfo, 0, "schedule");
	char	   *queue_name = queue_name_arg(fcinfo, 1);
	char	   *cron;
	char	   *time_zone;
	bool		has_headers = !PG_ARGISNULL(4);
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;
	TimestampTz now = GetCurrentTimestamp();

	queue_require_arg(fcinfo, 2, "cron", queue_name);
	queue_require_arg(fcinfo, 3, "body", queue_name);
	queue_require_arg(fcinfo, 5, "time_zone", queue_name);
	cron = text_to_cstring(PG_GETARG_TEXT_PP(2));
	time_zone = text_to_cstring(PG_GETARG_TEXT_PP(5));
	if (has_headers)
		queue_check_headers(PG_GETARG_DATUM(4), queue_name);

	queue_storage_begin_write(&session, "queue_schedule()");
	queue_require_storage(queue_storage_has_schedules(), "schedules", "1.10");
	(void) open_schedule(name);
	queue_open(queue_name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	queue_check_size(&queue, PG_GETARG_DATUM(3), has_headers ? PG_GETARG_DATUM(4) : (Datum) 0,
					 has_headers, 0);

	queue_plan_begin(&args, PLAN_SCHEDULE_SET);
	queue_plan_set(&args, "schedule", CStringGetTextDatum(name));
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set(&args, "cron", PG_GETARG_DATUM(2));
	queue_plan_set(&args, "time_zone", PG_GETARG_DATUM(5));
	queue_plan_set(&args, "body", PG_GETARG_DATUM(3));
	queue_plan_set_arg(&args, "headers", fcinfo, 4);
	queue_plan_set(&args, "next_at",
				   TimestampTzGetDatum(queue_schedule_next(name, cron, time_zone, now)));
	queue_plan_set(&args, "created_at", TimestampTzGetDatum(now));
	queue_plan_run(&args);

	queue_storage_end(&session);
	PG_RETURN_VOID();
}

/* queue_unschedule(schedule): needs manage on its queue; 42704 if there is none. */
Datum
queue_unschedule(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg_of(fcinfo, 0, "schedule");
	StorageSession session;

	queue_storage_begin_write(&session, "queue_unschedule()");
	if (!queue_storage_has_schedules() || !open_schedule(name))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("schedule \"%s\" does not exist", name)));
	queue_plan_run1(PLAN_SCHEDULE_DELETE, "schedule", CStringGetTextDatum(name));
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
