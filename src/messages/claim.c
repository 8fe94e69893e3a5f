/*-------------------------------------------------------------------------
 *
 * claim.c
 *		The claim of queue_get, done on the messages table directly.
 *
 * The claim walks the claim index itself, with the table access method's
 * own calls (messages/table.c says why), and does what one UPDATE with a
 * FOR UPDATE SKIP LOCKED sub-select would:
 *
 *	- start at the first message of the queue with visible_at <= now, in
 *	  (visible_at, message_id) order, skipping the expired; the walk begins
 *	  at the queue's start (shmem/claim_starts.c) rather than at the bottom of the
 *	  index, and moves that start up past the dead entries it walked;
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
#include "queue.h"
#include "messages/messages.h"
#include "shmem/shmem.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

/* The columns a claim or a poison move changes. */
static const int changed_columns[] = {
	MSG_QUEUE_ID, MSG_VISIBLE_AT, MSG_EXPIRES_AT, MSG_DEQUEUE_COUNT,
	MSG_LAST_LEASE, MSG_POP_RECEIPT, MSG_SOURCE_QUEUE, MSG_HOLDER_PID,
	MSG_HOLDER_START
};

/* The result columns of queue_get (the type queue_message), in order. */
static const int result_columns[] = {
	MSG_MESSAGE_ID, MSG_BODY, MSG_HEADERS, MSG_DEQUEUE_COUNT,
	MSG_INSERTED_AT, MSG_EXPIRES_AT, MSG_VISIBLE_AT, MSG_POP_RECEIPT
};

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
 * Locks the message the scan returned in found, FOR UPDATE SKIP LOCKED.
 * Returns false when it is passed over; otherwise locked holds the locked
 * version, still claimable.
 */
