/*-------------------------------------------------------------------------
 *
 * table.c
 *		Working on queue_storage.messages without the executor.
 *
 * The hot calls -- a put, a get, an update, a delete -- change one row of
 * the messages table each, and as SQL most of their cost was the executor
 * started and ended around that row (under callgrind, more than the work
 * itself: the expressions compiled, the indexes opened, the plan
 * revalidated).  So they use the table access method directly (claim.c,
 * by_receipt.c, poison.c, api/put.c), and this file holds what they share:
 *
 *	- the table, its primary key and claim index, and the sequence, found by
 *	  name in the storage schema once per backend (and again after any
 *	  change to them), with a check that the columns are the ones the C code
 *	  was written for;
 *	- a snapshot taken as SPI takes one for each statement: after a command
 *	  counter increment, so the call sees what its transaction did before;
 *	- an executor state only for ExecInsertIndexTuples, which adds the index
 *	  entries of a new row version as the executor would, partial indexes
 *	  included (messages/indexes.c opens the indexes a version needs).
 *
 * No SQL is involved, so none is ever built from input.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

static const char *const column_names[MSG_COLUMN_COUNT + 1] = {
	[MSG_MESSAGE_ID] = "message_id",
	[MSG_QUEUE_ID] = "queue_id",
	[MSG_INSERTED_AT] = "inserted_at",
	[MSG_EXPIRES_AT] = "expires_at",
	[MSG_PRIORITY] = "priority",
	[MSG_GROUP_ID] = "group_id",
	[MSG_SOURCE_QUEUE] = "source_queue",
	[MSG_VISIBLE_AT] = "visible_at",
	[MSG_DEQUEUE_COUNT] = "dequeue_count",
	[MSG_LAST_LEASE] = "last_lease",
	[MSG_POP_RECEIPT] = "pop_receipt",
	[MSG_HOLDER_PID] = "holder_pid",
	[MSG_HOLDER_START] = "holder_start",
	[MSG_FIRST_DEQUEUED_AT] = "first_dequeued_at",
	[MSG_HEADERS] = "headers",
	[MSG_BODY] = "body"
};

AttrNumber	queue_message_attnums[MSG_COLUMN_COUNT + 1];

/*
 * The storage objects, looked up again at the next open after any
 * invalidation of one of them (most are a VACUUM's; one may be a DROP
 * EXTENSION).  An invalidation in the middle of a call leaves them as they
 * are for the rest of the call.
 */
static Oid	messages_relid = InvalidOid;
static Oid	index_relids[MESSAGES_INDEX_COUNT];
static Oid	sequence_relid = InvalidOid;
static bool relations_found = false;

static void
forget_relations(Datum arg, Oid relid)
{
	int			i;

	if (relid == InvalidOid || relid == messages_relid || relid == sequence_relid)
		relations_found = false;
	for (i = 0; i < MESSAGES_INDEX_COUNT; i++)
		if (relid == index_relids[i])
			relations_found = false;
}

static Oid
storage_object(const char *name)
{
	Oid			relid = queue_storage_relid(name);

	if (!OidIsValid(relid))
		elog(ERROR, "queue: queue_storage.%s is missing", name);
	return relid;
}

/*
 * Finds where each column is in the table described by desc
 * (queue_message_attnums), and checks that they are the columns of a
 * version: those of 1.0; priority and group_id, which 1.3 added, with
 * first_dequeued_at, which 1.6 added, or without; or none of the three.
 */
static void
find_columns(TupleDesc desc)
{
	int			i;
	MessageColumn column;

	memset(queue_message_attnums, 0, sizeof(queue_message_attnums));
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);

		for (column = MSG_MESSAGE_ID; column <= MSG_COLUMN_COUNT; column++)
			if (strcmp(NameStr(attr->attname), column_names[column]) == 0)
				break;
		if (attr->attisdropped || column > MSG_COLUMN_COUNT)
			elog(ERROR, "queue: column %d of queue_storage.messages is none of the extension's",
				 i + 1);
		queue_message_attnums[column] = attr->attnum;
	}
	for (column = MSG_MESSAGE_ID; column <= MSG_COLUMN_COUNT; column++)
		if (!MSG_HAS(column) && column != MSG_PRIORITY &&
			column != MSG_GROUP_ID && column != MSG_FIRST_DEQUEUED_AT)
			elog(ERROR, "queue: queue_storage.messages has no column %s",
				 column_names[column]);
	if (MSG_HAS(MSG_PRIORITY) != MSG_HAS(MSG_GROUP_ID) ||
		(MSG_HAS(MSG_FIRST_DEQUEUED_AT) && !MSG_HAS(MSG_PRIORITY)))
		elog(ERROR, "queue: the columns of queue_storage.messages are those of no version");
}

