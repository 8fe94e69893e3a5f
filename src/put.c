/*-------------------------------------------------------------------------
 *
 * put.c
 *		queue_put and queue_put_batch: adding messages.
 *
 * Both insert with one statement (PLAN_PUT) that takes the bodies, headers
 * and receipts as arrays: a single put is a batch of one.  A batch is all
 * or nothing, and its receipts come back in the order of its bodies.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/detoast.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(queue_put);
PG_FUNCTION_INFO_V1(queue_put_batch);

/* The arguments queue_put and queue_put_batch share, checked. */
typedef struct PutTiming
{
	int64		delay;			/* initial invisibility */
	int64		ttl;			/* -1: never expires */
	bool		ttl_given;		/* false: the queue's message_ttl */
} PutTiming;

/*
 * The size a message counts against max_message_size: the octets of its
 * body plus those of its headers written as text (what octet_length(body)
 * + octet_length(headers::text) says).
 */
int64
queue_message_size(Datum body, Datum headers, bool has_headers)
{
	int64		size = (int64) toast_raw_datum_size(body) - VARHDRSZ;

	if (has_headers)
	{
		Jsonb	   *jsonb = DatumGetJsonbP(headers);
		char	   *text = JsonbToCString(NULL, &jsonb->root, VARSIZE(jsonb));

		size += strlen(text);
		pfree(text);
	}
	return size;
}

/* Headers are a JSON object (name: value), as SQS message attributes are. */
void
queue_check_headers(Datum headers, const char *queue)
{
	Jsonb	   *jsonb = DatumGetJsonbP(headers);

	if (!JB_ROOT_IS_OBJECT(jsonb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("headers must be a JSON object for queue \"%s\"", queue),
				 errhint("Write headers as {\"name\": value, ...}, or pass NULL.")));
}

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

/*
 * Inserts count messages into an opened queue and returns their receipts
 * (queue_receipt rows, in input order).  bodies is a text[], headers a
 * jsonb[] or NULL; or, when single, one text and one jsonb (or NULL).
 */
static SPITupleTable *
put_messages(const QueueInfo *queue, const PutTiming *timing, Datum bodies,
			 Datum headers, bool has_headers, int count, bool single)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		ttl = timing->ttl_given ? timing->ttl : queue->message_ttl;
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};
	QueueCounts counts = {0};

	values[0] = Int32GetDatum(queue->queue_id);
	values[1] = TimestampTzGetDatum(now);
	values[2] = TimestampTzGetDatum(now + timing->delay);
	if (ttl < 0)
		nulls[3] = 'n';
	else
	{
		if (ttl <= timing->delay)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("ttl must be greater than visibility_timeout for queue \"%s\"",
							queue->name),
					 errdetail(timing->ttl_given ?
							   "The message would expire before it becomes visible." :
							   "The message would expire (after the queue's message_ttl) before it becomes visible.")));
		values[3] = TimestampTzGetDatum(queue_time_plus(now, ttl, "ttl", queue->name));
	}
	values[4] = bodies;
	values[5] = headers;
	if (!has_headers)
		nulls[5] = 'n';
	values[6] = single ? UUIDPGetDatum(queue_new_receipts(1)) :
		queue_new_receipt_array(count);

	counts.puts = count;
	queue_counters_add(queue->queue_id, &counts);
	if (timing->delay == 0)
		queue_wake_at_commit(queue->queue_id);

	if (queue_plan_run(single ? PLAN_PUT_ONE : PLAN_PUT, values, nulls) != (uint64) count)
		elog(ERROR, "queue: put inserted a different number of messages than it was given");
	return SPI_tuptable;
}

/*
 * Raises 54000 for a message of size bytes; position is its place in a
 * batch (from 1), or 0 for a single message.
 */
void
queue_report_too_large(const QueueInfo *queue, int64 size, int position)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 position == 0 ?
			 errmsg("message of %lld bytes is too large for queue \"%s\"",
					(long long) size, queue->name) :
			 errmsg("message %d of the batch, of %lld bytes, is too large for queue \"%s\"",
					position, (long long) size, queue->name),
			 errdetail("The queue's max_message_size is %d bytes; the size counts the body and the headers.",
					   queue->max_message_size)));
}

static void
check_size(const QueueInfo *queue, Datum body, Datum headers, bool has_headers,
		   int position)
{
	int64		size = queue_message_size(body, headers, has_headers);

	if (size > queue->max_message_size)
		queue_report_too_large(queue, size, position);
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
	StorageSession session;
	QueueInfo	queue;
	SPITupleTable *rows;
	Datum		result;

	queue_require_arg(fcinfo, 1, "body", name);
	body = PG_GETARG_DATUM(1);
	timing = put_timing_args(fcinfo, name);
	if (has_headers)
	{
		headers = PG_GETARG_DATUM(4);
		queue_check_headers(headers, name);
	}

	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);
	check_size(&queue, body, headers, has_headers, 0);

	rows = put_messages(&queue, &timing, body, headers, has_headers, 1, true);
	result = queue_receipt_result(fcinfo, rows->vals[0], rows->tupdesc);

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
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_SEND, &queue);

	for (i = 0; i < count; i++)
		check_size(&queue, bodies[i], has_headers ? headers[i] : (Datum) 0,
				   has_headers && !header_nulls[i], i + 1);

	queue_store_rows(fcinfo,
					 put_messages(&queue, &timing, PG_GETARG_DATUM(1),
								  has_headers ? PG_GETARG_DATUM(4) : (Datum) 0,
								  has_headers, count, false));

	queue_storage_end(&session);
	return (Datum) 0;
}