static bool
lock_message(Relation rel, TupleTableSlot *found, TupleTableSlot *locked,
			 Snapshot snapshot, CommandId cid, int32 queue_id, TimestampTz now)
{
	ItemPointerData tid = found->tts_tid;
	TM_FailureData tmfd;
	TM_Result	result;
	uint8		flags = 0;

	if (!IsolationUsesXactSnapshot())
		flags |= TUPLE_LOCK_FLAG_FIND_LAST_VERSION;

	result = table_tuple_lock(rel, &tid, snapshot, locked,
							  cid, LockTupleExclusive,
							  LockWaitSkip, flags, &tmfd);
	switch (result)
	{
		case TM_Ok:
			/* a newer version than the snapshot's must still qualify */
			return !tmfd.traversed || claimable(locked, queue_id, now);
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
claim_row(Datum *values, bool *isnull, const QueueInfo *queue, bool poison,
		  TimestampTz now, TimestampTz lease_end, bool release_on_disconnect,
		  pg_uuid_t *receipt)
{
	int32		dequeue_count;
	int			i;

	if (poison)
	{
		queue_poison_version(values, isnull, queue, now);
		return;
	}

	dequeue_count = DatumGetInt32(values[MSG_DEQUEUE_COUNT - 1]) + 1;
	values[MSG_DEQUEUE_COUNT - 1] = Int32GetDatum(dequeue_count);
	/*
	 * When this lease ends, the sweep moves the message (messages_last_lease).
	 * A get that read the limit just before a queue_alter changed it marks by
	 * the old limit; the next get routes by the new one, as it reads
	 * dequeue_count, not the mark.
	 */
	values[MSG_LAST_LEASE - 1] =
		BoolGetDatum(queue_at_dequeue_limit(queue, dequeue_count));
	if (!isnull[MSG_EXPIRES_AT - 1] &&
		DatumGetTimestampTz(values[MSG_EXPIRES_AT - 1]) < lease_end)
		values[MSG_VISIBLE_AT - 1] = values[MSG_EXPIRES_AT - 1];
	else
		values[MSG_VISIBLE_AT - 1] = TimestampTzGetDatum(lease_end);
	values[MSG_POP_RECEIPT - 1] = UUIDPGetDatum(receipt);
	isnull[MSG_POP_RECEIPT - 1] = false;
	for (i = MSG_HOLDER_PID; i <= MSG_HOLDER_START; i++)
		isnull[i - 1] = !release_on_disconnect;
	values[MSG_HOLDER_PID - 1] = Int32GetDatum(MyProcPid);
	values[MSG_HOLDER_START - 1] = TimestampTzGetDatum(MyStartTimestamp);
}

/* Appends the claimed message in slot to the function's result. */
static void
store_result(ReturnSetInfo *rsinfo, TupleTableSlot *slot)
{
	Datum		row[lengthof(result_columns)];
	bool		row_isnull[lengthof(result_columns)];
	int			i;

	for (i = 0; i < lengthof(result_columns); i++)
	{
		row[i] = slot->tts_values[result_columns[i] - 1];
		row_isnull[i] = slot->tts_isnull[result_columns[i] - 1];
	}
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, row_isnull);
}

/*
 * Claims up to want visible messages of queue, oldest visible first, and
 * appends them to the result of the set-returning function fcinfo (set up
 * with InitMaterializedSRF); messages at the dequeue limit go to the poison
 * queue on the way.  Returns how many were claimed; *poisoned is how many
 * were moved.  Must run inside a StorageSession.
 */
int
queue_claim(FunctionCallInfo fcinfo, const QueueInfo *queue, int want,
			int64 visibility_timeout, bool release_on_disconnect,
			int *poisoned)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ClaimTicket ticket;
	TimestampTz now = queue_claim_begin(queue->queue_id, &ticket);
	TimestampTz lease_end = now + visibility_timeout;
	bool		only_dead = true;	/* so far the walk passed only dead entries */
	TimestampTz first_alive = DT_NOBEGIN;
	pg_uuid_t  *receipts = queue_new_receipts(want);
	MessagesTable table;
	Relation	index;
	IndexScanDesc scan;
	ScanKeyData keys[3];
	TupleTableSlot *found;
	TupleTableSlot *locked;
	TupleTableSlot *claimed_slot;
	int			claimed = 0;

	*poisoned = 0;
	queue_messages_open(&table, CMD_UPDATE, changed_columns,
						lengthof(changed_columns));
	index = queue_messages_index(MESSAGES_CLAIM);
	found = table_slot_create(table.rel, NULL);
	locked = table_slot_create(table.rel, NULL);
	claimed_slot = MakeSingleTupleTableSlot(RelationGetDescr(table.rel),
											&TTSOpsVirtual);

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(queue->queue_id));
	ScanKeyInit(&keys[1], 2, BTLessEqualStrategyNumber, F_TIMESTAMPTZ_LE,
				TimestampTzGetDatum(now));
	ScanKeyInit(&keys[2], 2, BTGreaterEqualStrategyNumber, F_TIMESTAMPTZ_GE,
				TimestampTzGetDatum(ticket.start));
	scan = queue_index_beginscan(table.rel, index, table.snapshot, 3);
	index_rescan(scan, keys, 3, NULL, 0);

	while (claimed < want && next_message(scan, found, &only_dead))
	{
		bool		poison;
		QueueIndexUpdate update_indexes;

		CHECK_FOR_INTERRUPTS();
		if (only_dead)
		{
			/* the first live entry: nothing below it can be claimed again */
			bool		isnull;

			first_alive = DatumGetTimestampTz(slot_getattr(found, MSG_VISIBLE_AT, &isnull));
			only_dead = false;
		}
		if (!claimable(found, queue->queue_id, now) ||
			!lock_message(table.rel, found, locked, table.snapshot, table.cid,
						  queue->queue_id, now))
			continue;

		/* the new version: the locked one, changed */
		queue_messages_copy_version(claimed_slot, locked);
		poison = queue_at_dequeue_limit(queue,
										DatumGetInt32(locked->tts_values[MSG_DEQUEUE_COUNT - 1]));
		claim_row(claimed_slot->tts_values, claimed_slot->tts_isnull, queue,
				  poison, now, lease_end, release_on_disconnect,
				  &receipts[claimed]);
		ExecStoreVirtualTuple(claimed_slot);

		simple_table_tuple_update(table.rel, &locked->tts_tid, claimed_slot,
								  table.snapshot, &update_indexes);
		if (QUEUE_NEEDS_INDEX_ENTRIES(update_indexes))
			queue_messages_add_index_entries(&table, claimed_slot, true,
											 QUEUE_ONLY_SUMMARIZING(update_indexes));

		if (poison)
			(*poisoned)++;
		else
		{
			store_result(rsinfo, claimed_slot);
			claimed++;
		}
	}

	/* a walk to the end that passed only dead entries: none below now */
	if (only_dead && claimed < want)
		first_alive = now;
	queue_claim_end(queue->queue_id, &ticket, first_alive, now);

	index_endscan(scan);
	index_close(index, NoLock);
	ExecDropSingleTupleTableSlot(claimed_slot);
	ExecDropSingleTupleTableSlot(locked);
	ExecDropSingleTupleTableSlot(found);
	queue_messages_close(&table);
	return claimed;
}
