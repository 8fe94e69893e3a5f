/*-------------------------------------------------------------------------
 *
 * stats.c
 *		queue_stats: what each queue holds and what happened to it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "queue_storage/queue_storage.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_stats);

/*
 * Adds to a row of PLAN_QUEUE_STATS, whose counters sum the table's rows,
 * what shared memory counted since the last sweep and what this
 * transaction counted and has not written; stores it in the result (the
 * statement's columns but the last, queue_id).
 */
static void
store_stats_row(FunctionCallInfo fcinfo, SPITupleTable *rows, uint64 row)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	desc = rows->tupdesc;
	Datum	   *columns = palloc(sizeof(Datum) * desc->natts);
	bool	   *isnull = palloc(sizeof(bool) * desc->natts);
	static const char *const counters[] = {"puts", "gets", "deletes", "poisoned", "expired"};
	QueueCounts unwritten;
	int64		adds[lengthof(counters)];
	int32		queue_id;
	bool		id_null;
	int			i;

	queue_id = DatumGetInt32(queue_row_value(rows, row, "queue_id", &id_null));
	queue_counters_unwritten(queue_id, &unwritten);
	adds[0] = unwritten.puts;
	adds[1] = unwritten.gets;
	adds[2] = unwritten.deletes;
	adds[3] = unwritten.poisoned;
	adds[4] = unwritten.expired;

	heap_deform_tuple(rows->vals[row], desc, columns, isnull);
	for (i = 0; i < lengthof(counters); i++)
	{
		int			at = queue_row_column(desc, counters[i]);

		columns[at] = Int64GetDatum(DatumGetInt64(columns[at]) + adds[i]);
	}
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
	PlanArgs	args;
	uint64		i;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);

	if (PG_ARGISNULL(0))
	{
		queue_plan_begin(&args, PLAN_QUEUE_STATS);
		queue_plan_set(&args, "holds_all", BoolGetDatum(queue_caller_holds_all()));
		queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));
	}
	else
	{
		QueueInfo	queue;

		queue_open(queue_name_arg(fcinfo, 0), AccessShareLock, QUEUE_PERM_ANY, &queue);
		queue_plan_begin(&args, PLAN_QUEUE_STATS_ONE);
		queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	}
	/* now, and the latest snapshot, once no sweep has counts in flight */
	queue_shared_counters_read_begin();
	queue_plan_set(&args, "now", TimestampTzGetDatum(GetCurrentTimestamp()));
	queue_plan_run_latest(&args);
	for (i = 0; i < SPI_processed; i++)
		store_stats_row(fcinfo, SPI_tuptable, i);
	queue_shared_counters_read_end();
	queue_storage_end(&session);
	return (Datum) 0;
}
