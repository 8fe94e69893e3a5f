/*-------------------------------------------------------------------------
 *
 * poison.c
 *		Moving messages to a queue's poison queue.
 *
 * A message that was handed out max_dequeue_count times and becomes
 * visible again goes to <queue>-poison: queue_get moves the ones it meets
 * while claiming (claim.c), queue_update moves one
 * that is released (by_receipt.c), and the sweep (worker/sweep.c) moves
 * the rest, here.  All of them write the version queue_poison_version
 * makes, and are counted here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "wait/wait.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "utils/builtins.h"

/*
 * The version of a message moved from queue to its poison queue at now
 * (values and isnull hold the old version on entry): it keeps its id, body,
 * headers, inserted_at and dequeue_count, is visible at once, never expires,
 * and no receipt of it works any more.
 */
void
queue_poison_version(Datum *values, bool *isnull, const QueueInfo *queue,
					 TimestampTz now)
{
	if (MSG_HAS(MSG_PRIORITY))
		queue_message_arrives(queue->poison_queue_id, values[MSG_INDEX(MSG_PRIORITY)],
							  isnull[MSG_INDEX(MSG_PRIORITY)]);
	values[MSG_INDEX(MSG_LAST_LEASE)] = BoolGetDatum(false);
	values[MSG_INDEX(MSG_QUEUE_ID)] = Int32GetDatum(queue->poison_queue_id);
	values[MSG_INDEX(MSG_SOURCE_QUEUE)] = CStringGetTextDatum(queue->name);
	isnull[MSG_INDEX(MSG_SOURCE_QUEUE)] = false;
	values[MSG_INDEX(MSG_VISIBLE_AT)] = TimestampTzGetDatum(now);
	isnull[MSG_INDEX(MSG_EXPIRES_AT)] = true;
	isnull[MSG_INDEX(MSG_POP_RECEIPT)] = true;
	isnull[MSG_INDEX(MSG_HOLDER_PID)] = true;
	isnull[MSG_INDEX(MSG_HOLDER_START)] = true;
}

/* The columns a move to poison changes. */
static const int changed_columns[] = {
	MSG_QUEUE_ID, MSG_VISIBLE_AT, MSG_EXPIRES_AT, MSG_LAST_LEASE,
	MSG_POP_RECEIPT, MSG_SOURCE_QUEUE, MSG_HOLDER_PID, MSG_HOLDER_START
};

/*
 * Moves the messages whose ids are in ids (count of them, locked by the
 * caller's transaction) from queue to its poison queue, and counts them.
 * A message whose group's lock another transaction holds stays where it
 * is, and group_busy[i] says so: the hand-on of the group's turn would wait
 * for that transaction (groups.c).  Returns how many it moved.
 */
int
queue_move_to_poison(const QueueInfo *queue, const int64 *ids, int count,
					 TimestampTz now, bool *group_busy)
{
	MessagesTable table;
	Relation	index;
	IndexScanDesc scan;
	TupleTableSlot *found;
	TupleTableSlot *moved;
	GroupsLeft	left = {0};
	int			done = 0;
	int			i;

	Assert(queue->poison_queue_id != 0);
	queue_messages_open(&table, CMD_UPDATE, changed_columns,
						lengthof(changed_columns));
	index = queue_messages_index(MESSAGES_PKEY);
	found = table_slot_create(table.rel, NULL);
	moved = MakeSingleTupleTableSlot(RelationGetDescr(table.rel), &TTSOpsVirtual);
	scan = queue_index_beginscan(table.rel, index, table.snapshot, 1);

	for (i = 0; i < count; i++)
	{
		QueueIndexUpdate update_indexes;
		Datum		group_id;

		if (!queue_messages_find(scan, ids[i], found))
			continue;
		/* held until the transaction ends: the advance takes it again */
		if (queue_message_group(found, &group_id) &&
			!queue_id_lock_try(queue->queue_id, QUEUE_LOCK_GROUP, group_id))
		{
			group_busy[i] = true;
			continue;
		}
		queue_messages_copy_version(moved, found);
		queue_poison_version(moved->tts_values, moved->tts_isnull, queue, now);
		ExecStoreVirtualTuple(moved);
		/* locked by the caller: nobody else changed it since */
		simple_table_tuple_update(table.rel, &found->tts_tid, moved,
								  table.snapshot, &update_indexes);
		if (QUEUE_NEEDS_INDEX_ENTRIES(update_indexes))
			queue_messages_add_index_entries(&table, moved, true,
											 QUEUE_ONLY_SUMMARIZING(update_indexes));
		queue_groups_note_leaving(&left, found);
		done++;
	}

	index_endscan(scan);
	index_close(index, NoLock);
	ExecDropSingleTupleTableSlot(moved);
	ExecDropSingleTupleTableSlot(found);
	queue_messages_close(&table);
	/* it stops blocking its group: the next one's turn */
	queue_groups_advance(queue->queue_id, &left, now);
	queue_count_poisoned(queue, done);
	return done;
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
		queue_wake_at_commit(queue->poison_queue_id, count);
}
