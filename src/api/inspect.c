/*-------------------------------------------------------------------------
 *
 * inspect.c
 *		queue_inspect: every message of a queue, with its state; for operators.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "storage/storage.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_inspect);

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
