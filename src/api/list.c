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

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_store_shown_rows(fcinfo,
						   queue_storage_has_retention() ? PLAN_QUEUE_LIST_RETENTION :
						   queue_storage_has_retries() ? PLAN_QUEUE_LIST_RETRIES :
						   queue_storage_has_attributes() ? PLAN_QUEUE_LIST_ATTRIBUTES :
						   PLAN_QUEUE_LIST);
	queue_storage_end(&session);
	return (Datum) 0;
}
