/*-------------------------------------------------------------------------
 *
 * put.c
 *		queue_put and queue_put_batch: adding messages.
 *
 * Both insert the rows on the messages table directly (messages/table.c
 * says why), message ids drawn in input order: a single put is a batch of
 * one.  A batch is all or nothing, and its receipts come back in the order
 * of its bodies.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "shmem/shmem.h"
#include "storage/storage.h"
#include "wait/wait.h"

#include "access/detoast.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_put);
PG_FUNCTION_INFO_V1(queue_put_batch);

/* The arguments queue_put and queue_put_batch share, checked. */
typedef struct PutTiming
{
	int64		delay;			/* initial invisibility */
	int64		ttl;			/* -1: never expires */
	bool		ttl_given;		/* false: the queue's message_ttl */
} PutTiming;

/* Arguments 2 (visibility_timeout) and 3 (ttl) of both functions. */
static PutTiming
put_timing_args(FunctionCallInfo fcinfo, const char *name)
{
	PutTiming	timing;

	timing.delay = queue_duration_arg(fcinfo, 2, "visibility_timeout", name);
	queue_check_duration(timing.delay, 0, true, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(2));

	timing.ttl_given = !PG_ARGISNULL(3);
	timing.ttl = -1;
	if (timing.ttl_given)
	{
		timing.ttl = queue_interval_usecs(PG_GETARG_INTERVAL_P(3), "ttl", name);
		if (timing.ttl == QUEUE_TTL_NEVER_MARKER)
			timing.ttl = -1;
		else if (timing.ttl <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ttl \"%s\" is out of range for queue \"%s\"",
							DatumGetCString(DirectFunctionCall1(interval_out,
																PG_GETARG_DATUM(3))),
							name),
					 errdetail("It must be greater than 0, or -1 second for a message that never expires.")));
	}
	return timing;
}

/* A put's receipt: the columns of the type queue_receipt, in order. */
typedef struct PutReceipt
{
	Datum		values[QUEUE_RECEIPT_NATTS];
	bool		nulls[QUEUE_RECEIPT_NATTS];
} PutReceipt;

/*
 * Inserts count messages into an opened queue, with their bodies and their
 * headers (headers NULL: none; header_nulls[i]: none for message i), and
 * returns their receipts in input order.
 */
