/*-------------------------------------------------------------------------
 *
 * claim.c
 *		The claim of queue_get, done on the messages table directly.
 *
 * The claim walks the claim index itself, with the table access method's
 * own calls (messages/table.c says why), and does what one UPDATE with a
 * FOR UPDATE SKIP LOCKED sub-select would:
 *
 *	- walk the visible messages of the queue in claim order (rules.h):
 *	  the priority levels above 0 in messages_priority, highest first, each
 *	  from its oldest visible message to its first invisible one (not while
 *	  the queue is known to hold none at those levels: claim_starts.c); level 0
 *	  in the claim index, which begins at the queue's start
 *	  (shmem/claim_starts.c) rather than at the bottom of the index, and
 *	  moves that start up past the dead entries it walked; then the levels
 *	  below 0.  The expired are passed by;
 *	- of a group, take a message only if it is the group's turn (rules.h),
 *	  and one per group on the way; when the walk is done and the get wants
 *	  more, take the next messages of the groups it took from, in put
 *	  order, one per group per round (fairness: a group of a million does
 *	  not delay a group of one);
 *	- lock each one FOR UPDATE SKIP LOCKED: a message another transaction
 *	  holds is passed over, never waited for.  Under READ COMMITTED a message
 *	  changed since the snapshot is locked in its newest version and checked
 *	  again; under REPEATABLE READ and SERIALIZABLE that is a serialization
 *	  failure, as for SELECT ... FOR UPDATE;
 *	- claim it: dequeue_count + 1 (last_lease once that reaches
 *	  max_dequeue_count), a fresh pop receipt, invisible until the lease
 *	  ends (never past expiry), and the holder when the lease ends with the
 *	  session; or, if it was handed out max_dequeue_count times
 *	  already, move it to the poison queue as queue_move_to_poison does;
 *	- update the row with the table AM and add index entries as the
 *	  executor would (partial indexes included).
 *
 * The rows are changed under the call's command id, which the scan's
 * snapshot does not see, so the walk never meets the versions it wrote.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "catalog/pg_collation_d.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

/* The columns a claim or a poison move changes. */
static const int changed_columns[] = {
	MSG_QUEUE_ID, MSG_VISIBLE_AT, MSG_EXPIRES_AT, MSG_DEQUEUE_COUNT,
	MSG_LAST_LEASE, MSG_POP_RECEIPT, MSG_SOURCE_QUEUE, MSG_HOLDER_PID,
	MSG_HOLDER_START, MSG_FIRST_DEQUEUED_AT
};

/*
 * The result columns of queue_get (the type queue_message), in order; the
 * type of versions before 1.3 has the first eight, before 1.6 the first ten.
 */
static const int result_columns[] = {
	MSG_MESSAGE_ID, MSG_BODY, MSG_HEADERS, MSG_DEQUEUE_COUNT,
	MSG_INSERTED_AT, MSG_EXPIRES_AT, MSG_VISIBLE_AT, MSG_POP_RECEIPT,
	MSG_GROUP_ID, MSG_PRIORITY, MSG_FIRST_DEQUEUED_AT
};

/* A group the get took a message of, and the last one it took. */
typedef struct TakenGroup
{
	Datum		group_id;
	int64		last_id;
	bool		done;			/* nothing more to take from it */
} TakenGroup;

/* One claim: what queue_claim works with. */
typedef struct Claim
{
	const QueueInfo *queue;
	ReturnSetInfo *rsinfo;
	bool		status_column;	/* the result starts with a status: claimed */
	Datum		claimed_status;	/* its text, made once per claim */
	MessagesTable table;
	TupleTableSlot *found;		/* the version a scan found */
	TupleTableSlot *locked;		/* its newest version, locked */
	TupleTableSlot *claimed_slot;	/* the new version */
	TimestampTz now;
	TimestampTz lease_end;
	bool		release_on_disconnect;
	pg_uuid_t  *receipts;
	int			want;
	int			claimed;
	int			poisoned;
	bool		levels_seen;	/* a walk of messages_priority met a message */
	bool		has_groups;		/* false on the table of versions before 1.3 */
	GroupWalk	groups;
	TakenGroup *taken;			/* want of them at most */
	int			taken_count;
	GroupsLeft	left;			/* groups of the messages moved to poison */
} Claim;

