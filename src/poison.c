/*-------------------------------------------------------------------------
 *
 * poison.c
 *		Moving messages to a queue's poison queue, and back (queue_redrive).
 *
 * A message that was handed out max_dequeue_count times and becomes
 * visible again goes to <queue>-poison: queue_get moves the ones it meets
 * while claiming (claim.c), queue_update moves one
 * that is released, and the sweep (maintain.c) moves the rest.  All of
 * them are counted here.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_redrive);

/*
 * Moves the messages whose ids are in message_ids (a bigint[] the caller
 * has locked) from queue to its poison queue, and counts them.  Returns
 * their receipts (queue_receipt columns), one row per message moved.
 */
SPITupleTable *
queue_move_to_poison(const QueueInfo *queue, Datum message_ids,
					 TimestampTz now)
{
	Datum		values[4];
	SPITupleTable *moved;

	Assert(queue->poison_queue_id != 0);

	values[0] = message_ids;
	values[1] = Int32GetDatum(queue->poison_queue_id);
	values[2] = CStringGetTextDatum(queue->name);
	values[3] = TimestampTzGetDatum(now);
	queue_plan_run(PLAN_POISON_MOVE, values, NULL);
	moved = SPI_tuptable;
	queue_count_poisoned(queue, (int) moved->numvals);
	return moved;
}

/*
 * A message of queue handed out dequeue_count times has reached the queue's
 * limit: when it is visible again, it goes to the poison queue.  Always
 * false for a queue that routes no poison.
 */
bool
queue_at_dequeue_limit(const QueueInfo *queue, int32 dequeue_count)
{
	return queue->max_dequeue_count > 0 && queue->poison_queue_id != 0 &&
		dequeue_count >= queue->max_dequeue_count;
}

/*
 * Counts count messages moved from queue to its poison queue, and wakes
 * the poison queue's getters at commit: for queue_move_to_poison and for
 * the get, whose claim (claim.c) moves the poison messages it meets.
 */
void
queue_count_poisoned(const QueueInfo *queue, int count)
{
	QueueCounts counts = {0};

	counts.poisoned = count;
	queue_counters_add(queue->queue_id, &counts);
	if (count > 0)
		queue_wake_at_commit(queue->poison_queue_id);
}

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
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	TimestampTz now;
	bool		isnull;
	int64		moved;

	if (!PG_ARGISNULL(2) && PG_GETARG_INT64(2) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_messages " INT64_FORMAT " is out of range for queue \"%s\"",
						PG_GETARG_INT64(2), source_name),
				 errdetail("It must be at least 1, or NULL for all.")));

	queue_storage_begin_write(&session, "queue_redrive()");
	queue_open(source_name, AccessShareLock, QUEUE_PERM_MANAGE, &source);

	if (!PG_ARGISNULL(1))
		queue_open(queue_name_arg(fcinfo, 1), AccessShareLock, QUEUE_PERM_SEND, &destination);
	else
	{
		Datum		source_id = Int32GetDatum(source.queue_id);

		if (queue_plan_run(PLAN_QUEUE_PARENT, &source_id, NULL) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("queue \"%s\" is not the poison queue of any queue", source_name),
					 errhint("Name the queue to move its messages to as destination.")));
		queue_open(TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0],
													 SPI_tuptable->tupdesc, 1, &isnull)),
				   AccessShareLock, QUEUE_PERM_SEND, &destination);
	}
	if (destination.queue_id == source.queue_id)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cannot redrive queue \"%s\" into itself", source_name)));

	now = queue_writer_now();
	values[0] = Int32GetDatum(source.queue_id);
	values[1] = Int32GetDatum(destination.queue_id);
	values[2] = TimestampTzGetDatum(now);
	if (destination.message_ttl < 0)
		nulls[3] = 'n';
	else
		values[3] = TimestampTzGetDatum(queue_time_plus(now, destination.message_ttl,
														"message_ttl", destination.name));
	values[4] = PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2);
	if (PG_ARGISNULL(2))
		nulls[4] = 'n';
	queue_plan_run(PLAN_REDRIVE, values, nulls);
	moved = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (moved > 0)
		queue_wake_at_commit(destination.queue_id);

	queue_storage_end(&session);
	PG_RETURN_INT64(moved);
}