static PutReceipt *
put_messages(const QueueInfo *queue, const PutTiming *timing,
			 const Datum *bodies, const Datum *headers,
			 const bool *header_nulls, int count)
{
	TimestampTz now = queue_writer_now();
	int64		ttl = timing->ttl_given ? timing->ttl : queue->message_ttl;
	TimestampTz expires_at = 0;
	pg_uuid_t  *receipts = queue_new_receipts(count);
	PutReceipt *result = palloc(sizeof(PutReceipt) * count);
	QueueCounts counts = {0};
	MessagesTable table;
	TupleTableSlot *slot;
	int			i;

	if (ttl >= 0)
	{
		if (ttl <= timing->delay)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ttl must be greater than visibility_timeout for queue \"%s\"",
							queue->name),
					 errdetail(timing->ttl_given ?
							   "The message would expire before it becomes visible." :
							   "The message would expire (after the queue's message_ttl) before it becomes visible.")));
		expires_at = queue_time_plus(now, ttl, "ttl", queue->name);
	}

	queue_messages_open(&table, CMD_INSERT, NULL, 0);
	slot = MakeSingleTupleTableSlot(RelationGetDescr(table.rel), &TTSOpsVirtual);
	for (i = 0; i < count; i++)
	{
		Datum	   *values = slot->tts_values;
		bool	   *nulls = slot->tts_isnull;

		ExecClearTuple(slot);
		memset(nulls, false, sizeof(bool) * table.natts);
		values[MSG_MESSAGE_ID - 1] = Int64GetDatum(queue_messages_next_id());
		values[MSG_QUEUE_ID - 1] = Int32GetDatum(queue->queue_id);
		values[MSG_VISIBLE_AT - 1] = TimestampTzGetDatum(now + timing->delay);
		values[MSG_EXPIRES_AT - 1] = TimestampTzGetDatum(expires_at);
		nulls[MSG_EXPIRES_AT - 1] = ttl < 0;
		values[MSG_DEQUEUE_COUNT - 1] = Int32GetDatum(0);
		values[MSG_LAST_LEASE - 1] = BoolGetDatum(false);
		values[MSG_POP_RECEIPT - 1] = UUIDPGetDatum(&receipts[i]);
		values[MSG_INSERTED_AT - 1] = TimestampTzGetDatum(now);
		/* a new message has no source queue and no holder */
		nulls[MSG_SOURCE_QUEUE - 1] = true;
		nulls[MSG_HOLDER_PID - 1] = nulls[MSG_HOLDER_START - 1] = true;
		nulls[MSG_HEADERS - 1] = headers == NULL || header_nulls[i];
		if (!nulls[MSG_HEADERS - 1])
			values[MSG_HEADERS - 1] = headers[i];
		values[MSG_BODY - 1] = bodies[i];
		if (table.natts == MESSAGE_NATTS)
		{
			values[MSG_PRIORITY - 1] = Int16GetDatum(0);
			nulls[MSG_GROUP_ID - 1] = true;
		}
		ExecStoreVirtualTuple(slot);

		/* before the insert, which moves the values into the slot's memory */
		result[i].values[0] = values[MSG_MESSAGE_ID - 1];
		result[i].values[1] = UUIDPGetDatum(&receipts[i]);
		result[i].values[2] = values[MSG_VISIBLE_AT - 1];
		result[i].values[3] = values[MSG_INSERTED_AT - 1];
		result[i].values[4] = values[MSG_EXPIRES_AT - 1];
		memset(result[i].nulls, false, sizeof(result[i].nulls));
		result[i].nulls[4] = ttl < 0;

		table_tuple_insert(table.rel, slot, table.cid, 0, NULL);
		queue_messages_add_index_entries(&table, slot, false, false);
	}
	ExecDropSingleTupleTableSlot(slot);
	queue_messages_close(&table);

	counts.puts = count;
	queue_counters_add(queue->queue_id, &counts);
	if (timing->delay == 0)
		queue_wake_at_commit(queue->queue_id);
	return result;
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

	queue_require_arg(fcinfo, 1, "body", name);
	body = PG_GETARG_DATUM(1);
	timing = put_timing_args(fcinfo, name);
	if (has_headers)
	{
		headers = PG_GETARG_DATUM(4);
		queue_check_headers(headers, name);
	}

	queue_storage_begin_write(&session, "queue_put()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);
	queue_check_size(&queue, body, headers, has_headers, 0);

	receipt = put_messages(&queue, &timing, &body, has_headers ? &headers : NULL,
						   &no_null, 1);
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

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array for queue \"%s\"",
						argname, queue)));
	deconstruct_array(array, elemtype, -1, false, TYPALIGN_INT,
					  elems, nulls, &count);
	return count;
}

/* queue_put_batch(queue, bodies, visibility_timeout, ttl, headers) */
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

	queue_require_arg(fcinfo, 1, "bodies", name);
	count = array_arg(fcinfo, 1, TEXTOID, "bodies", name, &bodies, &body_nulls);
	queue_check_count(count, 1, QUEUE_MAX_BATCH, "number of bodies", name);
	for (i = 0; i < count; i++)
		if (body_nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("body %d of the batch must not be null for queue \"%s\"",
							i + 1, name)));

	timing = put_timing_args(fcinfo, name);

	if (has_headers)
	{
		int			header_count = array_arg(fcinfo, 4, JSONBOID, "headers", name,
											 &headers, &header_nulls);

		if (header_count != count)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("%d headers given for %d bodies for queue \"%s\"",
							header_count, count, name),
					 errdetail("headers must be NULL or have one element (or NULL) per body.")));
		for (i = 0; i < count; i++)
			if (!header_nulls[i])
				queue_check_headers(headers[i], name);
	}

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_put_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);

	for (i = 0; i < count; i++)
		queue_check_size(&queue, bodies[i], has_headers ? headers[i] : (Datum) 0,
				   has_headers && !header_nulls[i], i + 1);

	receipts = put_messages(&queue, &timing, bodies,
							has_headers ? headers : NULL, header_nulls, count);
	for (i = 0; i < count; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 receipts[i].values, receipts[i].nulls);

	queue_storage_end(&session);
	return (Datum) 0;
}