/*
 * The message in slot may still be claimed now: in the queue, visible and
 * alive.  The index scan already asked for the first two; a version found
 * by following an update chain must be checked again.
 */
static bool
claimable(TupleTableSlot *slot, int32 queue_id, TimestampTz now)
{
	return queue_message_alive_in(slot, queue_id, now) &&
		queue_message_visible(slot, now);
}

/*
 * The same for a message a get takes after the first of its group: it may
 * still wait for its turn (visible_at 'infinity').
 */
static bool
claimable_in_group(TupleTableSlot *slot, int32 queue_id, TimestampTz now)
{
	return queue_message_alive_in(slot, queue_id, now) &&
		(queue_message_visible(slot, now) || queue_message_waiting(slot));
}

/*
 * Locks the message the scan returned in found, FOR UPDATE SKIP LOCKED.
 * Returns false when it is passed over; otherwise locked holds the locked
 * version, still claimable (in_group: as claimable_in_group says), and
 * *newer (if not NULL) says whether that version is newer than the scan's.
 */
static bool
lock_message(Claim *claim, TupleTableSlot *found, bool in_group, bool *newer)
{
	ItemPointerData tid = found->tts_tid;
	TM_FailureData tmfd;
	TM_Result	result;
	uint8		flags = 0;

	if (!IsolationUsesXactSnapshot())
		flags |= TUPLE_LOCK_FLAG_FIND_LAST_VERSION;

	result = table_tuple_lock(claim->table.rel, &tid, claim->table.snapshot,
							  claim->locked, claim->table.cid, LockTupleExclusive,
							  LockWaitSkip, flags, &tmfd);
	switch (result)
	{
		case TM_Ok:
			/* a newer version than the snapshot's must still qualify */
			if (newer != NULL)
				*newer = tmfd.traversed;
			if (!tmfd.traversed)
				return true;
			return in_group ?
				claimable_in_group(claim->locked, claim->queue->queue_id, claim->now) :
				claimable(claim->locked, claim->queue->queue_id, claim->now);
		case TM_WouldBlock:
		case TM_SelfModified:
			return false;
		case TM_Updated:
		case TM_Deleted:
			if (IsolationUsesXactSnapshot())
				queue_messages_serialization_failure();
			return false;
		case TM_Invisible:
		default:
			elog(ERROR, "queue: unexpected result %d locking a message", (int) result);
	}
	return false;
}

/*
 * The next message of the scan visible to its snapshot, as
 * index_getnext_slot finds it.  *only_dead is set false as soon as the scan
 * passes an entry that is not dead to every transaction (the scan marks
 * those it finds dead, and passes the marked ones by).
 */
static bool
next_message(IndexScanDesc scan, TupleTableSlot *slot, bool *only_dead)
{
	for (;;)
	{
		if (index_getnext_tid(scan, ForwardScanDirection) == NULL)
			return false;
		if (index_fetch_heap(scan, slot))
			return true;
		if (!scan->kill_prior_tuple)
			*only_dead = false;
	}
}

/*
 * The new version of a locked message: claimed for the caller, or moved to
 * the poison queue.  values and isnull hold the old version on entry.
 */
