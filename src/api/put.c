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
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "shmem/shmem.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "access/detoast.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
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
 * What 1.3 added to a put, one entry per message: its group, its
 * deduplication_id and its priority (an array NULL: none given).
 */
typedef struct PutOrdering
{
	Datum	   *group_ids;
	bool	   *group_nulls;
	Datum	   *deduplication_ids;
	bool	   *deduplication_nulls;
	int16	   *priorities;
} PutOrdering;

/*
 * A batch's rows go to the table several at a time, in one heap
 * multi-insert: it writes one WAL record per page for the rows it put
 * there, where an insert per row writes a record of its own (record header
 * and block reference) for each row, so a batch writes less WAL per
 * message (bench/reports/history.md, "The journal of full runs", its second
 * run of bench/run.sh).  Each row waiting in a slot is a copy of the
 * message, so they go in once PUT_ROWS_AT_ONCE of them or PUT_BYTES_AT_ONCE
 * of bodies wait (large bodies gain little anyway: their toasted pieces are
 * inserted one by one).
 */
#define PUT_ROWS_AT_ONCE	100
#define PUT_BYTES_AT_ONCE	(1024 * 1024)

/*
 * Inserts the rows of the first count slots (none if count is 0), then
 * their index entries: the insert sets each slot's tts_tid.
 */
static void
insert_rows(MessagesTable *table, TupleTableSlot **slots, int count)
{
	int			i;

	if (count == 1)
		table_tuple_insert(table->rel, slots[0], table->cid, 0, NULL);
	else if (count > 1)
		table_multi_insert(table->rel, slots, count, table->cid, 0, NULL);
	for (i = 0; i < count; i++)
		queue_messages_add_index_entries(table, slots[i], false, false);
}

/*
 * A message of a batch that repeats a deduplication id: when the first put
 * of the id is an earlier message of the same batch (stored[j]), not in
 * the table yet, the repeat's receipt is that message's, pop receipt
 * included (the reservation holds all but the pop receipt).
 */
static void
take_receipt_in_batch(PutReceipt *result, const bool *stored, int repeat)
{
	int64		first = DatumGetInt64(result[repeat].values[0]);
	int			j;

	for (j = 0; j < repeat; j++)
		if (stored[j] && DatumGetInt64(result[j].values[0]) == first)
		{
			result[repeat] = result[j];
			return;
		}
}

/*
 * Inserts count messages into an opened queue, with their bodies and their
 * headers (headers NULL: none; header_nulls[i]: none for message i), and
 * returns their receipts in input order.  A message whose
 * deduplication_id a put within the window has already is not stored: its
 * receipt is the first put's.
 */
