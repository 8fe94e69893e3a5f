/*-------------------------------------------------------------------------
 *
 * redrive.c
 *		queue_redrive: poison messages back to a queue, for another try.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_redrive);

/*
 * queue_redrive(source, destination, max_messages): moves the visible
 * messages of a poison queue back to the queue it serves (or to
 * destination), visible at once, dequeue_count 0, expiring after the
 * destination's message_ttl from now.  At most max_messages (NULL: all),
 * oldest first; messages held by a consumer of the poison queue stay.
 * Needs manage on the source and send on the destination.  Returns how
 * many moved.
 */
Datum
queue_redrive(PG_FUNCTION_ARGS)
{
	char	   *source_name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	source;
	QueueInfo	destination;
	PlanArgs	args;
	TimestampTz now;
	bool		isnull;
	int64		moved;

	queue_check_max_messages_arg(fcinfo, 2, source_name);

	queue_storage_begin_write(&session, "queue_redrive()");
	queue_open(source_name, AccessShareLock, QUEUE_PERM_MANAGE, &source);

	if (!PG_ARGISNULL(1))
		queue_open(queue_name_arg(fcinfo, 1), AccessShareLock, QUEUE_PERM_SEND, &destination);
	else
	{
		if (queue_plan_run1(PLAN_QUEUE_PARENT, "poison_queue_id",
							Int32GetDatum(source.queue_id)) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("queue \"%s\" is not the poison queue of any queue", source_name),
					 errhint("Name the queue to move its messages to as destination.")));
		queue_open(TextDatumGetCString(queue_row_value(SPI_tuptable, 0, "name", &isnull)),
				   AccessShareLock, QUEUE_PERM_SEND, &destination);
	}
	if (destination.queue_id == source.queue_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot redrive queue \"%s\" into itself", source_name)));

	now = queue_writer_now();
	/* the statement may move messages of any priority (claim_starts.c) */
	queue_levels_written(destination.queue_id);
	queue_plan_begin(&args, queue_storage_has_ordering() ?
					 PLAN_REDRIVE_ORDERING : PLAN_REDRIVE);
	queue_plan_set(&args, "source_id", Int32GetDatum(source.queue_id));
	queue_plan_set(&args, "destination_id", Int32GetDatum(destination.queue_id));
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set_new_expiry(&args, "expires_at", &destination, now);
	queue_plan_set_arg(&args, "max_messages", fcinfo, 2);
	queue_plan_run(&args);
	moved = DatumGetInt64(queue_row_value(SPI_tuptable, 0, "moved", &isnull));
	if (queue_storage_has_ordering())
	{
		/* messages of a group came back waiting: whose turn is it now? */
		Datum		group_ids = queue_row_value(SPI_tuptable, 0, "group_ids", &isnull);
		GroupsLeft	left = {0};

		if (!isnull)
		{
			GroupsLeft	left_behind = {0};

			queue_groups_note_array(&left, group_ids);
			queue_groups_advance(destination.queue_id, &left, now);
			/* and in the source, the next of a group whose first came back */
			queue_groups_note_array(&left_behind, group_ids);
			queue_groups_advance(source.queue_id, &left_behind, now);
		}
	}
	if (moved > 0)
		queue_wake_at_commit(destination.queue_id, moved);

	queue_storage_end(&session);
	PG_RETURN_INT64(moved);
}
