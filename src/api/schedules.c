/*-------------------------------------------------------------------------
 *
 * schedules.c
 *		queue_schedules: the schedules of the queues the caller may see.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_schedules);

/* queue_schedules(): one row per schedule, with its next and last due times. */
Datum
queue_schedules(PG_FUNCTION_ARGS)
{
	StorageSession session;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	if (queue_storage_has_schedules())
		queue_store_shown_rows(fcinfo, PLAN_SCHEDULE_LIST);
	queue_storage_end(&session);
	return (Datum) 0;
}