static PutReceipt *
put_messages(const QueueInfo *queue, const PutTiming *timing,
			 const Datum *bodies, const Datum *headers,
			 const bool *header_nulls, const PutOrdering *ordering, int count)
{
	TimestampTz now = queue_writer_now();
	int64		ttl = timing->ttl_given ? timing->ttl : queue->message_ttl;
	TimestampTz expires_at = 0;
	pg_uuid_t  *receipts = queue_new_receipts(count);
	PutReceipt *result = palloc(sizeof(PutReceipt) * count);
	bool	   *stored = palloc(sizeof(bool) * count);
	bool		grouped = false;
	bool		table_open = false;
	int		   *first_of = NULL;	/* per message: its group's first in the batch */
	bool	   *occupied = NULL;	/* per group: has messages in the queue */
	bool	   *taken = NULL;		/* per group: a message of it stored here */
	QueueCounts counts = {0};
	MessagesTable table;
	TupleTableSlot **slots;
	int			nslots = Min(count, PUT_ROWS_AT_ONCE);
	int			filled = 0;		/* slots holding rows not inserted yet */
	Size		waiting_bytes = 0;	/* their bodies' size */
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

	for (i = 0; i < count && ordering->group_ids != NULL; i++)
		grouped |= !ordering->group_nulls[i];
	if (grouped)
	{
		/* a group goes out in put order: its messages wait for their turn */
		if (timing->delay > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a message with a group_id cannot be delayed in queue \"%s\"",
							queue->name),
					 errdetail("Messages of a group become visible in put order, each when the one before it has left the queue."),
					 errhint("Put it with visibility_timeout 0, or without group_id.")));
		/* before the ids are drawn: put order is commit order */
		queue_id_locks_take(queue->queue_id, QUEUE_LOCK_GROUP, ordering->group_ids,
							ordering->group_nulls, count);
	}

	/* the receipts, message ids drawn in input order */
	for (i = 0; i < count; i++)
	{
		result[i].values[0] = Int64GetDatum(queue_messages_next_id());
		result[i].values[1] = UUIDPGetDatum(&receipts[i]);
		result[i].values[2] = TimestampTzGetDatum(now + timing->delay);
		result[i].values[3] = TimestampTzGetDatum(now);
		result[i].values[4] = TimestampTzGetDatum(expires_at);
		memset(result[i].nulls, false, sizeof(result[i].nulls));
		result[i].nulls[4] = ttl < 0;
		result[i].nulls[5] = !grouped || ordering->group_nulls[i];
		if (!result[i].nulls[5])
			result[i].values[5] = ordering->group_ids[i];
		result[i].values[6] =
			Int32GetDatum(ordering->priorities != NULL ? ordering->priorities[i] : 0);
		stored[i] = true;
	}
	if (grouped)
	{
		queue_messages_open(&table, CMD_INSERT, NULL, 0);
		table_open = true;
		first_of = palloc(sizeof(int) * count);
		taken = palloc0(sizeof(bool) * count);
		occupied = queue_groups_occupied(&table, queue->queue_id,
										 ordering->group_ids, ordering->group_nulls,
										 count, now, first_of);
	}

	/*
	 * Which messages wait behind their group, and which are repeats of a
	 * put within the deduplication window (those are not stored, and take
	 * the first put's receipt).  Deduplication runs statements: the table
	 * is not open meanwhile.
	 */
	if (ordering->deduplication_ids != NULL)
	{
		if (table_open)
			queue_messages_close(&table);
		table_open = false;
		queue_deduplication_lock_batch(queue, ordering->deduplication_ids,
									   ordering->deduplication_nulls, count);
	}
	for (i = 0; i < count; i++)
	{
		int			group = grouped ? first_of[i] : -1;

		if (group >= 0 && (occupied[group] || taken[group]))
			result[i].values[2] = TimestampTzGetDatum(QUEUE_WAITING_AT);
		if (ordering->deduplication_ids != NULL && !ordering->deduplication_nulls[i])
		{
			stored[i] = queue_deduplication_reserve(queue,
													ordering->deduplication_ids[i],
													now, result[i].values,
													result[i].nulls);
			if (!stored[i])
				take_receipt_in_batch(result, stored, i);
		}
		if (group >= 0 && stored[i])
			taken[group] = true;
	}
	if (!table_open)
		queue_messages_open(&table, CMD_INSERT, NULL, 0);

	slots = palloc(sizeof(TupleTableSlot *) * nslots);
	for (i = 0; i < nslots; i++)
		slots[i] = MakeSingleTupleTableSlot(RelationGetDescr(table.rel),
											table_slot_callbacks(table.rel));
	for (i = 0; i < count; i++)
	{
		TupleTableSlot *slot = slots[filled];
		Datum	   *values = slot->tts_values;
		bool	   *nulls = slot->tts_isnull;

		if (!stored[i])
			continue;
		ExecClearTuple(slot);
		memset(nulls, false, sizeof(bool) * table.natts);
		values[MSG_MESSAGE_ID - 1] = result[i].values[0];
		values[MSG_QUEUE_ID - 1] = Int32GetDatum(queue->queue_id);
		values[MSG_VISIBLE_AT - 1] = result[i].values[2];
		values[MSG_EXPIRES_AT - 1] = result[i].values[4];
		nulls[MSG_EXPIRES_AT - 1] = result[i].nulls[4];
		values[MSG_DEQUEUE_COUNT - 1] = Int32GetDatum(0);
		values[MSG_LAST_LEASE - 1] = BoolGetDatum(false);
		values[MSG_POP_RECEIPT - 1] = result[i].values[1];
		values[MSG_INSERTED_AT - 1] = result[i].values[3];
		/* a new message has no source queue and no holder */
		nulls[MSG_SOURCE_QUEUE - 1] = true;
		nulls[MSG_HOLDER_PID - 1] = nulls[MSG_HOLDER_START - 1] = true;
		nulls[MSG_HEADERS - 1] = headers == NULL || header_nulls[i];
		if (!nulls[MSG_HEADERS - 1])
			values[MSG_HEADERS - 1] = headers[i];
		values[MSG_BODY - 1] = bodies[i];
		if (table.natts == MESSAGE_NATTS)
		{
			values[MSG_PRIORITY - 1] =
				Int16GetDatum((int16) DatumGetInt32(result[i].values[6]));
			nulls[MSG_GROUP_ID - 1] = result[i].nulls[5];
			values[MSG_GROUP_ID - 1] = result[i].values[5];
		}
		ExecStoreVirtualTuple(slot);
		counts.puts++;
		waiting_bytes += VARSIZE_ANY(DatumGetPointer(bodies[i]));
		if (++filled == PUT_ROWS_AT_ONCE || waiting_bytes >= PUT_BYTES_AT_ONCE)
		{
			insert_rows(&table, slots, filled);
			filled = 0;
			waiting_bytes = 0;
		}
	}
	insert_rows(&table, slots, filled);
	for (i = 0; i < nslots; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	queue_messages_close(&table);

	queue_counters_add(queue->queue_id, &counts);
	if (timing->delay == 0 && counts.puts > 0)
		queue_wake_at_commit(queue->queue_id, counts.puts);
	return result;
}

