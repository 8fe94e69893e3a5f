/*-------------------------------------------------------------------------
 *
 * stats.c
 *		queue_list and queue_stats: what the queues are and what they hold.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_list);
PG_FUNCTION_INFO_V1(queue_stats);
PG_FUNCTION_INFO_V1(queue_inspect);

/*
 * queue_list(): one row per queue with its settings and poison queue; only
 * the queues the caller holds some permission on.
 */
Datum
queue_list(PG_FUNCTION_ARGS)
{
	StorageSession session;

	Datum		values[2];

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	values[0] = BoolGetDatum(queue_caller_holds_all());
	values[1] = ObjectIdGetDatum(queue_storage_caller());
	queue_plan_run(PLAN_QUEUE_LIST, values, NULL);
	queue_store_rows(fcinfo, SPI_tuptable);
	queue_storage_end(&session);
	return (Datum) 0;
}

/*
 * The columns of PLAN_QUEUE_STATS: the result's 11 (its counters from the
 * 7th on), then queue_id.
 */
#define STATS_FIRST_COUNTER	6
#define STATS_QUEUE_ID		11
#define STATS_ALL_COLUMNS	12

/*
 * Adds to a row of PLAN_QUEUE_STATS, whose counters sum the table's rows,
 * what shared memory counted since the last sweep and what this
 * transaction counted and has not written; stores it in the result.
 */
static void
store_stats_row(FunctionCallInfo fcinfo, HeapTuple row, TupleDesc desc)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		columns[STATS_ALL_COLUMNS];
	bool		isnull[STATS_ALL_COLUMNS];
	int64	   *sums[5];
	QueueCounts unwritten;
	QueueCounts own;
	int32		queue_id;
	int			i;

	heap_deform_tuple(row, desc, columns, isnull);
	queue_id = DatumGetInt32(columns[STATS_QUEUE_ID]);
	queue_shared_counters_read(queue_id, &unwritten);
	queue_counters_pending(queue_id, &own);
	queue_counts_add(&unwritten, &own);

	sums[0] = &unwritten.puts;
	sums[1] = &unwritten.gets;
	sums[2] = &unwritten.deletes;
	sums[3] = &unwritten.poisoned;
	sums[4] = &unwritten.expired;
	for (i = 0; i < 5; i++)
		columns[STATS_FIRST_COUNTER + i] =
			Int64GetDatum(DatumGetInt64(columns[STATS_FIRST_COUNTER + i]) + *sums[i]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, columns, isnull);
}

/*
 * queue_stats(queue DEFAULT NULL): message counts by state at this moment
 * and the counters since creation, for one queue or (NULL) for all the
 * queues the caller holds some permission on.
 */
Datum
queue_stats(PG_FUNCTION_ARGS)
{
	StorageSession session;
	Datum		values[4];
	char		nulls[4] = {' ', 'n', ' ', ' '};
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);

	if (!PG_ARGISNULL(0))
	{
		QueueInfo	queue;

		queue_open(queue_name_arg(fcinfo, 0), AccessShareLock, QUEUE_PERM_ANY, &queue);
		values[1] = CStringGetTextDatum(queue.name);
		nulls[1] = ' ';
	}
	values[0] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[2] = BoolGetDatum(queue_caller_holds_all());
	values[3] = ObjectIdGetDatum(queue_storage_caller());

	queue_plan_run(PLAN_QUEUE_STATS, values, nulls);
	Assert(SPI_tuptable->tupdesc->natts == STATS_ALL_COLUMNS);
	for (i = 0; i < SPI_processed; i++)
		store_stats_row(fcinfo, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
	queue_storage_end(&session);
	return (Datum) 0;
}

/*
 * queue_inspect(queue, max_messages): the queue's messages in id order,
 * each with its state (visible, delayed, in_flight, expired), dequeue count,
 * times, headers and body; never a pop receipt.  Needs read or process.
 */
Datum
queue_inspect(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		values[3];

	(void) queue_count_arg(fcinfo, 1, "max_messages", name, 1, QUEUE_MAX_INSPECT);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_READ | QUEUE_PERM_PROCESS, &queue);

	values[0] = Int32GetDatum(queue.queue_id);
	values[1] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[2] = PG_GETARG_DATUM(1);
	queue_plan_run(PLAN_INSPECT, values, NULL);
	queue_store_rows(fcinfo, SPI_tuptable);

	queue_storage_end(&session);
	return (Datum) 0;
}
