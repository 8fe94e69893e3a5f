/*-------------------------------------------------------------------------
 *
 * admin.c
 *		queue_create, queue_drop, queue_clear.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_create);
PG_FUNCTION_INFO_V1(queue_drop);
PG_FUNCTION_INFO_V1(queue_clear);
PG_FUNCTION_INFO_V1(queue_alter);

/*
 * Inserts a queue row; returns its id, or 0 if the name is taken (also by
 * a concurrent transaction that then committed).
 */
static int32
insert_queue(const char *name, Datum visibility_timeout, Datum message_ttl,
			 bool has_ttl, int32 max_dequeue_count, int32 max_message_size,
			 int32 poison_queue_id, bool is_poison, TimestampTz now)
{
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	bool		isnull;

	values[0] = CStringGetTextDatum(name);
	values[1] = visibility_timeout;
	values[2] = message_ttl;
	if (!has_ttl)
		nulls[2] = 'n';
	values[3] = Int32GetDatum(max_dequeue_count);
	if (max_dequeue_count == 0)
		nulls[3] = 'n';
	values[4] = Int32GetDatum(max_message_size);
	values[5] = Int32GetDatum(poison_queue_id);
	if (poison_queue_id == 0)
		nulls[5] = 'n';
	values[6] = BoolGetDatum(is_poison);
	values[7] = TimestampTzGetDatum(now);

	if (queue_plan_run(PLAN_QUEUE_INSERT, values, nulls) == 0)
		return 0;
	return DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
									   SPI_tuptable->tupdesc, 1, &isnull));
}

static void
report_queue_exists(const char *name)
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
static int32
poison_queue_for(const char *name, const char *poison_name,
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

	poison_id = insert_queue(poison_name, visibility_timeout, (Datum) 0, false,
							 0, max_message_size, 0, true, now);
	if (poison_id == 0)
		report_queue_exists(poison_name);
	return poison_id;
}

/*
 * "<name>-poison" into poison_name, or 22023 if it would be longer than a
 * queue name may be.
 */
static void
poison_name_of(const char *name, char *poison_name, size_t size)
{
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
 * queue_create(queue, visibility_timeout, message_ttl, max_dequeue_count,
 *				max_message_size)
 */
Datum
queue_create(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		visibility_timeout;
	bool		has_ttl = !PG_ARGISNULL(2);
	int32		max_dequeue_count = 0;
	int32		max_message_size;
	char		poison_name[QUEUE_NAME_MAX_LEN + sizeof(QUEUE_POISON_SUFFIX)];
	StorageSession session;
	TimestampTz now;
	int32		poison_id = 0;

	visibility_timeout = queue_duration_arg(fcinfo, 1, "visibility_timeout", name);
	queue_check_duration(visibility_timeout, 0, false, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(1));

	if (has_ttl)
	{
		int64		ttl = queue_interval_usecs(PG_GETARG_INTERVAL_P(2),
											   "message_ttl", name);

		if (ttl <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("message_ttl \"%s\" is out of range for queue \"%s\"",
							DatumGetCString(DirectFunctionCall1(interval_out,
																PG_GETARG_DATUM(2))),
							name),
					 errdetail("It must be greater than 0."),
					 errhint("Use NULL for messages that never expire.")));
	}

	if (!PG_ARGISNULL(3))
	{
		max_dequeue_count = PG_GETARG_INT32(3);
		queue_check_count(max_dequeue_count, 1, PG_INT32_MAX,
						  "max_dequeue_count", name);
	}

	max_message_size = queue_count_arg(fcinfo, 4, "max_message_size", name,
									   1, QUEUE_MAX_MESSAGE_SIZE);

	if (max_dequeue_count > 0)
		poison_name_of(name, poison_name, sizeof(poison_name));

	queue_storage_begin_write(&session, "queue_create()");
	queue_require_permission(0, "*", QUEUE_PERM_MANAGE);
	now = GetCurrentTimestamp();

	if (max_dequeue_count > 0)
		poison_id = poison_queue_for(name, poison_name, PG_GETARG_DATUM(1),
									 max_message_size, now);

	if (insert_queue(name, PG_GETARG_DATUM(1), PG_GETARG_DATUM(2), has_ttl,
					 max_dequeue_count, max_message_size, poison_id, false,
					 now) == 0)
		report_queue_exists(name);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}

/*
 * queue_drop(queue): the queue, its messages and its counters.  Its poison
 * queue stays.  A poison queue cannot be dropped while its parent lives.
 */
