/*-------------------------------------------------------------------------
 *
 * list.c
 *		queue_list: the queues the caller may see, with their settings.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

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
	PlanArgs	args;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_plan_begin(&args, queue_storage_has_retention() ? PLAN_QUEUE_LIST_RETENTION :
					 queue_storage_has_retries() ? PLAN_QUEUE_LIST_RETRIES :
					 queue_storage_has_attributes() ? PLAN_QUEUE_LIST_ATTRIBUTES :
					 PLAN_QUEUE_LIST);
	queue_plan_set(&args, "holds_all", BoolGetDatum(queue_caller_holds_all()));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));
	queue_plan_run(&args);
	queue_store_rows(fcinfo, SPI_tuptable);
	queue_storage_end(&session);
	return (Datum) 0;
}
