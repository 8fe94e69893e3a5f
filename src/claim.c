/*-------------------------------------------------------------------------
 *
 * claim.c
 *		The claim of queue_get, done on the messages table directly.
 *
 * A get is the hottest statement of a queue, and as SQL it was also its
 * most expensive: under callgrind, starting and ending the executor for
 * one UPDATE with its sub-select (the expressions compiled, five indexes
 * opened, the plan revalidated) took more instructions than the work it
 * then did.  So the claim walks the claim index itself, with the table
 * access method's own calls, and does what that statement did:
 *
 *	- start at the first message of the queue with visible_at <= now, in
 *	  (visible_at, message_id) order, skipping the expired;
 *	- lock each one FOR UPDATE SKIP LOCKED: a message another transaction
 *	  holds is passed over, never waited for.  Under READ COMMITTED a message
 *	  changed since the snapshot is locked in its newest version and checked
 *	  again; under REPEATABLE READ and SERIALIZABLE that is a serialization
 *	  failure, as for SELECT ... FOR UPDATE;
 *	- claim it: dequeue_count + 1, a fresh pop receipt, invisible until the
 *	  lease ends (never past expiry), and the holder when the lease ends
 *	  with the session; or, if it was handed out max_dequeue_count times
 *	  already, move it to the poison queue as queue_move_to_poison does;
 *	- update the row with the table AM and add index entries as the
 *	  executor would (partial indexes included).
 *
 * The rows are changed under the current command id and the scan's
 * snapshot predates it, so the walk never meets the versions it wrote.
 * Nothing here builds SQL; the relation and index are found by name in the
 * storage schema once per backend.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

/* The columns of queue_storage.messages (sql/queue--1.0.sql), in order. */
enum
{
	COL_MESSAGE_ID = 1,
	COL_QUEUE_ID,
	COL_VISIBLE_AT,
	COL_EXPIRES_AT,
	COL_DEQUEUE_COUNT,
	COL_POP_RECEIPT,
	COL_INSERTED_AT,
	COL_SOURCE_QUEUE,
	COL_HOLDER_PID,
	COL_HOLDER_START,
	COL_HEADERS,
	COL_BODY,
	MESSAGE_NATTS = COL_BODY
};

static const char *const column_names[MESSAGE_NATTS] = {
	"message_id", "queue_id", "visible_at", "expires_at", "dequeue_count",
	"pop_receipt", "inserted_at", "source_queue", "holder_pid",
	"holder_start", "headers", "body"
};

/* The columns a claim or a poison move changes. */
static const int changed_columns[] = {
	COL_QUEUE_ID, COL_VISIBLE_AT, COL_EXPIRES_AT, COL_DEQUEUE_COUNT,
	COL_POP_RECEIPT, COL_SOURCE_QUEUE, COL_HOLDER_PID, COL_HOLDER_START
};

/* The result columns of queue_get (the type queue_message), in order. */
static const int result_columns[] = {
	COL_MESSAGE_ID, COL_BODY, COL_HEADERS, COL_DEQUEUE_COUNT,
	COL_INSERTED_AT, COL_EXPIRES_AT, COL_VISIBLE_AT, COL_POP_RECEIPT
};

/* The messages table and its claim index; InvalidOid until looked up. */
static Oid	messages_relid = InvalidOid;
static Oid	claim_index_relid = InvalidOid;

static void
forget_relations(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == messages_relid ||
		relid == claim_index_relid)
		messages_relid = claim_index_relid = InvalidOid;
}

/*
 * Opens the messages table, checking once per backend that its columns are
 * the ones this file was written for.
 */
