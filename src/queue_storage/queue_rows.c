/*-------------------------------------------------------------------------
 *
 * queue_rows.c
 *		Writing queue rows: a new queue, and the poison queue it routes to.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "utils/builtins.h"

/*
 * Inserts a queue row; returns its id, or 0 if the name is taken by a
 * queue (also by a concurrent transaction that then committed).  A topic
 * of that name is 42710.
 */
int32
queue_insert_row(const char *name, Datum visibility_timeout, Datum message_ttl,
				 bool has_ttl, int32 max_dequeue_count, int32 max_message_size,
				 int32 poison_queue_id, bool is_poison, TimestampTz now)
{
	PlanArgs	args;
	bool		isnull;

	if (queue_storage_has_topics())
	{
		queue_lock_namespace(false);
		queue_plan_begin(&args, PLAN_TOPIC_NAMED);
		queue_plan_set(&args, "name", CStringGetTextDatum(name));
		if (queue_plan_run_latest(&args) > 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("topic \"%s\" already exists", name),
					 errdetail("Queues and topics share one namespace.")));
	}

	queue_plan_begin(&args, PLAN_QUEUE_INSERT);
	queue_plan_set(&args, "name", CStringGetTextDatum(name));
	queue_plan_set(&args, "visibility_timeout", visibility_timeout);
	if (has_ttl)
		queue_plan_set(&args, "message_ttl", message_ttl);
	else
		queue_plan_set_null(&args, "message_ttl");
	if (max_dequeue_count == 0)
		queue_plan_set_null(&args, "max_dequeue_count");
	else
		queue_plan_set(&args, "max_dequeue_count", Int32GetDatum(max_dequeue_count));
	queue_plan_set(&args, "max_message_size", Int32GetDatum(max_message_size));
	if (poison_queue_id == 0)
		queue_plan_set_null(&args, "poison_queue_id");
	else
		queue_plan_set(&args, "poison_queue_id", Int32GetDatum(poison_queue_id));
	queue_plan_set(&args, "is_poison", BoolGetDatum(is_poison));
	queue_plan_set(&args, "created_at", TimestampTzGetDatum(now));

	if (queue_plan_run(&args) == 0)
		return 0;
	return DatumGetInt32(queue_row_value(SPI_tuptable, 0, "queue_id", &isnull));
}

void
queue_report_exists(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("queue \"%s\" already exists", name)));
}

/*
 * The poison queue of a new queue: a new one, or an existing poison queue
 * of that name whose parent was dropped (it is taken over, messages and
 * all).  A regular queue of that name is in the way: 42710.
 */
int32
queue_poison_queue_for(const char *name, const char *poison_name,
				 Datum visibility_timeout, int32 max_message_size,
				 TimestampTz now)
{
	QueueInfo	existing;
	int32		poison_id;

	if (queue_find(poison_name, &existing))
	{
		if (!existing.is_poison)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("queue \"%s\" already exists", poison_name),
					 errdetail("Queue \"%s\" needs that name for its poison queue.", name),
					 errhint("Drop queue \"%s\", or create \"%s\" with max_dequeue_count NULL.",
							 poison_name, name)));
		queue_open(poison_name, AccessShareLock, 0, &existing);
		return existing.queue_id;
	}

	poison_id = queue_insert_row(poison_name, visibility_timeout, (Datum) 0, false,
							 0, max_message_size, 0, true, now);
	if (poison_id == 0)
		queue_report_exists(poison_name);
	return poison_id;
}

/*
 * "<name>-poison" into poison_name ("<stem>-poison.fifo" for a FIFO queue's
 * "<stem>.fifo", as SQS wants a FIFO queue's dead-letter queue FIFO too),
 * or 22023 if it would be longer than a queue name may be.
 */
void
queue_poison_name_of(const char *name, char *poison_name, size_t size)
{
	if (queue_name_is_fifo(name))
		snprintf(poison_name, size, "%.*s%s%s",
				 (int) (strlen(name) - strlen(QUEUE_FIFO_SUFFIX)), name,
				 QUEUE_POISON_SUFFIX, QUEUE_FIFO_SUFFIX);
	else
		snprintf(poison_name, size, "%s%s", name, QUEUE_POISON_SUFFIX);
	if (strlen(poison_name) > QUEUE_NAME_MAX_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue name \"%s\" is too long for a queue with a poison queue", name),
				 errdetail("Its poison queue \"%s\" must fit in %d characters too.",
						   poison_name, QUEUE_NAME_MAX_LEN),
				 errhint("Use a shorter name, or max_dequeue_count NULL for no poison queue.")));
}

