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
#include "postgres.h"

#include "queue.h"

#include "catalog/pg_type_d.h"
#include "common/int.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/datetime.h"

/* Whether a queue name ends in ".fifo", after at least one character. */
bool
queue_name_is_fifo(const char *name)
{
	size_t		len = strlen(name);
	size_t		suffix = strlen(QUEUE_FIFO_SUFFIX);

	return len > suffix && strcmp(name + len - suffix, QUEUE_FIFO_SUFFIX) == 0;
}

/*
 * Checks a queue name against Amazon SQS's rules: 1 to 80 characters of
 * A-Z, a-z, 0-9, '-' and '_', case-sensitive, the suffix ".fifo" of a FIFO
 * queue counted in.  Every name Azure Queue Storage allows (3 to 63 of
 * a-z, 0-9 and '-') is one of them, so a queue may carry the name of
 * either service.
 */
void
queue_check_name(const char *name)
{
	queue_check_name_of(name, "queue");
}

/* The same for the name of a topic or a schedule (kind), by the same rules. */
void
queue_check_name_of(const char *name, const char *kind)
{
	size_t		len = strlen(name);
	/* the name without ".fifo" */
	size_t		stem = queue_name_is_fifo(name) ? len - strlen(QUEUE_FIFO_SUFFIX) : len;
	bool		bad_length = len < QUEUE_NAME_MIN_LEN || len > QUEUE_NAME_MAX_LEN;

	if (!bad_length &&
		strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == stem)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid %s name \"%s\"", kind, name),
			 bad_length ?
			 errdetail("A %s name is 1 to 80 characters long.", kind) :
			 errdetail("A %s name contains only letters A-Z and a-z, digits, \"-\" and \"_\", and may end in \".fifo\".",
					   kind)));
}

/* The queue name argument: not NULL, and a valid name. */
char *
queue_name_arg(FunctionCallInfo fcinfo, int argno)
{
	return queue_name_arg_of(fcinfo, argno, "queue");
}

/* The same for the name of a topic or a schedule (kind). */
char *
queue_name_arg_of(FunctionCallInfo fcinfo, int argno, const char *kind)
{
	char	   *name;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s name must not be null", kind)));
	name = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	queue_check_name_of(name, kind);
	return name;
}

/* Raises 22004 if a required argument is NULL. */
void
queue_require_arg(FunctionCallInfo fcinfo, int argno, const char *argname,
				  const char *queue)
{
	queue_require_arg_of(fcinfo, argno, argname, "queue", queue);
}

/* The same for an argument given for an object of another kind (a topic). */
void
queue_require_arg_of(FunctionCallInfo fcinfo, int argno, const char *argname,
					 const char *kind, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null for %s \"%s\"", argname, kind, name)));
}

/* An interval as microseconds; 22023 if it does not fit. */
int64
queue_interval_usecs(const Interval *interval, const char *argname,
					 const char *queue)
{
	return queue_interval_usecs_of(interval, argname, "queue", queue);
}

int64
queue_interval_usecs_of(const Interval *interval, const char *argname,
						const char *kind, const char *name)
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
				 errmsg("%s is out of range for %s \"%s\"", argname, kind, name)));
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
 * Raises 22023 unless the bigint argument argno of fcinfo, a count of
 * messages to move, is NULL (all of them) or at least 1.
 */
void
queue_check_max_messages_arg(FunctionCallInfo fcinfo, int argno, const char *queue)
{
	if (!PG_ARGISNULL(argno) && PG_GETARG_INT64(argno) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_messages " INT64_FORMAT " is out of range for queue \"%s\"",
						PG_GETARG_INT64(argno), queue),
				 errdetail("It must be at least 1, or NULL for all.")));
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
	queue_check_duration_of(usecs, min, min_inclusive, max, argname,
							"queue", queue, given);
}

void
queue_check_duration_of(int64 usecs, int64 min, bool min_inclusive, int64 max,
						const char *argname, const char *kind,
						const char *name, const Interval *given)
{
	if ((min_inclusive ? usecs >= min : usecs > min) && usecs <= max)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s \"%s\" is out of range for %s \"%s\"", argname,
					DatumGetCString(DirectFunctionCall1(interval_out,
														IntervalPGetDatum(given))),
					kind, name),
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
	queue_check_count_of(value, min, max, argname, "queue", queue);
}

void
queue_check_count_of(int32 value, int32 min, int32 max, const char *argname,
					 const char *kind, const char *name)
{
	if (value >= min && value <= max)
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s %d is out of range for %s \"%s\"", argname, value, kind, name),
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

/* Orders entries by message id, then by position. */
static int
compare_entries(const void *a, const void *b)
{
	const QueueBatchEntry *x = (const QueueBatchEntry *) a;
	const QueueBatchEntry *y = (const QueueBatchEntry *) b;

	if (x->message_id != y->message_id)
		return x->message_id < y->message_id ? -1 : 1;
	return x->position - y->position;
}

/*
 * Arguments 1 (message_ids) and 2 (pop_receipts) of the batch functions:
 * not NULL, one-dimensional, as long as each other, min_count (0 or 1) to
 * 1000 entries.
 * Fills batch with them, and with the entries of the ids that are not NULL
 * in the order of their ids (then of their positions): a batch acts on its
 * messages in that order, as a statement through the primary key would, so
 * that two batches that must wait for each other's messages wait in the
 * same order and cannot deadlock.
 */
void
queue_batch_arg(FunctionCallInfo fcinfo, const char *name, int min_count,
				QueueBatch *batch)
{
	ArrayType  *ids;
	ArrayType  *receipts;
	int			id_count;
	int			receipt_count;
	int			i;

	queue_require_arg(fcinfo, 1, "message_ids", name);
	queue_require_arg(fcinfo, 2, "pop_receipts", name);
	ids = PG_GETARG_ARRAYTYPE_P(1);
	receipts = PG_GETARG_ARRAYTYPE_P(2);
	if (ARR_NDIM(ids) > 1 || ARR_NDIM(receipts) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("message_ids and pop_receipts must be one-dimensional arrays for queue \"%s\"",
						name)));
	id_count = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	receipt_count = ArrayGetNItems(ARR_NDIM(receipts), ARR_DIMS(receipts));
	if (id_count != receipt_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d message ids and %d pop receipts given for queue \"%s\"",
						id_count, receipt_count, name),
				 errdetail("Each message id needs the pop receipt at the same position.")));
	queue_check_count(id_count, min_count, QUEUE_MAX_BATCH, "number of messages", name);

	deconstruct_array(ids, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &batch->ids, &batch->id_nulls,
					  &batch->count);
	deconstruct_array(receipts, UUIDOID, UUID_LEN, false, TYPALIGN_CHAR,
					  &batch->receipts, &batch->receipt_nulls, &receipt_count);

	batch->entries = palloc(sizeof(QueueBatchEntry) * batch->count);
	batch->entry_count = 0;
	for (i = 0; i < batch->count; i++)
	{
		if (batch->id_nulls[i])
			continue;
		batch->entries[batch->entry_count].message_id = DatumGetInt64(batch->ids[i]);
		batch->entries[batch->entry_count].position = i;
		batch->entry_count++;
	}
	qsort(batch->entries, batch->entry_count, sizeof(QueueBatchEntry),
		  compare_entries);
}

/* The receipt of the entry at position, or NULL. */
const pg_uuid_t *
queue_batch_receipt(const QueueBatch *batch, int position)
{
	return batch->receipt_nulls[position] ? NULL :
		DatumGetUUIDP(batch->receipts[position]);
}
