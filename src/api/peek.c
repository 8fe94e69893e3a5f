/*-------------------------------------------------------------------------
 *
 * peek.c
 *		queue_peek: the messages a get would take, left where they are.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "messages/rules.h"
#include "storage/storage.h"

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
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	max_messages = queue_count_arg(fcinfo, 1, "max_messages", name, 1, QUEUE_MAX_MESSAGES);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS | QUEUE_PERM_READ, &queue);

	values[0] = Int32GetDatum(queue.queue_id);
	values[1] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[2] = Int32GetDatum(max_messages);
	values[3] = Int32GetDatum(queue_dequeue_limit(&queue));
	if (queue_dequeue_limit(&queue) == 0)
		nulls[3] = 'n';
	queue_plan_run(PLAN_PEEK, values, nulls);
	queue_store_rows(fcinfo, SPI_tuptable);

	queue_storage_end(&session);
	return (Datum) 0;
}