/*
 * Sets the deduplication window of queue_id to the interval argument argno
 * of fcinfo (not NULL): more than 0, at most 7 days.
 */
void
queue_set_deduplication_window(int32 queue_id, FunctionCallInfo fcinfo, int argno,
							   const char *name)
{
	PlanArgs	args;

	queue_require_arg(fcinfo, argno, "deduplication_window", name);
	queue_check_duration(queue_interval_usecs(PG_GETARG_INTERVAL_P(argno),
											  "deduplication_window", name),
						 0, false, QUEUE_MAX_DEDUPLICATION_WINDOW,
						 "deduplication_window", name, PG_GETARG_INTERVAL_P(argno));
	queue_plan_begin(&args, PLAN_QUEUE_SET_DEDUPLICATION_WINDOW);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	queue_plan_set(&args, "deduplication_window", PG_GETARG_DATUM(argno));
	queue_plan_run(&args);
}

/*
 * Argument argno of fcinfo, a duration of 0 to 7 days (22023 otherwise),
 * as the parameter of args named argname; NULL stays NULL.
 */
void
queue_plan_set_duration_arg(PlanArgs *args, FunctionCallInfo fcinfo, int argno,
							const char *argname, const char *queue)
{
	if (!PG_ARGISNULL(argno))
		queue_check_duration(queue_interval_usecs(PG_GETARG_INTERVAL_P(argno), argname, queue),
							 0, true, QUEUE_MAX_VISIBILITY, argname, queue,
							 PG_GETARG_INTERVAL_P(argno));
	queue_plan_set_arg(args, argname, fcinfo, argno);
}

/*
 * The retry policy of 1.8 at arguments first (retry_delay), first + 1
 * (retry_backoff) and first + 2 (retry_delay_max) of queue_create
 * (creating: as given, a NULL cap none) or queue_alter (each NULL to leave
 * it), checked and stored.
 */
void
queue_set_retry_policy(int32 queue_id, FunctionCallInfo fcinfo, int first,
					   const char *name, bool creating)
{
	PlanArgs	args;

	if (creating)
	{
		queue_require_arg(fcinfo, first, "retry_delay", name);
		queue_require_arg(fcinfo, first + 1, "retry_backoff", name);
	}
	else if (PG_ARGISNULL(first) && PG_ARGISNULL(first + 1) && PG_ARGISNULL(first + 2))
		return;

	queue_plan_begin(&args, PLAN_QUEUE_SET_RETRIES);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	queue_plan_set_duration_arg(&args, fcinfo, first, "retry_delay", name);
	queue_plan_set_arg(&args, "retry_backoff", fcinfo, first + 1);
	queue_plan_set(&args, "set_retry_delay_max",
				   BoolGetDatum(creating || !PG_ARGISNULL(first + 2)));
	queue_plan_set_duration_arg(&args, fcinfo, first + 2, "retry_delay_max", name);
	queue_plan_run(&args);
}

/*
 * Sets the retention of queue_id to the interval argument argno of fcinfo
 * (not NULL): at most 365 days; 0 keeps nothing, stored as NULL.  It is
 * stored as days and time, a month counted as 30 days (as the check counts
 * it), so that the worker's removal, which counts a day as 24 hours, keeps
 * a message exactly as long as the check allowed.
 */
void
queue_set_retention(int32 queue_id, FunctionCallInfo fcinfo, int argno, const char *name)
{
	PlanArgs	args;
	int64		retention = queue_interval_usecs(PG_GETARG_INTERVAL_P(argno),
												 "retention", name);

	queue_check_duration(retention, 0, true, QUEUE_MAX_RETENTION, "retention", name,
						 PG_GETARG_INTERVAL_P(argno));
	queue_plan_begin(&args, PLAN_QUEUE_SET_RETENTION);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	if (retention == 0)
		queue_plan_set_null(&args, "retention");
	else
		queue_plan_set(&args, "retention", IntervalPGetDatum(queue_usecs_interval(retention)));
	queue_plan_run(&args);
}
