/*-------------------------------------------------------------------------
 *
 * peek.c
 *		queue_peek: the messages a get would take, left where they are.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/rules.h"
#include "queue_storage/queue_storage.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_peek);

/*
 * queue_peek(queue, max_messages): the messages a get would return now,
 * without a receipt and without changing anything.
 */
Datum
queue_peek(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int32		max_messages;
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;

	max_messages = queue_count_arg(fcinfo, 1, "max_messages", name, 1, QUEUE_MAX_MESSAGES);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS | QUEUE_PERM_READ, &queue);

	queue_plan_begin(&args, queue_storage_has_attributes() ? PLAN_PEEK_FIRST_DEQUEUED :
					 queue_storage_has_ordering() ? PLAN_PEEK_ORDERING : PLAN_PEEK);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set(&args, "now", TimestampTzGetDatum(GetCurrentTimestamp()));
	queue_plan_set(&args, "max_messages", Int32GetDatum(max_messages));
	if (queue_dequeue_limit(&queue) == 0)
		queue_plan_set_null(&args, "dequeue_limit");
	else
		queue_plan_set(&args, "dequeue_limit", Int32GetDatum(queue_dequeue_limit(&queue)));
	queue_plan_run(&args);
	queue_store_rows(fcinfo, SPI_tuptable);

	queue_storage_end(&session);
	return (Datum) 0;
}
