/*-------------------------------------------------------------------------
 *
 * groups.c
 *		The messages of a group: their lock, their order, their turn.
 *
 * Messages with the same group_id in one queue go out in put order, one
 * group in flight at a time (the rule "group turn", rules.h).  Only the
 * first alive message of a group has its own visible_at; the messages
 * behind it wait with visible_at 'infinity', so a group of a million
 * messages puts one entry before the claim, not a million.  When the first
 * message leaves the queue (deleted, expired, moved to the poison queue),
 * the next one is made visible here (queue_groups_advance).
 *
 * A put into a group and the advance of a group take the group's lock, a
 * transaction-level advisory lock of our own space, so that the two never
 * miss each other: a put sees the message whose leaving is in progress
 * and waits behind it, then parks its message or not by what it sees after
 * that transaction ended.  Message ids are drawn under the lock, so put
 * order is commit order.  Claims take no group lock: they only ask the
 * turn, which holds whatever the parking says (a message parked or not, a
 * get hands out only the first of its group).  The sweep never waits for
 * a group's lock (a producer may keep it for as long as its transaction
 * stays open): it leaves a message whose group is locked where it is, for
 * a later sweep, and so the hand-on with it (worker/sweep.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "wait/wait.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_collation_d.h"
#include "miscadmin.h"
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"

/*
 * Starts walks of groups of queue_id at now, over heap with snapshot.
 * Returns false on the table of a version before 1.3 (no groups there).
 * The index is opened by the first walk: most claims meet no group.
 */
bool
queue_group_walk_begin(GroupWalk *walk, Relation heap, Snapshot snapshot,
					   int32 queue_id, TimestampTz now)
{
	walk->heap = heap;
	walk->snapshot = snapshot;
	walk->index = NULL;
	walk->queue_id = queue_id;
	walk->now = now;
	return queue_messages_has_index(MESSAGES_GROUP);
}

void
queue_group_walk_end(GroupWalk *walk)
{
	if (walk->index == NULL)
		return;
	index_endscan(walk->scan);
	index_close(walk->index, NoLock);
	ExecDropSingleTupleTableSlot(walk->slot);
	walk->index = NULL;
}

/*
 * Walks group_id from its first message after message id after (0: all),
 * forward; or, backward, from its last message before message id after.
 * The message's own versions are in neither walk: a group's first message
 * claimed again and again leaves its dead index entries out of the way.
 */
static void
walk_from(GroupWalk *walk, Datum group_id, int64 after, ScanDirection direction)
{
	ScanKeyData keys[3];

	if (walk->index == NULL)
	{
		walk->index = queue_messages_index(MESSAGES_GROUP);
		walk->scan = queue_index_beginscan(walk->heap, walk->index, walk->snapshot, 3);
		walk->slot = table_slot_create(walk->heap, NULL);
	}
	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(walk->queue_id));
	/* the index's group_id is COLLATE "C", ScanKeyInit's collation */
	ScanKeyInit(&keys[1], 2, BTEqualStrategyNumber, F_TEXTEQ, group_id);
	if (ScanDirectionIsForward(direction))
		ScanKeyInit(&keys[2], 3, BTGreaterStrategyNumber, F_INT8GT,
					Int64GetDatum(after));
	else
		ScanKeyInit(&keys[2], 3, BTLessStrategyNumber, F_INT8LT,
					Int64GetDatum(after));
	index_rescan(walk->scan, keys, 3, NULL, 0);
	walk->direction = direction;
}

/* The next alive message of the walk; NULL after the last. */
static TupleTableSlot *
walk_next(void *arg)
{
	GroupWalk  *walk = (GroupWalk *) arg;

	while (index_getnext_slot(walk->scan, walk->direction, walk->slot))
		if (queue_message_alive_in(walk->slot, walk->queue_id, walk->now))
			return walk->slot;
	return NULL;
}

/* The alive messages before the one the walk is about (see below). */
static TupleTableSlot *
walk_before(void *arg)
{
	GroupWalk  *walk = (GroupWalk *) arg;

	walk_from(walk, walk->group_id, walk->message_id, BackwardScanDirection);
	return walk_next(walk);
}

/* The alive messages after it: the first call starts the walk. */
static TupleTableSlot *
walk_after(void *arg)
{
	GroupWalk  *walk = (GroupWalk *) arg;

	if (ScanDirectionIsBackward(walk->direction))
		walk_from(walk, walk->group_id, walk->message_id, ForwardScanDirection);
	return walk_next(walk);
}

/* Is it the turn of message_id, of group_id (rules.h: group turn)? */
bool
queue_group_turn_of(GroupWalk *walk, Datum group_id, int64 message_id)
{
	walk->group_id = group_id;
	walk->message_id = message_id;
	return queue_group_turn(walk_before, walk_after, walk, walk->now);
}

/*
 * The alive message of group_id that follows message id after, in the
 * walk's slot; NULL if there is none.
 */
TupleTableSlot *
queue_group_next(GroupWalk *walk, Datum group_id, int64 after)
{
	walk_from(walk, group_id, after, ForwardScanDirection);
	return walk_next(walk);
}

/* The group_id of the message in slot, or false if it has none. */
bool
queue_message_group(TupleTableSlot *slot, Datum *group_id)
{
	bool		isnull = true;

	if (MSG_HAS(MSG_GROUP_ID))
		*group_id = slot_getattr(slot, MSG_ATTNUM(MSG_GROUP_ID), &isnull);
	return !isnull;
}

