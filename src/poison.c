/*-------------------------------------------------------------------------
 *
 * poison.c
 *		Moving messages to a queue's poison queue.
 *
 * A message that was handed out max_dequeue_count times and becomes
 * visible again goes to <queue>-poison: queue_get moves the ones it meets
 * while claiming, queue_update moves one that is released, and the sweep
 * (maintain.c) moves the rest.  All of them come here.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "utils/builtins.h"

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
	QueueCounts counts = {0};
	SPITupleTable *moved;

	Assert(queue->poison_queue_id != 0);

	values[0] = message_ids;
	values[1] = Int32GetDatum(queue->poison_queue_id);
	values[2] = CStringGetTextDatum(queue->name);
	values[3] = TimestampTzGetDatum(now);
	queue_plan_run(PLAN_POISON_MOVE, values, NULL);
	moved = SPI_tuptable;

	counts.poisoned = (int64) moved->numvals;
	queue_counters_add(queue->queue_id, &counts);
	return moved;
}