/*
 * Looks the storage objects up, and checks the table's columns.  The table
 * is locked as it is found (queue_storage_lock_relid), so that a call that
 * waited for the lock of the update to 1.7, which makes it anew, finds the
 * new one.
 */
static void
find_relations(void)
{
	static bool callback_registered = false;
	Relation	rel;
	Oid			relid;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(forget_relations, (Datum) 0);
		callback_registered = true;
	}

	relid = queue_storage_lock_relid("messages", AccessShareLock);
	if (!OidIsValid(relid))
		elog(ERROR, "queue: queue_storage.messages is missing");
	rel = table_open(relid, NoLock);
	find_columns(RelationGetDescr(rel));

	index_relids[MESSAGES_PKEY] = storage_object("messages_pkey");
	index_relids[MESSAGES_CLAIM] = storage_object("messages_claim");
	/* from version 1.3 on; InvalidOid on the table of an earlier one */
	index_relids[MESSAGES_PRIORITY] = queue_storage_relid("messages_priority");
	index_relids[MESSAGES_GROUP] = queue_storage_relid("messages_group");
	sequence_relid = storage_object("message_id_seq");
	messages_relid = RelationGetRelid(rel);
	table_close(rel, NoLock);
	relations_found = true;
}

/*
 * Locks the table in lockmode.  If the table was made anew while the lock
 * was waited for (the invalidations the lock takes in say so), the old
 * one's lock goes and the new one is found and locked.
 */
static void
lock_table(LOCKMODE lockmode)
{
	for (;;)
	{
		Oid			relid;

		if (!relations_found)
			find_relations();
		relid = messages_relid;
		LockRelationOid(relid, lockmode);
		if (relations_found)
			return;
		UnlockRelationOid(relid, lockmode);
	}
}

/*
 * Opens the table, with a fresh snapshot, for a call that inserts, updates
 * or deletes (cmd) rows.  For inserts and updates the table's indexes are
 * opened too, for queue_messages_add_index_entries; changed lists the
 * columns an update changes (count of them), so that the indexes that do
 * not cover them are told their key stayed as it was, as the executor
 * tells them.  Columns a table of an earlier version lacks are left out.
 */
void
queue_messages_open(MessagesTable *table, CmdType cmd, const int *changed,
					int count)
{
	memset(table, 0, sizeof(*table));

	/*
	 * As SPI does before each statement that may write; the snapshot is
	 * taken once the lock is held, so that it sees what the holder before
	 * committed.
	 */
	CommandCounterIncrement();
	lock_table(RowExclusiveLock);
	PushActiveSnapshot(GetTransactionSnapshot());
	table->snapshot = GetActiveSnapshot();
	table->rel = table_open(messages_relid, NoLock);
	CheckCmdReplicaIdentity(table->rel, cmd);
	table->cid = GetCurrentCommandId(true);

	if (cmd != CMD_DELETE)
	{
		RangeTblEntry *rte = makeNode(RangeTblEntry);
		Bitmapset  *updated_cols = NULL;
		int			i;

		table->estate = CreateExecutorState();
		rte->rtekind = RTE_RELATION;
		rte->relid = messages_relid;
		rte->relkind = table->rel->rd_rel->relkind;
		rte->rellockmode = RowExclusiveLock;
		for (i = 0; i < count; i++)
			if (MSG_HAS(changed[i]))
				updated_cols = bms_add_member(updated_cols,
											  MSG_ATTNUM(changed[i]) - FirstLowInvalidHeapAttributeNumber);
		queue_init_range_table(table->estate, rte, updated_cols);
		table->rri = makeNode(ResultRelInfo);
		InitResultRelInfo(table->rri, table->rel, 1, NULL, 0);
		table->indexes = queue_messages_open_indexes(table->rri);
		table->estate->es_output_cid = table->cid;
	}
}