static Relation
open_messages(void)
{
	static bool callback_registered = false;
	Relation	rel;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(forget_relations, (Datum) 0);
		callback_registered = true;
	}
	if (!OidIsValid(messages_relid) || !OidIsValid(claim_index_relid))
	{
		Oid			relid = queue_storage_relid("messages");
		Oid			indexid = queue_storage_relid("messages_claim");
		TupleDesc	desc;
		int			i;

		if (!OidIsValid(relid) || !OidIsValid(indexid))
			elog(ERROR, "queue: storage table messages or index messages_claim is missing");

		rel = table_open(relid, RowExclusiveLock);
		desc = RelationGetDescr(rel);
		if (desc->natts != MESSAGE_NATTS)
			elog(ERROR, "queue: queue_storage.messages has %d columns, expected %d",
				 desc->natts, MESSAGE_NATTS);
		for (i = 0; i < MESSAGE_NATTS; i++)
			if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), column_names[i]) != 0 ||
				TupleDescAttr(desc, i)->attisdropped)
				elog(ERROR, "queue: column %d of queue_storage.messages is not %s",
					 i + 1, column_names[i]);
		messages_relid = relid;
		claim_index_relid = indexid;
		return rel;
	}
	return table_open(messages_relid, RowExclusiveLock);
}

/*
 * An executor state for changing rows of rel outside a plan: what
 * ExecInsertIndexTuples needs to add index entries, and to tell the
 * indexes that an update left unchanged (the range table's updatedCols).
 */
static EState *
begin_changes(Relation rel, ResultRelInfo **result_rel)
{
	EState	   *estate = CreateExecutorState();
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	int			i;

	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	for (i = 0; i < lengthof(changed_columns); i++)
		rte->updatedCols = bms_add_member(rte->updatedCols,
										  changed_columns[i] - FirstLowInvalidHeapAttributeNumber);
	ExecInitRangeTable(estate, list_make1(rte));

	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	estate->es_output_cid = GetCurrentCommandId(true);
	*result_rel = rri;
	return estate;
}

