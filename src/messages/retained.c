/*-------------------------------------------------------------------------
 *
 * retained.c
 *		Keeping the messages consumers deleted, for a queue with a retention.
 *
 * A delete of such a queue (by_receipt.c) writes the version it deleted
 * into queue_storage.retained, with the time of the deletion, in the same
 * transaction: the message is kept if and only if its delete commits.
 * The row is written with the table access method, as the delete itself
 * is (table.c says why); its index entries are added by
 * ExecInsertIndexTuples.  What is kept is shown by queue_inspect, put
 * back by queue_replay, and removed by the background worker once the
 * queue's retention has passed (worker/sweep.c); no claim, peek or count
 * ever reads this table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "access/table.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "utils/rel.h"

/*
 * The columns of queue_storage.retained, each with the column of the
 * messages table it is copied from; deleted_at is the delete's time.
 */
static const struct
{
	const char *name;
	MessageColumn from;			/* 0: deleted_at */
}			retained_columns[] = {
	{"queue_id", MSG_QUEUE_ID},
	{"message_id", MSG_MESSAGE_ID},
	{"deleted_at", 0},
	{"inserted_at", MSG_INSERTED_AT},
	{"expires_at", MSG_EXPIRES_AT},
	{"priority", MSG_PRIORITY},
	{"group_id", MSG_GROUP_ID},
	{"source_queue", MSG_SOURCE_QUEUE},
	{"dequeue_count", MSG_DEQUEUE_COUNT},
	{"first_dequeued_at", MSG_FIRST_DEQUEUED_AT},
	{"headers", MSG_HEADERS},
	{"body", MSG_BODY}
};

/*
 * Opens the table for the rest of the call: locked as an INSERT locks it,
 * with an executor state for the index entries, and each of its columns
 * matched with its source.
 */
static void
open_retained(RetainedTable *retained, CommandId cid)
{
	Oid			relid = queue_storage_relid("retained");
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	TupleDesc	desc;
	int			i;

	if (!OidIsValid(relid))
		elog(ERROR, "queue: queue_storage.retained is missing");
	retained->rel = table_open(relid, RowExclusiveLock);
	desc = RelationGetDescr(retained->rel);
	retained->sources = palloc(sizeof(int) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, i);
		int			column;

		for (column = 0; column < lengthof(retained_columns); column++)
			if (strcmp(NameStr(attr->attname), retained_columns[column].name) == 0)
				break;
		if (attr->attisdropped || column == lengthof(retained_columns) ||
			(retained_columns[column].from != 0 && !MSG_HAS(retained_columns[column].from)))
			elog(ERROR, "queue: column %d of queue_storage.retained is none the extension keeps",
				 i + 1);
		retained->sources[i] = retained_columns[column].from;
	}

	retained->estate = CreateExecutorState();
	rte->rtekind = RTE_RELATION;
	rte->relid = relid;
	rte->relkind = retained->rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	queue_init_range_table(retained->estate, rte, NULL);
	retained->rri = makeNode(ResultRelInfo);
	InitResultRelInfo(retained->rri, retained->rel, 1, NULL, 0);
	ExecOpenIndices(retained->rri, false);
	retained->estate->es_output_cid = cid;
	retained->slot = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
}

/*
 * Keeps the message version in deleted, just deleted at deleted_at by the
 * command cid of this transaction.
 */
void
queue_retained_keep(RetainedTable *retained, TupleTableSlot *deleted,
					TimestampTz deleted_at, CommandId cid)
{
	TupleTableSlot *slot;
	int			i;

	if (retained->rel == NULL)
		open_retained(retained, cid);
	slot = retained->slot;
	slot_getallattrs(deleted);
	ExecClearTuple(slot);
	for (i = 0; i < slot->tts_tupleDescriptor->natts; i++)
	{
		int			from = retained->sources[i];

		if (from == 0)
		{
			slot->tts_values[i] = TimestampTzGetDatum(deleted_at);
			slot->tts_isnull[i] = false;
		}
		else
		{
			slot->tts_values[i] = deleted->tts_values[MSG_ATTNUM(from) - 1];
			slot->tts_isnull[i] = deleted->tts_isnull[MSG_ATTNUM(from) - 1];
		}
	}
	ExecStoreVirtualTuple(slot);
	table_tuple_insert(retained->rel, slot, cid, 0, NULL);
	queue_insert_index_tuples(retained->rri, slot, retained->estate, false, false);
	ResetPerTupleExprContext(retained->estate);
}

/* Closes what queue_retained_keep opened, if it opened anything. */
void
queue_retained_close(RetainedTable *retained)
{
	if (retained->rel == NULL)
		return;
	ExecDropSingleTupleTableSlot(retained->slot);
	ExecCloseIndices(retained->rri);
	FreeExecutorState(retained->estate);
	table_close(retained->rel, NoLock);
	retained->rel = NULL;
}