/* Adds a copy of group_id to left. */
static void
note_left(GroupsLeft *left, Datum group_id)
{
	if (left->count == left->size)
	{
		left->size = Max(8, left->size * 2);
		left->group_ids = left->group_ids == NULL ?
			palloc(sizeof(Datum) * left->size) :
			repalloc(left->group_ids, sizeof(Datum) * left->size);
	}
	left->group_ids[left->count++] = PointerGetDatum(DatumGetTextPCopy(group_id));
}

/*
 * Notes that the message in slot leaves its queue, if it has a group: the
 * group's next message may have to be made visible (queue_groups_advance).
 */
void
queue_groups_note_leaving(GroupsLeft *left, TupleTableSlot *slot)
{
	Datum		group_id;

	if (queue_message_group(slot, &group_id))
		note_left(left, group_id);
}

/* The columns an advance changes. */
static const int advance_columns[] = {MSG_VISIBLE_AT};

/*
 * After messages of the groups in left left queue_id: in each group whose
 * first alive message waits, that message becomes visible at now.  Takes
 * the groups' locks, so that a put into the group in progress is waited
 * for and seen; the walk reads the newest committed versions.  Run it with
 * the messages table closed.
 */
void
queue_groups_advance(int32 queue_id, GroupsLeft *left, TimestampTz now)
{
	MessagesTable table;
	GroupWalk	walk;
	Snapshot	latest;
	TupleTableSlot *visible;
	int			i;

	if (left->count == 0)
		return;
	queue_id_locks_take(queue_id, QUEUE_LOCK_GROUP, left->group_ids, NULL,
						left->count);

	queue_messages_open(&table, CMD_UPDATE, advance_columns,
						lengthof(advance_columns));
	/* after the open's CommandCounterIncrement: sees this call's deletes */
	latest = RegisterSnapshot(GetLatestSnapshot());
	if (!queue_group_walk_begin(&walk, table.rel, latest, queue_id, now))
		elog(ERROR, "queue: a message has a group but messages_group is missing");
	visible = MakeSingleTupleTableSlot(RelationGetDescr(table.rel), &TTSOpsVirtual);

	for (i = 0; i < left->count; i++)
	{
		TupleTableSlot *first = queue_group_next(&walk, left->group_ids[i], 0);
		ItemPointerData tid;
		TM_FailureData tmfd;
		QueueIndexUpdate update_indexes;

		if (first == NULL || !queue_message_waiting(first))
			continue;
		tid = first->tts_tid;
		/* the newest version, locked: still the waiting first one? */
		if (table_tuple_lock(table.rel, &tid, latest, first, table.cid,
							 LockTupleExclusive, LockWaitBlock,
							 TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd) != TM_Ok ||
			!queue_message_waiting(first))
			continue;
		queue_messages_copy_version(visible, first);
		/* a time the claims' start in shared memory knows of (claim_starts.c) */
		visible->tts_values[MSG_INDEX(MSG_VISIBLE_AT)] = TimestampTzGetDatum(queue_writer_now());
		ExecStoreVirtualTuple(visible);
		simple_table_tuple_update(table.rel, &tid, visible, latest,
								  &update_indexes);
		if (QUEUE_NEEDS_INDEX_ENTRIES(update_indexes))
			queue_messages_add_index_entries(&table, visible, true,
											 QUEUE_ONLY_SUMMARIZING(update_indexes));
		queue_wake_at_commit(queue_id, 1);
	}

	ExecDropSingleTupleTableSlot(visible);
	queue_group_walk_end(&walk);
	UnregisterSnapshot(latest);
	queue_messages_close(&table);
	left->count = 0;
}

/*
 * For a put of count messages into queue_id (table open), whose groups
 * are group_ids (nulls[i]: none): first[i] is the place in the batch of the
 * first message of message i's group (-1: no group), and the result says,
 * at those places, whether the group has alive messages in the queue
 * already, as the newest committed versions show them.  The groups must be
 * locked (queue_id_locks_take) before the messages' ids were drawn.
 */
bool *
queue_groups_occupied(MessagesTable *table, int32 queue_id, const Datum *group_ids,
					  const bool *nulls, int count, TimestampTz now, int *first)
{
	bool	   *occupied = palloc0(sizeof(bool) * count);
	uint32	   *keys = palloc(sizeof(uint32) * count);
	Snapshot	latest = RegisterSnapshot(GetLatestSnapshot());
	GroupWalk	walk;
	int			i;
	int			j;

	if (!queue_group_walk_begin(&walk, table->rel, latest, queue_id, now))
		elog(ERROR, "queue: messages_group is missing");
	for (i = 0; i < count; i++)
	{
		first[i] = -1;
		if (nulls[i])
			continue;
		/*
		 * A look back over the groups met so far, by key first: batches
		 * are at most QUEUE_MAX_BATCH messages.
		 */
		keys[i] = queue_id_lock_key(group_ids[i]);
		for (j = 0; j < i && first[i] < 0; j++)
			if (!nulls[j] && first[j] == j && keys[j] == keys[i] &&
				DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID,
													 group_ids[i], group_ids[j])))
				first[i] = j;
		if (first[i] < 0)
		{
			first[i] = i;
			occupied[i] = queue_group_next(&walk, group_ids[i], 0) != NULL;
		}
	}
	queue_group_walk_end(&walk);
	UnregisterSnapshot(latest);
	pfree(keys);
	return occupied;
}

/* Notes the groups of array (text[], from a statement) as left. */
void
queue_groups_note_array(GroupsLeft *left, Datum array)
{
	Datum	   *ids;
	bool	   *nulls;
	int			count;
	int			i;

	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &ids, &nulls, &count);
	for (i = 0; i < count; i++)
	{
		if (!nulls[i])
			note_left(left, ids[i]);
	}
}
