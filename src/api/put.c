/*-------------------------------------------------------------------------
 *
 * put.c
 *		queue_put and queue_put_batch: adding messages.
 *
 * Both check their arguments and hand the messages to
 * queue_insert_messages (messages/insert.c): a single put is a batch of
 * one.  A batch is all or nothing, and its receipts come back in the order
 * of its bodies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "api/put.h"
#include "queue_storage/queue_storage.h"

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_put);
PG_FUNCTION_INFO_V1(queue_put_batch);

/*
 * The visibility_timeout and ttl arguments, argno and argno + 1 (2 and 3
 * of queue_put and queue_put_batch), given for the object name of kind
 * ("queue", or "topic" for queue_publish).
 */
PutTiming
queue_put_timing_args(FunctionCallInfo fcinfo, int argno, const char *kind,
					  const char *name)
{
	PutTiming	timing;

	/* NULL (the default from 1.6 on): the queue's delay */
	timing.delay_given = !PG_ARGISNULL(argno);
	timing.delay = 0;
	if (timing.delay_given)
	{
		timing.delay = queue_interval_usecs_of(PG_GETARG_INTERVAL_P(argno), "visibility_timeout",
											   kind, name);
		queue_check_duration_of(timing.delay, 0, true, QUEUE_MAX_VISIBILITY,
								"visibility_timeout", kind, name, PG_GETARG_INTERVAL_P(argno));
	}

	timing.ttl_given = !PG_ARGISNULL(argno + 1);
	timing.ttl = -1;
	if (timing.ttl_given)
	{
		timing.ttl = queue_interval_usecs_of(PG_GETARG_INTERVAL_P(argno + 1), "ttl", kind, name);
		if (timing.ttl == QUEUE_TTL_NEVER_MARKER)
			timing.ttl = -1;
		else if (timing.ttl <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ttl \"%s\" is out of range for %s \"%s\"",
							DatumGetCString(DirectFunctionCall1(interval_out,
																PG_GETARG_DATUM(argno + 1))),
							kind, name),
					 errdetail("It must be greater than 0, or -1 second for a message that never expires.")));
	}
	return timing;
}

/*
 * A group_id or deduplication_id (argname) given for the object name of
 * kind: 1 to QUEUE_MAX_ID_LEN characters; position is its place in a batch
 * (from 1), or 0.
 */
static void
queue_check_put_id(Datum id, const char *argname, const char *kind, const char *name,
				   int position)
{
	text	   *value = DatumGetTextPP(id);
	int			length = pg_mbstrlen_with_len(VARDATA_ANY(value),
											  VARSIZE_ANY_EXHDR(value));

	if (length >= 1 && length <= QUEUE_MAX_ID_LEN)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 position == 0 ?
			 errmsg("%s must have 1 to %d characters for %s \"%s\"",
					argname, QUEUE_MAX_ID_LEN, kind, name) :
			 errmsg("%s %d of the batch must have 1 to %d characters for %s \"%s\"",
					argname, position, QUEUE_MAX_ID_LEN, kind, name)));
}

/* A priority given for the object name of kind: -100 to 100. */
static int16
queue_check_priority(int32 priority, const char *kind, const char *name)
{
	queue_check_count_of(priority, QUEUE_MIN_PRIORITY, QUEUE_MAX_PRIORITY,
						 "priority", kind, name);
	return (int16) priority;
}

/*
 * The group_id (argument argno), deduplication_id (argno + 1) and priority
 * (argno + 2) of one message, checked into one, and ordering set to them.
 */
void
queue_put_one_args(FunctionCallInfo fcinfo, int argno, const char *kind, const char *name,
				   PutOne *one, PutOrdering *ordering)
{
	one->group_id = (Datum) 0;
	one->group_null = PG_ARGISNULL(argno);
	if (!one->group_null)
	{
		one->group_id = PG_GETARG_DATUM(argno);
		queue_check_put_id(one->group_id, "group_id", kind, name, 0);
	}
	one->deduplication_id = (Datum) 0;
	one->deduplication_null = PG_ARGISNULL(argno + 1);
	if (!one->deduplication_null)
	{
		one->deduplication_id = PG_GETARG_DATUM(argno + 1);
		queue_check_put_id(one->deduplication_id, "deduplication_id", kind, name, 0);
	}
	queue_require_arg_of(fcinfo, argno + 2, "priority", kind, name);
	one->priority = queue_check_priority(PG_GETARG_INT32(argno + 2), kind, name);

	ordering->group_ids = &one->group_id;
	ordering->group_nulls = &one->group_null;
	if (!one->deduplication_null)
	{
		ordering->deduplication_ids = &one->deduplication_id;
		ordering->deduplication_nulls = &one->deduplication_null;
	}
	ordering->priorities = &one->priority;
}

