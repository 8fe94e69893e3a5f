/*-------------------------------------------------------------------------
 *
 * deduplication.c
 *		A put's deduplication_id: one message per id and queue within the
 *		queue's deduplication window.
 *
 * A put with a deduplication_id first reserves it in
 * queue_storage.deduplication, with the receipt of the message it is about
 * to store.  The reservation is what an INSERT ... ON CONFLICT does, done
 * with the table access method (a statement cost a good part of such a
 * put's time, bench/reports/ordering.md): a put racing
 * another with the same id waits for it, and stores nothing if it
 * committed; a put that rolls back reserves nothing.  A reservation older
 * than the window is taken over (the sweep deletes them in the end).  A
 * put that finds the id reserved stores nothing and returns the first
 * put's receipt, its pop receipt only while that message is in its queue
 * and was never handed out.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* The columns of queue_storage.deduplication, in order. */
enum
{
	DEDUP_QUEUE_ID = 1, DEDUP_ID, DEDUP_MESSAGE_ID, DEDUP_VISIBLE_AT,
	DEDUP_INSERTED_AT, DEDUP_EXPIRES_AT, DEDUP_FORGET_AT, DEDUP_GROUP_ID,
	DEDUP_PRIORITY, DEDUP_NATTS = DEDUP_PRIORITY
};

/*
 * Inserts the reservation in slot, as INSERT ... ON CONFLICT DO NOTHING
 * does it: checks the unique index first (waiting for a transaction that
 * is inserting the same id), then inserts speculatively and checks again.
 * Returns true if it was inserted; false if the id is there already
 * (*conflict its row), stale or not.
 */
static bool
insert_speculatively(Relation rel, ResultRelInfo *rri, EState *estate,
					 TupleTableSlot *slot, List *arbiter, ItemPointer conflict)
{
	for (;;)
	{
		uint32		token;
		bool		clash = false;

		if (!queue_check_index_constraints(rri, slot, estate, conflict, arbiter))
			return false;
		token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
		table_tuple_insert_speculative(rel, slot, estate->es_output_cid, 0, NULL, token);
		(void) queue_insert_index_tuples_speculative(rri, slot, estate, arbiter, &clash);
		table_tuple_complete_speculative(rel, slot, token, !clash);
		SpeculativeInsertionLockRelease(GetCurrentTransactionId());
		if (!clash)
			return true;
		/* a racing insert of the same id won: look at it again */
	}
}

/*
 * Reserves deduplication_id (a text Datum) in queue for the message
 * message_id about to be put at now, with its receipt (receipt: the
 * columns of queue_receipt).  Returns true when the put goes on; false
 * when a put within the window has the id, and then receipt holds that
 * put's receipt.  Done with the table access method, as the executor would
 * run the INSERT ... ON CONFLICT, without starting an executor.
 */