/*
 * A group_id or deduplication_id (argname) of queue: 1 to QUEUE_MAX_ID_LEN
 * characters; position is its place in a batch (from 1), or 0.
 */
static void
check_id(Datum id, const char *argname, const char *queue, int position)
{
	text	   *value = DatumGetTextPP(id);
	int			length = pg_mbstrlen_with_len(VARDATA_ANY(value),
											  VARSIZE_ANY_EXHDR(value));

	if (length >= 1 && length <= QUEUE_MAX_ID_LEN)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 position == 0 ?
			 errmsg("%s must have 1 to %d characters for queue \"%s\"",
					argname, QUEUE_MAX_ID_LEN, queue) :
			 errmsg("%s %d of the batch must have 1 to %d characters for queue \"%s\"",
					argname, position, QUEUE_MAX_ID_LEN, queue)));
}

/* A priority of queue: -100 to 100. */
static int16
check_priority(int32 priority, const char *queue)
{
	queue_check_count(priority, QUEUE_MIN_PRIORITY, QUEUE_MAX_PRIORITY,
					  "priority", queue);
	return (int16) priority;
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
	Datum		group_id = (Datum) 0;
	bool		group_null = true;
	Datum		deduplication_id = (Datum) 0;
	bool		deduplication_null = true;
	int16		priority = 0;

	queue_require_arg(fcinfo, 1, "body", name);
	body = PG_GETARG_DATUM(1);
	timing = put_timing_args(fcinfo, name);
	if (has_headers)
	{
		headers = PG_GETARG_DATUM(4);
		queue_check_headers(headers, name);
	}

	/* group_id, deduplication_id, priority: from 1.3 on */
	if (PG_NARGS() > 7)
	{
		group_null = PG_ARGISNULL(5);
		if (!group_null)
		{
			group_id = PG_GETARG_DATUM(5);
			check_id(group_id, "group_id", name, 0);
		}
		deduplication_null = PG_ARGISNULL(6);
		if (!deduplication_null)
		{
			deduplication_id = PG_GETARG_DATUM(6);
			check_id(deduplication_id, "deduplication_id", name, 0);
		}
		queue_require_arg(fcinfo, 7, "priority", name);
		priority = check_priority(PG_GETARG_INT32(7), name);
		ordering.group_ids = &group_id;
		ordering.group_nulls = &group_null;
		if (!deduplication_null)
		{
			ordering.deduplication_ids = &deduplication_id;
			ordering.deduplication_nulls = &deduplication_null;
		}
		ordering.priorities = &priority;
	}

	queue_storage_begin_write(&session, "queue_put()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);
	queue_check_size(&queue, body, headers, has_headers, 0);

	receipt = put_messages(&queue, &timing, &body, has_headers ? &headers : NULL,
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

	timing = put_timing_args(fcinfo, name);

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
					check_id(ordering.group_ids[i], "group_id", name, i + 1);
		}
		if (!PG_ARGISNULL(6))
		{
			per_body_array(fcinfo, 6, TEXTOID, "deduplication_ids", name, count,
						   &ordering.deduplication_ids, &ordering.deduplication_nulls);
			for (i = 0; i < count; i++)
				if (!ordering.deduplication_nulls[i])
					check_id(ordering.deduplication_ids[i], "deduplication_id", name, i + 1);
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
					check_priority(DatumGetInt32(priorities[i]), name);
		}
	}

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_put_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);

	for (i = 0; i < count; i++)
		queue_check_size(&queue, bodies[i], has_headers ? headers[i] : (Datum) 0,
				   has_headers && !header_nulls[i], i + 1);

	receipts = put_messages(&queue, &timing, bodies,
							has_headers ? headers : NULL, header_nulls, &ordering, count);
	for (i = 0; i < count; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 receipts[i].values, receipts[i].nulls);

	queue_storage_end(&session);
	return (Datum) 0;
}
