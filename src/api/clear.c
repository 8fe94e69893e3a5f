/*-------------------------------------------------------------------------
 *
 * clear.c
 *		queue_clear.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "storage/storage.h"

PG_FUNCTION_INFO_V1(queue_clear);

/* queue_clear(queue): deletes every message of the queue, returns how many. */
Datum
queue_clear(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	uint64		deleted;

	queue_storage_begin_write(&session, "queue_clear()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	deleted = queue_plan_run1(PLAN_MESSAGES_DELETE_ALL, "queue_id",
							  Int32GetDatum(queue.queue_id));
	queue_storage_end(&session);

	PG_RETURN_INT64((int64) deleted);
}
