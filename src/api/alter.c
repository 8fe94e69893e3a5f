/*-------------------------------------------------------------------------
 *
 * alter.c
 *		queue_alter.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(queue_alter);

/*
 * A JSON object whose values are strings (null: remove the key), as
 * queue_alter's attributes and tags are; 22023 otherwise.
 */
static void
check_strings_object(Datum value, const char *argname, const char *queue)
{
	Jsonb	   *jsonb = DatumGetJsonbP(value);
	JsonbIterator *it;
	JsonbIteratorToken token;
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(jsonb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a JSON object for queue \"%s\"", argname, queue),
				 errhint("Write it as {\"name\": \"value\", ...}; a null value removes the name.")));
	it = JsonbIteratorInit(&jsonb->root);
	while ((token = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (token == WJB_VALUE && v.type != jbvString && v.type != jbvNull)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the values of %s must be strings for queue \"%s\"", argname, queue),
					 errhint("Write numbers and booleans as strings; a null value removes the name.")));
}

/*
 * The queue named as the poison queue of queue: another queue, on which
 * the caller may send.
 */
static int32
named_poison_queue(const QueueInfo *queue, const char *poison_name)
{
	QueueInfo	poison;

	queue_open(poison_name, AccessShareLock, QUEUE_PERM_SEND, &poison);
	if (poison.queue_id == queue->queue_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue \"%s\" cannot be its own poison queue", queue->name)));
	return poison.queue_id;
}

/*
 * queue_alter's arguments of 1.6: delay (6), attributes (8) and tags (9),
 * each NULL to leave it.
 */
static void
set_attributes(FunctionCallInfo fcinfo, const QueueInfo *queue)
{
	PlanArgs	args;

	queue_plan_begin(&args, PLAN_QUEUE_SET_ATTRIBUTES);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set_duration_arg(&args, fcinfo, 6, "delay", queue->name);
	if (!PG_ARGISNULL(8))
		check_strings_object(PG_GETARG_DATUM(8), "attributes", queue->name);
	queue_plan_set_arg(&args, "attributes", fcinfo, 8);
	if (!PG_ARGISNULL(9))
		check_strings_object(PG_GETARG_DATUM(9), "tags", queue->name);
	queue_plan_set_arg(&args, "tags", fcinfo, 9);
	queue_plan_run(&args);
}

/*
 * queue_alter(queue, visibility_timeout, message_ttl, max_dequeue_count,
 *			   max_message_size, deduplication_window, delay, poison_queue,
 *			   attributes, tags, retry_delay, retry_backoff, retry_delay_max,
 *			   retention):
 * changes the settings given (NULL: unchanged), keeping the messages.
 * message_ttl '-1 second' makes new messages never
 * expire; max_dequeue_count 0 stops poison routing (the poison queue
 * stays), a positive one starts it, into the queue named by poison_queue
 * (any other queue), else the queue's poison queue, else <queue>-poison,
 * created or taken over.  The new settings apply to what happens from now
 * on: a stored message keeps its expiry and visibility.  A new
 * max_dequeue_count applies to the stored messages too: those handed out
 * that many times already go to the poison queue when their lease ends,
 * and are marked so here (last_lease, one pass over the queue's messages).
 * attributes and tags are merged into the queue's (from 1.6 on).  The
 * retry policy (from 1.8 on) applies to the next release.  The retention
 * (from 1.9 on) applies to the messages kept already too: '0' keeps no
 * more, and the worker removes what was kept.
 */
