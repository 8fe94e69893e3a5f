/*-------------------------------------------------------------------------
 *
 * delete.c
 *		queue_delete: the consumer is done with a message.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

PG_FUNCTION_INFO_V1(queue_delete);

/*
 * queue_delete(queue, message_id, pop_receipt): deletes the message if the
 * receipt is its newest and it has not expired; otherwise QU404 or QU409.
 */
Datum
queue_delete(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		message_id;
	pg_uuid_t  *receipt;
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	Datum		values[4];
	QueueCounts counts = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	message_id = PG_GETARG_INT64(1);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	receipt = PG_GETARG_UUID_P(2);

	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = GetCurrentTimestamp();

	values[0] = Int64GetDatum(message_id);
	values[1] = Int32GetDatum(queue.queue_id);
	values[2] = UUIDPGetDatum(receipt);
	values[3] = TimestampTzGetDatum(now);
	if (queue_plan_run(PLAN_DELETE, values, NULL) == 0)
		queue_report_refusal(&queue, message_id, receipt, now,
							 (Datum) 0, false, (Datum) 0, false);

	counts.deletes = 1;
	queue_counters_add(queue.queue_id, &counts);

	queue_storage_end(&session);
	PG_RETURN_VOID();
}
