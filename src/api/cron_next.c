/*-------------------------------------------------------------------------
 *
 * cron_next.c
 *		queue_cron_next: when a cron expression is next due, to check one
 *		before scheduling it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "schedules/schedules.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_cron_next);

/*
 * queue_cron_next(cron, after, time_zone): the first time cron is due in
 * time_zone strictly after after, as the background worker would put a
 * schedule's message; 22023 for a bad expression or time zone, or one
 * never due within eight years.
 */
Datum
queue_cron_next(PG_FUNCTION_ARGS)
{
	const char *argnames[] = {"cron", "after", "time_zone"};
	int			i;

	for (i = 0; i < 3; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", argnames[i])));
	PG_RETURN_TIMESTAMPTZ(queue_schedule_next(NULL, text_to_cstring(PG_GETARG_TEXT_PP(0)),
											  text_to_cstring(PG_GETARG_TEXT_PP(2)),
											  PG_GETARG_TIMESTAMPTZ(1)));
}