static void
claim_row(Claim *claim, Datum *values, bool *isnull, bool poison,
		  pg_uuid_t *receipt)
{
	int32		dequeue_count;

	if (poison)
	{
		queue_poison_version(values, isnull, claim->queue, claim->now);
		return;
	}

	dequeue_count = DatumGetInt32(values[MSG_INDEX(MSG_DEQUEUE_COUNT)]) + 1;
	values[MSG_INDEX(MSG_DEQUEUE_COUNT)] = Int32GetDatum(dequeue_count);
	/*
	 * When this lease ends, the sweep moves the message (messages_last_lease).
	 * A get that read the limit just before a queue_alter changed it marks by
	 * the old limit; the next get routes by the new one, as it reads
	 * dequeue_count, not the mark.
	 */
	values[MSG_INDEX(MSG_LAST_LEASE)] =
		BoolGetDatum(queue_at_dequeue_limit(claim->queue, dequeue_count));
	if (!isnull[MSG_INDEX(MSG_EXPIRES_AT)] &&
		DatumGetTimestampTz(values[MSG_INDEX(MSG_EXPIRES_AT)]) < claim->lease_end)
		values[MSG_INDEX(MSG_VISIBLE_AT)] = values[MSG_INDEX(MSG_EXPIRES_AT)];
	else
		values[MSG_INDEX(MSG_VISIBLE_AT)] = TimestampTzGetDatum(claim->lease_end);
	values[MSG_INDEX(MSG_POP_RECEIPT)] = UUIDPGetDatum(receipt);
	isnull[MSG_INDEX(MSG_POP_RECEIPT)] = false;
	isnull[MSG_INDEX(MSG_HOLDER_PID)] = isnull[MSG_INDEX(MSG_HOLDER_START)] =
		!claim->release_on_disconnect;
	values[MSG_INDEX(MSG_HOLDER_PID)] = Int32GetDatum(MyProcPid);
	values[MSG_INDEX(MSG_HOLDER_START)] = TimestampTzGetDatum(MyStartTimestamp);
	/*
	 * The first time it is handed out (SQS's ApproximateFirstReceiveTimestamp);
	 * not for a message handed out before the update to 1.6 added the column.
	 */
	if (MSG_HAS(MSG_FIRST_DEQUEUED_AT) && dequeue_count == 1 &&
		isnull[MSG_INDEX(MSG_FIRST_DEQUEUED_AT)])
	{
		values[MSG_INDEX(MSG_FIRST_DEQUEUED_AT)] = TimestampTzGetDatum(claim->now);
		isnull[MSG_INDEX(MSG_FIRST_DEQUEUED_AT)] = false;
	}
}

/*
 * Appends the claimed message in slot to the function's result, after a
 * status column saying "claimed" when the result has one
 * (queue_delete_and_get's).
 */
static void
store_result(const Claim *claim, TupleTableSlot *slot)
{
	ReturnSetInfo *rsinfo = claim->rsinfo;
	Datum		row[lengthof(result_columns) + 1];
	bool		row_isnull[lengthof(result_columns) + 1];
	int			first = claim->status_column ? 1 : 0;
	int			i;

	Assert(rsinfo->setDesc->natts <= lengthof(result_columns) + first);
	if (claim->status_column)
	{
		row[0] = claim->claimed_status;
		row_isnull[0] = false;
	}
	for (i = 0; i + first < rsinfo->setDesc->natts; i++)
	{
		int			column = result_columns[i];

		/* a column the table of an earlier version lacks is NULL */
		row_isnull[first + i] = !MSG_HAS(column) ||
			slot->tts_isnull[MSG_INDEX(column)];
		row[first + i] = row_isnull[first + i] ? (Datum) 0 :
			slot->tts_values[MSG_INDEX(column)];
		/* priority is a smallint in the table, an integer in the type */
		if (column == MSG_PRIORITY && !row_isnull[first + i])
			row[first + i] = Int32GetDatum(DatumGetInt16(row[first + i]));
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, row_isnull);
}

/*
 * Claims the locked message (claim->locked), or moves it to the poison
 * queue if it is at the dequeue limit.  Returns true if it was claimed.
 */
