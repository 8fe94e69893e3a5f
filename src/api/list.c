/*-------------------------------------------------------------------------
 *
 * list.c
 *		queue_list: the queues the caller may see, with their settings.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "storage/storage.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_list);

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
