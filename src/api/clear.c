/*-------------------------------------------------------------------------
 *
 * clear.c
 *		queue_clear.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "utils/timestamp.h"

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
	if (!queue_storage_has_ordering())
		deleted = queue_plan_run1(PLAN_MESSAGES_DELETE_ALL, "queue_id",
								  Int32GetDatum(queue.queue_id));
	else
	{
		bool		isnull;
		Datum		group_ids;
		GroupsLeft	left = {0};

		queue_plan_run1(PLAN_MESSAGES_CLEAR, "queue_id", Int32GetDatum(queue.queue_id));
		deleted = DatumGetInt64(queue_row_value(SPI_tuptable, 0, "deleted", &isnull));
		group_ids = queue_row_value(SPI_tuptable, 0, "group_ids", &isnull);
		/* a put into one of them that waited for the clear: its turn */
		if (!isnull)
		{
			queue_groups_note_array(&left, group_ids);
			queue_groups_advance(queue.queue_id, &left, GetCurrentTimestamp());
		}
	}
	queue_storage_end(&session);

	PG_RETURN_INT64((int64) deleted);
}