static bool
take(Claim *claim)
{
	TupleTableSlot *locked = claim->locked;
	TupleTableSlot *claimed_slot = claim->claimed_slot;
	bool		poison;
	QueueIndexUpdate update_indexes;

	/* the new version: the locked one, changed */
	queue_messages_copy_version(claimed_slot, locked);
	poison = queue_at_dequeue_limit(claim->queue,
									DatumGetInt32(locked->tts_values[MSG_INDEX(MSG_DEQUEUE_COUNT)]));
	claim_row(claim, claimed_slot->tts_values, claimed_slot->tts_isnull, poison,
			  &claim->receipts[claim->claimed]);
	ExecStoreVirtualTuple(claimed_slot);

	simple_table_tuple_update(claim->table.rel, &locked->tts_tid, claimed_slot,
							  claim->table.snapshot, &update_indexes);
	if (QUEUE_NEEDS_INDEX_ENTRIES(update_indexes))
		queue_messages_add_index_entries(&claim->table, claimed_slot, true,
										 QUEUE_ONLY_SUMMARIZING(update_indexes));

	if (poison)
	{
		/* it stops blocking its group: the next one's turn comes after */
		claim->poisoned++;
		queue_groups_note_leaving(&claim->left, locked);
		return false;
	}
	store_result(claim, claimed_slot);
	claim->claimed++;
	return true;
}

/* Did the get take a message of group_id already? */
static bool
group_taken(Claim *claim, Datum group_id)
{
	int			i;

	for (i = 0; i < claim->taken_count; i++)
		if (DatumGetBool(DirectFunctionCall2Coll(texteq, C_COLLATION_OID,
												 claim->taken[i].group_id, group_id)))
			return true;
	return false;
}

/* Is it the turn of message_id of group_id, by the newest committed versions? */
static bool
turn_now(Claim *claim, Datum group_id, int64 message_id)
{
	Snapshot	latest = RegisterSnapshot(GetLatestSnapshot());
	GroupWalk	walk;
	bool		turn;

	(void) queue_group_walk_begin(&walk, claim->table.rel, latest,
								  claim->queue->queue_id, claim->now);
	turn = queue_group_turn_of(&walk, group_id, message_id);
	queue_group_walk_end(&walk);
	UnregisterSnapshot(latest);
	return turn;
}

/*
 * Claims the message a walk found (claim->found) if it may be claimed: the
 * walk of the claim order takes the first of a group only, and only in its
 * turn.
 */
static void
consider(Claim *claim, TupleTableSlot *found)
{
	Datum		group_id;
	bool		grouped;
	bool		newer = false;
	int64		message_id = 0;

	if (!claimable(found, claim->queue->queue_id, claim->now))
		return;
	grouped = claim->has_groups && queue_message_group(found, &group_id);
	if (grouped)
	{
		bool		isnull;

		message_id = DatumGetInt64(slot_getattr(found, MSG_ATTNUM(MSG_MESSAGE_ID), &isnull));
		if (group_taken(claim, group_id) ||
			!queue_group_turn_of(&claim->groups, group_id, message_id))
			return;
		group_id = PointerGetDatum(DatumGetTextPCopy(group_id));
	}
	if (!lock_message(claim, found, false, &newer))
		return;
	/*
	 * A newer version than the scan's (READ COMMITTED): its group may have
	 * moved on since the snapshot the turn was asked with.  Ask again with
	 * the newest committed versions.
	 */
	if (grouped && newer && !turn_now(claim, group_id, message_id))
		return;
	if (!take(claim) || !grouped)
		return;
	claim->taken[claim->taken_count].group_id = group_id;
	claim->taken[claim->taken_count].last_id =
		DatumGetInt64(claim->claimed_slot->tts_values[MSG_INDEX(MSG_MESSAGE_ID)]);
	claim->taken[claim->taken_count].done = false;
	claim->taken_count++;
}

/*
 * Walks the priority levels of messages_priority above 0 (above) or below
 * 0, highest first: each level from its first visible message to its first
 * invisible one, then on at the next level down.
 */