Datum
queue_drop(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		queue_id;

	queue_storage_begin_write(&session, "queue_drop()");
	queue_open(name, AccessExclusiveLock, QUEUE_PERM_MANAGE, &queue);
	queue_id = Int32GetDatum(queue.queue_id);

	if (queue.is_poison && queue_plan_run(PLAN_QUEUE_PARENT, &queue_id, NULL) > 0)
	{
		bool		isnull;
		char	   *parent = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
															   SPI_tuptable->tupdesc,
															   1, &isnull));

		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop queue \"%s\" because queue \"%s\" uses it as its poison queue",
						name, parent),
				 errhint("Drop queue \"%s\" first, or empty this one with queue_clear().",
						 parent)));
	}

	queue_plan_run(PLAN_MESSAGES_DELETE_ALL, &queue_id, NULL);
	queue_plan_run(PLAN_COUNTERS_DELETE, &queue_id, NULL);
	queue_counters_forget(DatumGetInt32(queue_id));
	queue_plan_run(PLAN_GRANTS_DELETE_QUEUE, &queue_id, NULL);
	queue_plan_run(PLAN_QUEUE_DELETE, &queue_id, NULL);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}

/* queue_clear(queue): deletes every message of the queue, returns how many. */
Datum
queue_clear(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		queue_id;
	uint64		deleted;

	queue_storage_begin_write(&session, "queue_clear()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	queue_id = Int32GetDatum(queue.queue_id);
	deleted = queue_plan_run(PLAN_MESSAGES_DELETE_ALL, &queue_id, NULL);
	queue_storage_end(&session);

	PG_RETURN_INT64((int64) deleted);
}

/*
 * queue_alter(queue, visibility_timeout, message_ttl, max_dequeue_count,
 *			   max_message_size): changes the settings given (NULL: unchanged),
 * keeping the messages.  message_ttl '-1 second' makes new messages never
 * expire; max_dequeue_count 0 stops poison routing (the poison queue
 * stays), a positive one starts it, creating or taking over
 * <queue>-poison.  The new settings apply to what happens from now on: a
 * stored message keeps its expiry.  A new max_dequeue_count applies to the
 * stored messages too: those handed out that many times already go to the
 * poison queue when their lease ends, and are marked so here (last_lease,
 * one pass over the queue's messages).
 */
Datum
queue_alter(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	bool		set_ttl = !PG_ARGISNULL(2);
	bool		set_poison = !PG_ARGISNULL(3);

	queue_storage_begin_write(&session, "queue_alter()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	values[0] = Int32GetDatum(queue.queue_id);

	values[1] = PG_GETARG_DATUM(1);
	if (PG_ARGISNULL(1))
		nulls[1] = 'n';
	else
		queue_check_duration(queue_interval_usecs(PG_GETARG_INTERVAL_P(1),
												  "visibility_timeout", name),
							 0, false, QUEUE_MAX_VISIBILITY,
							 "visibility_timeout", name, PG_GETARG_INTERVAL_P(1));

	values[2] = PG_GETARG_DATUM(2);
	nulls[2] = 'n';
	if (set_ttl)
	{
		int64		ttl = queue_interval_usecs(PG_GETARG_INTERVAL_P(2), "message_ttl", name);

		if (ttl != QUEUE_TTL_NEVER_MARKER && ttl <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("message_ttl is out of range for queue \"%s\"", name),
					 errdetail("It must be greater than 0."),
					 errhint("Use '-1 second' for messages that never expire.")));
		if (ttl != QUEUE_TTL_NEVER_MARKER)
			nulls[2] = ' ';
	}

	values[3] = (Datum) 0;
	values[7] = (Datum) 0;
	nulls[3] = nulls[7] = 'n';
	if (set_poison)
	{
		int32		max_dequeue_count = PG_GETARG_INT32(3);

		queue_check_count(max_dequeue_count, 0, PG_INT32_MAX, "max_dequeue_count", name);
		if (max_dequeue_count > 0)
		{
			char		poison_name[QUEUE_NAME_MAX_LEN + sizeof(QUEUE_POISON_SUFFIX)];
			int32		poison_id = queue.poison_queue_id;

			if (queue.is_poison)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("queue \"%s\" is a poison queue: it has no poison queue of its own", name)));
			if (poison_id == 0)
			{
				poison_name_of(name, poison_name, sizeof(poison_name));
				poison_id = poison_queue_for(name, poison_name,
											 PG_ARGISNULL(1) ?
											 IntervalPGetDatum(queue_usecs_interval(queue.visibility_timeout)) :
											 PG_GETARG_DATUM(1),
											 queue.max_message_size, GetCurrentTimestamp());
			}
			values[3] = Int32GetDatum(max_dequeue_count);
			values[7] = Int32GetDatum(poison_id);
			nulls[3] = nulls[7] = ' ';
		}
	}

	values[4] = PG_GETARG_DATUM(4);
	if (PG_ARGISNULL(4))
		nulls[4] = 'n';
	else
		queue_check_count(PG_GETARG_INT32(4), 1, QUEUE_MAX_MESSAGE_SIZE,
						  "max_message_size", name);

	values[5] = BoolGetDatum(set_ttl);
	values[6] = BoolGetDatum(set_poison);
	queue_plan_run(PLAN_QUEUE_ALTER, values, nulls);
	if (set_poison)
	{
		/* the queue's messages on their last lease under the new limit */
		Datum		mark_values[2] = {values[0], values[3]};
		char		mark_nulls[2] = {' ', nulls[3]};

		queue_plan_run(PLAN_MESSAGES_MARK_LAST_LEASE, mark_values, mark_nulls);
	}

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