bool
queue_deduplication_reserve(const QueueInfo *queue, Datum deduplication_id,
							TimestampTz now, Datum *receipt, bool *receipt_nulls)
{
	static const char *const columns[QUEUE_RECEIPT_NATTS] = {
		"message_id", "pop_receipt", "visible_at", "inserted_at", "expires_at",
		"group_id", "priority"
	};
	Relation	rel = table_open(queue_storage_relid("deduplication"), RowExclusiveLock);
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
	TupleTableSlot *existing = table_slot_create(rel, NULL);
	List	   *arbiter = NIL;
	ItemPointerData conflict;
	bool		reserved = false;
	PlanArgs	args;
	int			i;

	estate->es_output_cid = GetCurrentCommandId(true);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, true);
	for (i = 0; i < rri->ri_NumIndices; i++)
		if (rri->ri_IndexRelationDescs[i]->rd_index->indisprimary)
			arbiter = list_make1_oid(RelationGetRelid(rri->ri_IndexRelationDescs[i]));

	ExecClearTuple(slot);
	memset(slot->tts_isnull, false, sizeof(bool) * DEDUP_NATTS);
	slot->tts_values[DEDUP_QUEUE_ID - 1] = Int32GetDatum(queue->queue_id);
	slot->tts_values[DEDUP_ID - 1] = deduplication_id;
	slot->tts_values[DEDUP_MESSAGE_ID - 1] = receipt[0];
	slot->tts_values[DEDUP_VISIBLE_AT - 1] = receipt[2];
	slot->tts_values[DEDUP_INSERTED_AT - 1] = TimestampTzGetDatum(now);
	slot->tts_values[DEDUP_EXPIRES_AT - 1] = receipt[4];
	slot->tts_isnull[DEDUP_EXPIRES_AT - 1] = receipt_nulls[4];
	slot->tts_values[DEDUP_FORGET_AT - 1] =
		TimestampTzGetDatum(queue_time_plus(now, queue->deduplication_window,
											"deduplication_window", queue->name));
	slot->tts_values[DEDUP_GROUP_ID - 1] = receipt[5];
	slot->tts_isnull[DEDUP_GROUP_ID - 1] = receipt_nulls[5];
	slot->tts_values[DEDUP_PRIORITY - 1] = Int16GetDatum((int16) DatumGetInt32(receipt[6]));
	ExecStoreVirtualTuple(slot);

	PushActiveSnapshot(GetTransactionSnapshot());
	/* the constraint check may look at a conflicting row with it, as the executor's */
	estate->es_snapshot = GetActiveSnapshot();
	for (;;)
	{
		TM_FailureData tmfd;
		TM_Result	result;
		bool		isnull;

		if (insert_speculatively(rel, rri, estate, slot, arbiter, &conflict))
		{
			reserved = true;
			break;
		}
		/* the id is reserved: by a put within the window, or a stale one */
		result = table_tuple_lock(rel, &conflict, GetActiveSnapshot(), existing,
								  estate->es_output_cid, LockTupleExclusive,
								  LockWaitBlock, 0, &tmfd);
		/*
		 * Under REPEATABLE READ or SERIALIZABLE, a reservation committed
		 * after the transaction's snapshot is one it may not build on, as
		 * INSERT ... ON CONFLICT decides
		 */
		if (result == TM_Ok && IsolationUsesXactSnapshot() &&
			!table_tuple_satisfies_snapshot(rel, existing, GetActiveSnapshot()))
			queue_messages_serialization_failure();
		if (result == TM_Ok &&
			DatumGetTimestampTz(slot_getattr(existing, DEDUP_FORGET_AT, &isnull)) > now)
			break;				/* a repeat */
		if (result == TM_Ok)
		{
			/* past its window, not swept yet: taken over */
			simple_table_tuple_delete(rel, &conflict, GetActiveSnapshot());
			CommandCounterIncrement();
			continue;
		}
		if (result == TM_Invisible || IsolationUsesXactSnapshot())
			queue_messages_serialization_failure();
		/* changed or deleted meanwhile (READ COMMITTED): look again */
	}
	PopActiveSnapshot();

	ExecDropSingleTupleTableSlot(existing);
	ExecDropSingleTupleTableSlot(slot);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	if (reserved)
	{
		/* a repeat of the id later in the same batch sees this reservation */
		CommandCounterIncrement();
		return true;
	}

	queue_plan_begin(&args, PLAN_DEDUP_FIRST);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set(&args, "deduplication_id", deduplication_id);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	if (queue_plan_run(&args) != 1)
		elog(ERROR, "queue: deduplication_id of queue \"%s\" neither new nor found",
			 queue->name);
	for (i = 0; i < QUEUE_RECEIPT_NATTS; i++)
		receipt[i] = queue_row_value(SPI_tuptable, 0, columns[i], &receipt_nulls[i]);
	return false;
}

/*
 * Before a batch reserves its deduplication ids (ids, count of them, NULL
 * entries skipped) one by one in its own order: takes their locks in key
 * order, so that two batches with the same ids in other orders never wait
 * for each other's reservations in a circle.  A single put reserves one id
 * and needs no lock.
 */
void
queue_deduplication_lock_batch(const QueueInfo *queue, const Datum *ids,
							   const bool *nulls, int count)
{
	if (count > 1)
		queue_id_locks_take(queue->queue_id, QUEUE_LOCK_DEDUPLICATION, ids, nulls,
							count);
}

/* Forgets one batch of reservations past their window; returns how many. */
int64
queue_deduplication_forget(TimestampTz now, int batch_size)
{
	PlanArgs	args;
	bool		isnull;

	if (!queue_storage_has_ordering())
		return 0;
	queue_plan_begin(&args, PLAN_DEDUP_FORGET);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	queue_plan_run(&args);
	return DatumGetInt64(queue_row_value(SPI_tuptable, 0, "forgotten", &isnull));
}
