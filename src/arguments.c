/*-------------------------------------------------------------------------
 *
 * arguments.c
 *		Checking what callers pass: queue names, durations, counts.
 *
 * Every check fails with the SQLSTATE the API documents: 22004 for a required
 * argument that is NULL, 22023 for a value out of its range.  Durations are
 * handled as microseconds: an interval's months count 30 days and its days
 * 24 hours, as EXTRACT(epoch) counts them, so '1 day' is always 86400
 * seconds whatever the time zone does.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "common/int.h"
#include "utils/builtins.h"
#include "utils/datetime.h"

/*
 * Checks a queue name against Azure's rules: 3 to 63 characters of a-z,
 * 0-9 and '-', starting and ending with a letter or digit, no "--".
 */
void
queue_check_name(const char *name)
{
	size_t		len = strlen(name);
	const char *problem = NULL;

	if (len < QUEUE_NAME_MIN_LEN || len > QUEUE_NAME_MAX_LEN)
		problem = "A queue name is 3 to 63 characters long.";
	else if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != len)
		problem = "A queue name contains only lower-case letters a-z, digits and \"-\".";
	else if (name[0] == '-' || name[len - 1] == '-')
		problem = "A queue name begins and ends with a letter or a digit.";
	else if (strstr(name, "--") != NULL)
		problem = "A queue name contains no \"--\".";

	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid queue name \"%s\"", name),
				 errdetail("%s", problem)));
}

/* The queue name argument: not NULL, and a valid name. */
char *
queue_name_arg(FunctionCallInfo fcinfo, int argno)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("queue name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	queue_check_name(name);
	return name;
}

/* Raises 22004 if a required argument is NULL. */
void
queue_require_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
				  const char *queue)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null for queue \"%s\"", argname, queue)));
}

/* An interval as microseconds; 22023 if it does not fit. */
int64
queue_interval_usecs(const Interval *interval, const char *argname,
					 const char *queue)
{
	int64		months;
	int64		days;
	int64		result;

	if (pg_mul_s64_overflow((int64) interval->month,
							(int64) DAYS_PER_MONTH * USECS_PER_DAY, &months) ||
		pg_mul_s64_overflow((int64) interval->day, USECS_PER_DAY, &days) ||
		pg_add_s64_overflow(months, days, &result) ||
		pg_add_s64_overflow(result, interval->time, &result))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is out of range for queue \"%s\"", argname, queue)));
	return result;
}

/* A required interval argument, as microseconds. */
int64
queue_duration_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
				   const char *queue)
{
	queue_require_arg(fcinfo, argno, argname, queue);
	return queue_interval_usecs(PG_GETARG_INTERVAL_P(argno), argname, queue);
}

/* A required integer argument, between min and max (22004, 22023). */
int32
queue_count_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
				const char *queue, int32 min, int32 max)
{
	queue_require_arg(fcinfo, argno, argname, queue);
	queue_check_count(PG_GETARG_INT32(argno), min, max, argname, queue);
	return PG_GETARG_INT32(argno);
}

/*
 * Raises 22023 unless min < usecs <= max (min <= usecs <= max when
 * min_inclusive).  The message shows the interval as the caller gave it.
 */
void
queue_check_duration(int64 usecs, int64 min, bool min_inclusive, int64 max,
					 const char *argname, const char *queue,
					 const Interval *given)
{
	if ((min_inclusive ? usecs >= min : usecs > min) && usecs <= max)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s \"%s\" is out of range for queue \"%s\"", argname,
					DatumGetCString(DirectFunctionCall1(interval_out,
														IntervalPGetDatum(given))),
					queue),
			 errdetail("It must be %s %s and at most %s.",
					   min_inclusive ? "at least" : "greater than",
					   DatumGetCString(DirectFunctionCall1(interval_out,
														   IntervalPGetDatum(queue_usecs_interval(min)))),
					   DatumGetCString(DirectFunctionCall1(interval_out,
														   IntervalPGetDatum(queue_usecs_interval(max)))))));
}

/* Raises 22023 unless min <= value <= max. */
void
queue_check_count(int32 value, int32 min, int32 max, const char *argname,
				  const char *queue)
{
	if (value >= min && value <= max)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s %d is out of range for queue \"%s\"", argname, value, queue),
			 errdetail("It must be between %d and %d.", min, max)));
}

/* t + usecs, or 22023 when that leaves the range of timestamptz. */
TimestampTz
queue_time_plus(TimestampTz t, int64 usecs, const char *argname,
				const char *queue)
{
	TimestampTz result;

	if (pg_add_s64_overflow(t, usecs, &result) || !IS_VALID_TIMESTAMP(result))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is too large for queue \"%s\"", argname, queue),
				 errdetail("The resulting time would be past the end of timestamp range.")));
	return result;
}

/* A duration in microseconds as an interval of days and time. */
Interval *
queue_usecs_interval(int64 usecs)
{
	Interval   *result = palloc0(sizeof(Interval));

	result->day = (int32) (usecs / USECS_PER_DAY);
	result->time = usecs % USECS_PER_DAY;
	return result;
}