void
queue_messages_close(MessagesTable *table)
{
	if (table->estate != NULL)
	{
		queue_messages_close_indexes(table->indexes);
		FreeExecutorState(table->estate);
	}
	table_close(table->rel, NoLock);
	PopActiveSnapshot();
}

/* Has the table this index?  Not those of 1.3 on the table of an earlier version. */
bool
queue_messages_has_index(MessagesIndex which)
{
	return OidIsValid(index_relids[which]);
}

/*
 * Opens one of the table's indexes for a scan; close with index_close.
 * NULL for an index of 1.3 on the table of an earlier version.
 */
Relation
queue_messages_index(MessagesIndex which)
{
	if (!OidIsValid(index_relids[which]))
		return NULL;
	return index_open(index_relids[which], AccessShareLock);
}

/*
 * A message arrives in queue_id at priority (put, moved to poison,
 * redriven): claims skip the levels other than 0 of a queue that holds
 * none, so such a message registers before its transaction commits
 * (claim_starts.c).
 */
void
queue_message_arrives(int32 queue_id, Datum priority, bool isnull)
{
	if (!isnull && DatumGetInt16(priority) != 0)
		queue_levels_written(queue_id);
}

/*
 * Adds the index entries of the row version in slot, just written by
 * table_tuple_insert, table_multi_insert or table_tuple_update (update).
 */
void
queue_messages_add_index_entries(MessagesTable *table, TupleTableSlot *slot,
								 bool update, bool only_summarizing)
{
	Assert(table->estate != NULL);
	/* an update leaves the message in its queue (a move to poison registers) */
	if (!update && MSG_HAS(MSG_PRIORITY))
	{
		bool		isnull;
		Datum		priority = slot_getattr(slot, MSG_ATTNUM(MSG_PRIORITY), &isnull);

		queue_message_arrives(DatumGetInt32(slot_getattr(slot, MSG_ATTNUM(MSG_QUEUE_ID),
														 &isnull)),
							  priority, isnull);
	}
	queue_messages_select_indexes(table->indexes, table->rri, table->estate, slot);
	queue_insert_index_tuples(table->rri, slot, table->estate, update,
							  only_summarizing);
	ResetPerTupleExprContext(table->estate);
}

/*
 * Finds message_id through the primary key, with scan (an index scan of
 * MESSAGES_PKEY with one key), into slot: the version the scan's snapshot
 * sees.  Returns false if there is none.
 */
bool
queue_messages_find(struct IndexScanDescData *scan, int64 message_id,
					TupleTableSlot *slot)
{
	ScanKeyData key;

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(message_id));
	index_rescan(scan, &key, 1, NULL, 0);
	return index_getnext_slot(scan, ForwardScanDirection, slot);
}

/*
 * Copies the message version in from into the virtual slot to, cleared
 * first, to be changed into a new version: every column the table has.
 */
void
queue_messages_copy_version(TupleTableSlot *to, TupleTableSlot *from)
{
	int			natts = from->tts_tupleDescriptor->natts;

	slot_getallattrs(from);
	ExecClearTuple(to);
	memcpy(to->tts_values, from->tts_values, sizeof(Datum) * natts);
	memcpy(to->tts_isnull, from->tts_isnull, sizeof(bool) * natts);
}

/*
 * A message this call would change was changed by a transaction its
 * REPEATABLE READ or SERIALIZABLE snapshot does not see: 40001, as the
 * executor raises for the same statement.
 */
void
queue_messages_serialization_failure(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("could not serialize access due to concurrent update")));
}

/* The next message id, as nextval('queue_storage.message_id_seq'). */
int64
queue_messages_next_id(void)
{
	if (!relations_found)
		find_relations();
	return nextval_internal(sequence_relid, false);
}
