/*-------------------------------------------------------------------------
 *
 * schedules.h
 *		Schedules: cron expressions, and putting what is due.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SCHEDULES_H
#define SCHEDULES_H

#include "queue.h"

#include "pgtime.h"

/* cron.c: a cron expression, read; bit v of a field: value v matches */
typedef struct CronSchedule
{
	uint64		minutes;
	uint32		hours;
	uint32		days;			/* of the month, 1-31 */
	uint16		months;			/* 1-12 */
	uint8		weekdays;		/* 0-6, Sunday 0 */
	bool		days_star;		/* the field started with * */
	bool		weekdays_star;
} CronSchedule;

extern void queue_cron_parse(const char *cron, const char *schedule, CronSchedule *out);
extern pg_tz *queue_cron_zone(const char *name, const char *schedule);
extern bool queue_cron_next_due(const CronSchedule *cron, pg_tz *zone, TimestampTz after,
							TimestampTz *next);

/* due.c: the messages of the schedules that are due */
extern TimestampTz queue_schedule_next(const char *schedule, const char *cron,
									   const char *time_zone, TimestampTz after);
extern int64 queue_put_due(TimestampTz now, int max_schedules);

#endif							/* SCHEDULES_H */