static void
end_changes(EState *estate, ResultRelInfo *rri)
{
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

/*
 * The message in slot may still be claimed now: in the queue, visible and
 * alive.  The index scan already asked for the first two; a version found
 * by following an update chain must be checked again.
 */
static bool
claimable(TupleTableSlot *slot, int32 queue_id, TimestampTz now)
{
	bool		isnull;
	Datum		value;

	if (DatumGetInt32(slot_getattr(slot, COL_QUEUE_ID, &isnull)) != queue_id)
		return false;
	if (DatumGetTimestampTz(slot_getattr(slot, COL_VISIBLE_AT, &isnull)) > now)
		return false;
	value = slot_getattr(slot, COL_EXPIRES_AT, &isnull);
	return isnull || DatumGetTimestampTz(value) > now;
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
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent update")));
			return false;
		case TM_Invisible:
		default:
			elog(ERROR, "queue: unexpected result %d locking a message", (int) result);
	}
	return false;
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
	int			i;

	if (poison)
	{
		values[COL_QUEUE_ID - 1] = Int32GetDatum(queue->poison_queue_id);
		values[COL_SOURCE_QUEUE - 1] = CStringGetTextDatum(queue->name);
		isnull[COL_SOURCE_QUEUE - 1] = false;
		values[COL_VISIBLE_AT - 1] = TimestampTzGetDatum(now);
		isnull[COL_EXPIRES_AT - 1] = true;
		isnull[COL_POP_RECEIPT - 1] = true;
		isnull[COL_HOLDER_PID - 1] = true;
		isnull[COL_HOLDER_START - 1] = true;
		return;
	}

	values[COL_DEQUEUE_COUNT - 1] =
		Int32GetDatum(DatumGetInt32(values[COL_DEQUEUE_COUNT - 1]) + 1);
	if (!isnull[COL_EXPIRES_AT - 1] &&
		DatumGetTimestampTz(values[COL_EXPIRES_AT - 1]) < lease_end)
		values[COL_VISIBLE_AT - 1] = values[COL_EXPIRES_AT - 1];
	else
		values[COL_VISIBLE_AT - 1] = TimestampTzGetDatum(lease_end);
	values[COL_POP_RECEIPT - 1] = UUIDPGetDatum(receipt);
	isnull[COL_POP_RECEIPT - 1] = false;
	for (i = COL_HOLDER_PID; i <= COL_HOLDER_START; i++)
		isnull[i - 1] = !release_on_disconnect;
	values[COL_HOLDER_PID - 1] = Int32GetDatum(MyProcPid);
	values[COL_HOLDER_START - 1] = TimestampTzGetDatum(MyStartTimestamp);
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
	bool		routes_poison = queue->max_dequeue_count > 0 &&
		queue->poison_queue_id != 0;
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz lease_end = now + visibility_timeout;
	pg_uuid_t  *receipts = queue_new_receipts(want);
	Relation	rel;
	Relation	index;
	EState	   *estate;
	ResultRelInfo *rri;
	Snapshot	snapshot;
	IndexScanDesc scan;
	ScanKeyData keys[2];
	TupleTableSlot *found;
	TupleTableSlot *locked;
	TupleTableSlot *claimed_slot;
	int			claimed = 0;

	*poisoned = 0;

	/* as SPI does for each statement: see what this transaction did */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	snapshot = GetActiveSnapshot();

	rel = open_messages();
	CheckCmdReplicaIdentity(rel, CMD_UPDATE);
	index = index_open(claim_index_relid, AccessShareLock);
	estate = begin_changes(rel, &rri);

	found = table_slot_create(rel, NULL);
	locked = table_slot_create(rel, NULL);
	claimed_slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);

	ScanKeyInit(&keys[0], 1, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(queue->queue_id));
	ScanKeyInit(&keys[1], 2, BTLessEqualStrategyNumber, F_TIMESTAMPTZ_LE,
				TimestampTzGetDatum(now));
	scan = index_beginscan(rel, index, snapshot, 2, 0);
	index_rescan(scan, keys, 2, NULL, 0);

	while (claimed < want &&
		   index_getnext_slot(scan, ForwardScanDirection, found))
	{
		bool		poison;
		bool		update_indexes;

		CHECK_FOR_INTERRUPTS();
		if (!claimable(found, queue->queue_id, now) ||
			!lock_message(rel, found, locked, snapshot, estate->es_output_cid,
							  queue->queue_id, now))
			continue;

		slot_getallattrs(locked);
		ExecClearTuple(claimed_slot);
		memcpy(claimed_slot->tts_values, locked->tts_values,
			   sizeof(Datum) * MESSAGE_NATTS);
		memcpy(claimed_slot->tts_isnull, locked->tts_isnull,
			   sizeof(bool) * MESSAGE_NATTS);
		poison = routes_poison &&
			DatumGetInt32(locked->tts_values[COL_DEQUEUE_COUNT - 1]) >=
			queue->max_dequeue_count;
		claim_row(claimed_slot->tts_values, claimed_slot->tts_isnull, queue,
				  poison, now, lease_end, release_on_disconnect,
				  &receipts[claimed]);
		ExecStoreVirtualTuple(claimed_slot);

		simple_table_tuple_update(rel, &locked->tts_tid, claimed_slot,
								  snapshot, &update_indexes);
		if (update_indexes)
			ExecInsertIndexTuples(rri, claimed_slot, estate, true, false,
								  NULL, NIL);
		ResetPerTupleExprContext(estate);

		if (poison)
		{
			(*poisoned)++;
			continue;
		}
		{
			Datum		row[lengthof(result_columns)];
			bool		row_isnull[lengthof(result_columns)];
			int			i;

			for (i = 0; i < lengthof(result_columns); i++)
			{
				row[i] = claimed_slot->tts_values[result_columns[i] - 1];
				row_isnull[i] = claimed_slot->tts_isnull[result_columns[i] - 1];
			}
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 row, row_isnull);
		}
		claimed++;
	}

	index_endscan(scan);
	ExecDropSingleTupleTableSlot(claimed_slot);
	ExecDropSingleTupleTableSlot(locked);
	ExecDropSingleTupleTableSlot(found);
	end_changes(estate, rri);
	index_close(index, NoLock);
	table_close(rel, NoLock);
	PopActiveSnapshot();
	return claimed;
}