static void
walk_levels(Claim *claim, Relation index, bool above)
{
	IndexScanDesc scan = queue_index_beginscan(claim->table.rel, index,
											   claim->table.snapshot, 3);
	int16		below = above ? PG_INT16_MAX : 0;	/* the levels under it */
	bool		only_dead = false;
	bool		next_level = true;

	while (next_level && claim->claimed < claim->want)
	{
		ScanKeyData keys[3];
		bool		isnull;

		ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(claim->queue->queue_id));
		ScanKeyInit(&keys[1], 2, BTLessStrategyNumber, F_INT2LT,
					Int16GetDatum(below));
		/* as many keys as the scan began with, always */
		ScanKeyInit(&keys[2], 2, BTGreaterStrategyNumber, F_INT2GT,
					Int16GetDatum(above ? 0 : PG_INT16_MIN));
		index_rescan(scan, keys, 3, NULL, 0);

		next_level = false;
		while (claim->claimed < claim->want &&
			   next_message(scan, claim->found, &only_dead))
		{
			CHECK_FOR_INTERRUPTS();
			claim->levels_seen = true;
			if (!queue_message_visible(claim->found, claim->now))
			{
				/* the rest of this level is in flight, delayed or waiting */
				below = DatumGetInt16(slot_getattr(claim->found, MSG_ATTNUM(MSG_PRIORITY), &isnull));
				next_level = true;
				break;
			}
			consider(claim, claim->found);
		}
	}
	index_endscan(scan);
}

/*
 * Does the queue hold no message at a priority other than 0, by the newest
 * committed versions (claim_starts.c says why those)?
 */
static bool
levels_empty(Claim *claim, Relation index)
{
	Snapshot	latest = RegisterSnapshot(GetLatestSnapshot());
	IndexScanDesc scan = queue_index_beginscan(claim->table.rel, index, latest, 1);
	ScanKeyData key;
	bool		empty;

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(claim->queue->queue_id));
	index_rescan(scan, &key, 1, NULL, 0);
	empty = !index_getnext_slot(scan, ForwardScanDirection, claim->found);
	index_endscan(scan);
	UnregisterSnapshot(latest);
	return empty;
}

/*
 * Walks level 0 in the claim index, from the queue's start in shared
 * memory (shmem/claim_starts.c), and moves that start up past the dead
 * entries it walked.
 */
static void
walk_claim_index(Claim *claim, const ClaimTicket *ticket)
{
	Relation	index = queue_messages_index(MESSAGES_CLAIM);
	IndexScanDesc scan;
	ScanKeyData keys[3];
	bool		only_dead = true;	/* so far the walk passed only dead entries */
	TimestampTz first_alive = DT_NOBEGIN;

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(claim->queue->queue_id));
	ScanKeyInit(&keys[1], 2, BTLessEqualStrategyNumber, F_TIMESTAMPTZ_LE,
				TimestampTzGetDatum(claim->now));
	ScanKeyInit(&keys[2], 2, BTGreaterEqualStrategyNumber, F_TIMESTAMPTZ_GE,
				TimestampTzGetDatum(ticket->start));
	scan = queue_index_beginscan(claim->table.rel, index, claim->table.snapshot, 3);
	index_rescan(scan, keys, 3, NULL, 0);

	while (claim->claimed < claim->want &&
		   next_message(scan, claim->found, &only_dead))
	{
		CHECK_FOR_INTERRUPTS();
		if (only_dead)
		{
			/* the first live entry: nothing below it can be claimed again */
			bool		isnull;

			first_alive = DatumGetTimestampTz(slot_getattr(claim->found,
														   MSG_ATTNUM(MSG_VISIBLE_AT), &isnull));
			only_dead = false;
		}
		consider(claim, claim->found);
	}

	/* a walk to the end that passed only dead entries: none below now */
	if (only_dead && claim->claimed < claim->want)
		first_alive = claim->now;
	queue_claim_end(claim->queue->queue_id, ticket, first_alive, claim->now);

	index_endscan(scan);
	index_close(index, NoLock);
}