/* queue_put(queue, body, visibility_timeout, ttl, headers) */
Datum
queue_put(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	PutTiming	timing;
	bool		has_headers = !PG_ARGISNULL(4);
	Datum		body;
	Datum		headers = (Datum) 0;
	bool		no_null = false;
	StorageSession session;
	QueueInfo	queue;
	PutReceipt *receipt;
	Datum		result;
	PutOrdering ordering = {0};
	PutOne		one;

	queue_require_arg(fcinfo, 1, "body", name);
	body = PG_GETARG_DATUM(1);
	timing = queue_put_timing_args(fcinfo, 2, "queue", name);
	if (has_headers)
	{
		headers = PG_GETARG_DATUM(4);
		queue_check_headers(headers, name);
	}

	/* group_id, deduplication_id, priority: from 1.3 on */
	if (PG_NARGS() > 7)
		queue_put_one_args(fcinfo, 5, "queue", name, &one, &ordering);

	queue_storage_begin_write(&session, "queue_put()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);
	queue_check_size(&queue, body, headers, has_headers, 0);

	receipt = queue_insert_messages(&queue, &timing, &body,
									has_headers ? &headers : NULL,
									&no_null, &ordering, 1);
	result = queue_receipt_datum(fcinfo, receipt->values, receipt->nulls);

	queue_storage_end(&session);
	PG_RETURN_DATUM(result);
}

/* A one-dimensional array argument's elements; 22023 on other shapes. */
static int
array_arg(FunctionCallInfo fcinfo, int argno, Oid elemtype, const char *argname,
		  const char *queue, Datum **elems, bool **nulls)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(argno);
	int			count;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array for queue \"%s\"",
						argname, queue)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(array, elemtype, typlen, typbyval, typalign,
					  elems, nulls, &count);
	return count;
}

/*
 * An array argument with one element (or NULL) per body, as headers,
 * group_ids, deduplication_ids and priorities are; 22023 otherwise.
 */
static void
per_body_array(FunctionCallInfo fcinfo, int argno, Oid elemtype, const char *argname,
			   const char *queue, int count, Datum **elems, bool **nulls)
{
	int			given = array_arg(fcinfo, argno, elemtype, argname, queue, elems, nulls);

	if (given != count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d %s given for %d bodies for queue \"%s\"",
						given, argname, count, queue),
				 errdetail("%s must be NULL or have one element (or NULL) per body.", argname)));
}

/*
 * queue_put_batch(queue, bodies, visibility_timeout, ttl, headers
 * [, group_ids, deduplication_ids, priorities])
 */
Datum
queue_put_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	PutTiming	timing;
	bool		has_headers = !PG_ARGISNULL(4);
	Datum	   *bodies;
	bool	   *body_nulls;
	Datum	   *headers = NULL;
	bool	   *header_nulls = NULL;
	int			count;
	int			i;
	StorageSession session;
	QueueInfo	queue;
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	PutReceipt *receipts;
	PutOrdering ordering = {0};

	queue_require_arg(fcinfo, 1, "bodies", name);
	count = array_arg(fcinfo, 1, TEXTOID, "bodies", name, &bodies, &body_nulls);
	queue_check_count(count, 1, QUEUE_MAX_BATCH, "number of bodies", name);
	for (i = 0; i < count; i++)
		if (body_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("body %d of the batch must not be null for queue \"%s\"",
							i + 1, name)));

	timing = queue_put_timing_args(fcinfo, 2, "queue", name);

	if (has_headers)
	{
		per_body_array(fcinfo, 4, JSONBOID, "headers", name, count,
					   &headers, &header_nulls);
		for (i = 0; i < count; i++)
			if (!header_nulls[i])
				queue_check_headers(headers[i], name);
	}

	/* group_ids, deduplication_ids, priorities: from 1.3 on */
	if (PG_NARGS() > 7)
	{
		if (!PG_ARGISNULL(5))
		{
			per_body_array(fcinfo, 5, TEXTOID, "group_ids", name, count,
						   &ordering.group_ids, &ordering.group_nulls);
			for (i = 0; i < count; i++)
				if (!ordering.group_nulls[i])
					queue_check_put_id(ordering.group_ids[i], "group_id", "queue", name, i + 1);
		}
		if (!PG_ARGISNULL(6))
		{
			per_body_array(fcinfo, 6, TEXTOID, "deduplication_ids", name, count,
						   &ordering.deduplication_ids, &ordering.deduplication_nulls);
			for (i = 0; i < count; i++)
				if (!ordering.deduplication_nulls[i])
					queue_check_put_id(ordering.deduplication_ids[i], "deduplication_id", "queue", name, i + 1);
		}
		if (!PG_ARGISNULL(7))
		{
			Datum	   *priorities;
			bool	   *priority_nulls;

			per_body_array(fcinfo, 7, INT4OID, "priorities", name, count,
						   &priorities, &priority_nulls);
			ordering.priorities = palloc(sizeof(int16) * count);
			for (i = 0; i < count; i++)
				ordering.priorities[i] = priority_nulls[i] ? 0 :
					queue_check_priority(DatumGetInt32(priorities[i]), "queue", name);
		}
	}

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_put_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);

	for (i = 0; i < count; i++)
		queue_check_size(&queue, bodies[i], has_headers ? headers[i] : (Datum) 0,
				   has_headers && !header_nulls[i], i + 1);

	receipts = queue_insert_messages(&queue, &timing, bodies,
									 has_headers ? headers : NULL, header_nulls,
									 &ordering, count);
	for (i = 0; i < count; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 receipts[i].values, receipts[i].nulls);

	queue_storage_end(&session);
	return (Datum) 0;
}
