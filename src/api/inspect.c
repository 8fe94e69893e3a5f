/*-------------------------------------------------------------------------
 *
 * inspect.c
 *		queue_inspect: every message of a queue, with its state; for operators.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_inspect);

/*
 * queue_inspect(queue, max_messages, after_message_id): the queue's messages
 * in id order, after after_message_id (a page), each with its state
 * (visible, delayed, in_flight, waiting, expired; from 1.9 on, deleted for
 * a message the queue retained, with the time of its deletion), dequeue
 * count, times, headers and body; never a pop receipt.  Needs read or
 * process.
 */
Datum
queue_inspect(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;

	(void) queue_count_arg(fcinfo, 1, "max_messages", name, 1, QUEUE_MAX_INSPECT);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_READ | QUEUE_PERM_PROCESS, &queue);

	queue_plan_begin(&args, queue_storage_has_retention() ? PLAN_INSPECT_RETAINED :
					 queue_storage_has_ordering() ? PLAN_INSPECT_ORDERING : PLAN_INSPECT);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set(&args, "now", TimestampTzGetDatum(GetCurrentTimestamp()));
	queue_plan_set(&args, "max_messages", PG_GETARG_DATUM(1));
	/* after_message_id came with 1.4; ids start at 1 */
	queue_plan_set(&args, "after_message_id",
				   Int64GetDatum(PG_NARGS() > 2 && !PG_ARGISNULL(2) ? PG_GETARG_INT64(2) : 0));
	queue_plan_run(&args);
	queue_store_rows(fcinfo, SPI_tuptable);

	queue_storage_end(&session);
	return (Datum) 0;
}
