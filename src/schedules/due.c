/*-------------------------------------------------------------------------
 *
 * due.c
 *		Putting the messages of the schedules that are due.
 *
 * The background worker (and queue_maintain) takes the schedules whose
 * next_at has come, locked, skipping those another transaction holds.  For
 * each it puts one message into its queue, as queue_put would with the
 * queue's own delay and ttl, and moves next_at to the first due time after
 * now, in the same transaction: the message and the move commit together
 * or not at all, so a due time gives one message across a crash, a restart
 * or a failover, and a second worker finds the schedule locked or no
 * longer due.  Due times missed while nothing ran (the server down, the
 * worker off) give one message, for the first of them.
 *
 * The message's headers are the schedule's with "schedule" (its name) and
 * "scheduled_for" (the due time) added.  A message larger than the queue's
 * max_message_size (the queue altered since) is not put: a warning says
 * so, and the schedule moves on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "queue_storage/queue_storage.h"
#include "schedules/schedules.h"

#include "utils/builtins.h"
#include "utils/memutils.h"

/*
 * The first time the schedule (its cron expression in time_zone; its name
 * for errors, or NULL) is due after the instant after; 22023 if it is
 * never due within eight years.
 */
TimestampTz
queue_schedule_next(const char *schedule, const char *cron, const char *time_zone,
					TimestampTz after)
{
	CronSchedule parsed;
	pg_tz	   *zone = queue_cron_zone(time_zone, schedule);
	TimestampTz next;

	queue_cron_parse(cron, schedule, &parsed);
	if (!queue_cron_next_due(&parsed, zone, after, &next))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 schedule != NULL ?
				 errmsg("cron expression \"%s\" of schedule \"%s\" is never due", cron, schedule) :
				 errmsg("cron expression \"%s\" is never due", cron),
				 errdetail("No time in the next eight years matches it in time zone \"%s\".",
						   time_zone)));
	return next;
}

/* A due schedule, copied out of the statement's result. */
typedef struct DueSchedule
{
	char	   *schedule;
	char	   *queue;
	int32		queue_id;
	char	   *cron;
	char	   *time_zone;
	Datum		body;
	Datum		headers;		/* the schedule's, with its name and due time */
	TimestampTz due_at;
} DueSchedule;

/* Puts the message of one due schedule; false if it was not put. */
static bool
put_one(const DueSchedule *due)
{
	QueueInfo	queue;
	PutTiming	timing = {0};
	bool		no_null = false;
	int64		size;

	/* a queue's drop takes its schedules along: only a race leaves one */
	if (!queue_open_if_exists(due->queue, AccessShareLock, 0, &queue) ||
		queue.queue_id != due->queue_id)
		return false;
	size = queue_message_size(due->body, due->headers, true);
	if (queue_too_large(&queue, size))
	{
		ereport(WARNING,
				(errmsg("queue: schedule \"%s\" put no message into queue \"%s\": %lld bytes is more than its max_message_size %d",
						due->schedule, due->queue, (long long) size, queue.max_message_size),
				 errhint("Raise the queue's max_message_size, or schedule a smaller body.")));
		return false;
	}
	timing.ttl = -1;
	(void) queue_insert_messages(&queue, &timing, &due->body, &due->headers, &no_null,
								 &(PutOrdering) {0}, 1);
	return true;
}

/*
 * The schedule's next due time after now, or infinity, with a warning, if
 * it has none: its time zone gone from the server's time zone data since
 * it was scheduled, or no due time in eight years.  An error here would
 * stop every sweep of the database.
 */
static TimestampTz
next_after(const DueSchedule *due, TimestampTz now)
{
	pg_tz	   *zone = pg_tzset(due->time_zone);
	CronSchedule cron;
	TimestampTz next;

	if (zone != NULL)
	{
		queue_cron_parse(due->cron, due->schedule, &cron);
		if (queue_cron_next_due(&cron, zone, now, &next))
			return next;
	}
	ereport(WARNING,
			(errmsg("queue: schedule \"%s\" is due no more: no time after now matches \"%s\" in time zone \"%s\"",
					due->schedule, due->cron, due->time_zone),
			 errhint("Schedule it again with queue_schedule(), or remove it with queue_unschedule().")));
	TIMESTAMP_NOEND(next);
	return next;
}

/*
 * Puts the messages of up to max_schedules schedules due at now, each
 * moved on to its next due time; returns how many schedules it took (a
 * batch is full when that is max_schedules).  Runs in a StorageSession.
 */
int64
queue_put_due(TimestampTz now, int max_schedules)
{
	PlanArgs	args;
	uint64		count;
	uint64		i;
	DueSchedule *due;
	bool		isnull;

	if (!queue_storage_has_schedules())
		return 0;
	queue_plan_begin(&args, PLAN_SCHEDULES_DUE);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_schedules", Int32GetDatum(max_schedules));
	count = queue_plan_run(&args);

	/* copied: the puts below run statements of their own */
	due = palloc(sizeof(DueSchedule) * Max(count, 1));
	for (i = 0; i < count; i++)
	{
		SPITupleTable *rows = SPI_tuptable;

		due[i].schedule = TextDatumGetCString(queue_row_value(rows, i, "schedule", &isnull));
		due[i].queue = TextDatumGetCString(queue_row_value(rows, i, "queue", &isnull));
		due[i].queue_id = DatumGetInt32(queue_row_value(rows, i, "queue_id", &isnull));
		due[i].cron = TextDatumGetCString(queue_row_value(rows, i, "cron", &isnull));
		due[i].time_zone = TextDatumGetCString(queue_row_value(rows, i, "time_zone", &isnull));
		due[i].body = SPI_datumTransfer(queue_row_value(rows, i, "body", &isnull), false, -1);
		due[i].headers = SPI_datumTransfer(queue_row_value(rows, i, "message_headers", &isnull),
										   false, -1);
		due[i].due_at = DatumGetTimestampTz(queue_row_value(rows, i, "next_at", &isnull));
	}

	for (i = 0; i < count; i++)
	{
		(void) put_one(&due[i]);
		queue_plan_begin(&args, PLAN_SCHEDULE_FIRED);
		queue_plan_set(&args, "schedule", CStringGetTextDatum(due[i].schedule));
		queue_plan_set(&args, "last_at", TimestampTzGetDatum(due[i].due_at));
		queue_plan_set(&args, "next_at", TimestampTzGetDatum(next_after(&due[i], now)));
		queue_plan_run(&args);
	}
	return (int64) count;
}