Datum
queue_alter(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;
	bool		set_ttl = !PG_ARGISNULL(2);
	/* from 1.6 on: delay, poison_queue, attributes, tags */
	bool		has_attributes = PG_NARGS() > 9;
	char	   *poison_name = has_attributes && !PG_ARGISNULL(7) ?
		queue_name_arg(fcinfo, 7) : NULL;
	bool		set_poison = !PG_ARGISNULL(3) || poison_name != NULL;
	int32		new_limit = 0;	/* with set_poison: the new dequeue limit */

	queue_storage_begin_write(&session, "queue_alter()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	queue_plan_begin(&args, PLAN_QUEUE_ALTER);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set(&args, "set_ttl", BoolGetDatum(set_ttl));
	queue_plan_set(&args, "set_poison", BoolGetDatum(set_poison));

	if (!PG_ARGISNULL(1))
		queue_check_duration(queue_interval_usecs(PG_GETARG_INTERVAL_P(1),
												  "visibility_timeout", name),
							 0, false, QUEUE_MAX_VISIBILITY,
							 "visibility_timeout", name, PG_GETARG_INTERVAL_P(1));
	queue_plan_set_arg(&args, "visibility_timeout", fcinfo, 1);

	queue_plan_set_null(&args, "message_ttl");
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
			queue_plan_set(&args, "message_ttl", PG_GETARG_DATUM(2));
	}

	queue_plan_set_null(&args, "max_dequeue_count");
	queue_plan_set_null(&args, "poison_queue_id");
	if (set_poison)
	{
		int32		max_dequeue_count = queue.max_dequeue_count;

		if (!PG_ARGISNULL(3))
		{
			max_dequeue_count = PG_GETARG_INT32(3);
			queue_check_count(max_dequeue_count, 0, PG_INT32_MAX, "max_dequeue_count", name);
		}
		if (max_dequeue_count > 0)
		{
			char		default_name[QUEUE_NAME_MAX_LEN + sizeof(QUEUE_POISON_SUFFIX)];
			int32		poison_id = queue.poison_queue_id;

			if (queue.is_poison)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("queue \"%s\" is a poison queue: it has no poison queue of its own", name)));
			if (poison_name != NULL)
				poison_id = named_poison_queue(&queue, poison_name);
			else if (poison_id == 0)
			{
				queue_poison_name_of(name, default_name, sizeof(default_name));
				poison_id = queue_poison_queue_for(name, default_name,
												   PG_ARGISNULL(1) ?
												   IntervalPGetDatum(queue_usecs_interval(queue.visibility_timeout)) :
												   PG_GETARG_DATUM(1),
												   queue.max_message_size, GetCurrentTimestamp());
			}
			queue_plan_set(&args, "max_dequeue_count", Int32GetDatum(max_dequeue_count));
			queue_plan_set(&args, "poison_queue_id", Int32GetDatum(poison_id));
			new_limit = max_dequeue_count;
		}
		else if (poison_name != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a poison queue needs a max_dequeue_count for queue \"%s\"", name),
					 errhint("Give max_dequeue_count, above 0, with poison_queue.")));
	}

	if (!PG_ARGISNULL(4))
		queue_check_count(PG_GETARG_INT32(4), 1, QUEUE_MAX_MESSAGE_SIZE,
						  "max_message_size", name);
	queue_plan_set_arg(&args, "max_message_size", fcinfo, 4);

	queue_plan_run(&args);
	/* from 1.3 on */
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
		queue_set_deduplication_window(queue.queue_id, fcinfo, 5, name);
	if (has_attributes && (!PG_ARGISNULL(6) || !PG_ARGISNULL(8) || !PG_ARGISNULL(9)))
		set_attributes(fcinfo, &queue);
	/* from 1.8 on */
	if (PG_NARGS() > 10)
		queue_set_retry_policy(queue.queue_id, fcinfo, 10, name, false);
	/* from 1.9 on */
	if (PG_NARGS() > 13 && !PG_ARGISNULL(13))
		queue_set_retention(queue.queue_id, fcinfo, 13, name);
	if (set_poison)
	{
		/* the queue's messages on their last lease under the new limit */
		queue_plan_begin(&args, PLAN_MESSAGES_MARK_LAST_LEASE);
		queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
		if (new_limit == 0)
			queue_plan_set_null(&args, "dequeue_limit");
		else
			queue_plan_set(&args, "dequeue_limit", Int32GetDatum(new_limit));
		queue_plan_run(&args);
	}

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