/*
 * After the walk, while the get wants more: the next message of each group
 * it took from, in put order, one group after the other, round after round.
 * A group whose next message is in flight, locked or gone is done.
 */
static void
take_rest_of_groups(Claim *claim)
{
	bool		more = true;

	while (more && claim->claimed < claim->want)
	{
		int			i;

		more = false;
		for (i = 0; i < claim->taken_count && claim->claimed < claim->want; i++)
		{
			TakenGroup *group = &claim->taken[i];
			TupleTableSlot *next;

			if (group->done)
				continue;
			next = queue_group_next(&claim->groups, group->group_id, group->last_id);
			if (next == NULL ||
				!claimable_in_group(next, claim->queue->queue_id, claim->now) ||
				!lock_message(claim, next, true, NULL))
			{
				group->done = true;
				continue;
			}
			(void) take(claim);
			group->last_id =
				DatumGetInt64(claim->claimed_slot->tts_values[MSG_INDEX(MSG_MESSAGE_ID)]);
			more = true;
		}
	}
}

/*
 * Claims up to want visible messages of queue in claim order, and appends
 * them to the result of the set-returning function fcinfo (set up with
 * InitMaterializedSRF), after a status column when status_column;
 * messages at the dequeue limit go to the poison queue on the way.
 * Returns how many were claimed; *poisoned is how many were moved.  Must
 * run inside a StorageSession.
 */
int
queue_claim(FunctionCallInfo fcinfo, bool status_column, const QueueInfo *queue,
			int want, int64 visibility_timeout, bool release_on_disconnect,
			int *poisoned)
{
	Claim		claim = {0};
	ClaimTicket ticket;
	Relation	priorities;

	claim.queue = queue;
	claim.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	claim.status_column = status_column;
	if (status_column)
		claim.claimed_status = CStringGetTextDatum("claimed");
	claim.now = queue_claim_begin(queue->queue_id, &ticket);
	claim.lease_end = claim.now + visibility_timeout;
	claim.release_on_disconnect = release_on_disconnect;
	claim.receipts = queue_new_receipts(want);
	claim.want = want;
	claim.taken = palloc(sizeof(TakenGroup) * want);

	queue_messages_open(&claim.table, CMD_UPDATE, changed_columns,
						lengthof(changed_columns));
	claim.found = table_slot_create(claim.table.rel, NULL);
	claim.locked = table_slot_create(claim.table.rel, NULL);
	claim.claimed_slot = MakeSingleTupleTableSlot(RelationGetDescr(claim.table.rel),
												  &TTSOpsVirtual);
	claim.has_groups = queue_group_walk_begin(&claim.groups, claim.table.rel,
											  claim.table.snapshot, queue->queue_id,
											  claim.now);

	priorities = ticket.skip_levels ? NULL : queue_messages_index(MESSAGES_PRIORITY);
	if (priorities != NULL)
		walk_levels(&claim, priorities, true);
	walk_claim_index(&claim, &ticket);
	if (priorities != NULL)
	{
		/* the levels below 0 only when those above left the get wanting */
		if (claim.claimed < claim.want)
			walk_levels(&claim, priorities, false);
		if (!claim.levels_seen &&
			queue_levels_may_mark(queue->queue_id, &ticket) &&
			levels_empty(&claim, priorities))
			queue_levels_found_empty(queue->queue_id, &ticket, claim.now);
		index_close(priorities, NoLock);
	}
	if (claim.has_groups)
	{
		take_rest_of_groups(&claim);
		queue_group_walk_end(&claim.groups);
	}

	ExecDropSingleTupleTableSlot(claim.claimed_slot);
	ExecDropSingleTupleTableSlot(claim.locked);
	ExecDropSingleTupleTableSlot(claim.found);
	queue_messages_close(&claim.table);

	queue_groups_advance(queue->queue_id, &claim.left, claim.now);
	*poisoned = claim.poisoned;
	return claim.claimed;
}
