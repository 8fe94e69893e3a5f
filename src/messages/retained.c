/*-------------------------------------------------------------------------
 *
 * retained.c
 *		Keeping the messages consumers deleted, for a queue with a retention.
 *
 * A delete of such a queue (by_receipt.c) writes the version it deleted
 * into queue_storage.retained, with the time of the deletion, in the same
 * transaction: the message is kept if and only if its delete commits.
 * The row is written with the table access method, as the delete itself
 * is (table.c says why), and its index entries as the catalog's are
 * (CatalogIndexInsert): each index's IndexInfo, built once per backend,
 * and index_insert, with no executor state; the table's indexes are plain
 * columns, no expression and no predicate.  Opening an executor state and
 * the indexes for each delete cost more than the insert itself.  What is
 * kept is shown by queue_inspect, put back by queue_replay, and removed by
 * the background worker once the queue's retention has passed
 * (worker/sweep.c); no claim, peek or count ever reads this table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/tuptable.h"
#include "storage/lmgr.h"
#include "utils/inval.h"
#include "utils/memutils.h"
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
 * What a keep needs to know of the table, found once per backend and again
 * after an invalidation of the table or one of its indexes, under the
 * table's lock.  An invalidation in the middle of a call leaves the call
 * its description: it is only set aside, and goes when the transaction
 * does.  Only the indexes ready for inserts are written, as the executor
 * writes them: one being built concurrently is left to its build, and the
 * invalidation that makes it ready has it described with the others.
 */
typedef struct RetainedShape
{
	MemoryContext context;		/* holds this and all it points to */
	Oid			relid;
	int		   *sources;		/* per column, the messages column it copies */
	int			index_count;
	Oid		   *index_relids;
	IndexInfo **index_infos;
} RetainedShape;

static RetainedShape *shape = NULL;
static bool shape_stale = false;
static bool describing = false;	/* any invalidation now makes it stale */

static void
note_invalidation(Datum arg, Oid relid)
{
	int			i;

	if (describing || relid == InvalidOid)
		shape_stale = true;
	if (shape == NULL)
		return;
	if (relid == shape->relid)
		shape_stale = true;
	for (i = 0; i < shape->index_count; i++)
		if (relid == shape->index_relids[i])
			shape_stale = true;
}

/* Matches each column of rel with its source; the indexes' descriptions. */
static RetainedShape *
describe(Relation rel)
{
	/* under the call's memory until it is whole: an error leaves nothing */
	MemoryContext context = AllocSetContextCreate(CurrentMemoryContext,
												  "queue retained table",
												  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *indexes = RelationGetIndexList(rel);
	RetainedShape *described = palloc0(sizeof(RetainedShape));
	ListCell   *cell;
	int			i;

	described->context = context;
	described->relid = RelationGetRelid(rel);
	described->sources = palloc(sizeof(int) * desc->natts);
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
		described->sources[i] = retained_columns[column].from;
	}

	described->index_relids = palloc(sizeof(Oid) * Max(list_length(indexes), 1));
	described->index_infos = palloc(sizeof(IndexInfo *) * Max(list_length(indexes), 1));
	foreach(cell, indexes)
	{
		Relation	index = index_open(lfirst_oid(cell), RowExclusiveLock);
		IndexInfo  *info = BuildIndexInfo(index);

		if (!info->ii_ReadyForInserts)
		{
			index_close(index, NoLock);
			continue;
		}
		if (info->ii_Expressions != NIL || info->ii_Predicate != NIL ||
			info->ii_ExclusionOps != NULL || (info->ii_Unique && !index->rd_index->indimmediate))
			elog(ERROR, "queue: index \"%s\" of queue_storage.retained is not one of plain columns",
				 RelationGetRelationName(index));
		described->index_relids[described->index_count] = lfirst_oid(cell);
		described->index_infos[described->index_count] = info;
		described->index_count++;
		index_close(index, NoLock);
	}
	MemoryContextSwitchTo(old);
	MemoryContextSetParent(context, CacheMemoryContext);
	return described;
}

/* Opens the table (locked as an INSERT locks it) and its indexes for the call. */
static void
open_retained(RetainedTable *retained)
{
	static bool callback_registered = false;
	Oid			relid;
	int			i;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(note_invalidation, (Datum) 0);
		callback_registered = true;
	}

	describing = false;			/* after an error in describe() */

	/*
	 * Lock the table first: taking the lock brings in the invalidations sent
	 * until then.  If they make the description stale, it is made again
	 * under the lock, as many times as it takes.
	 */
	for (;;)
	{
		if (shape != NULL && shape_stale)
		{
			MemoryContextSetParent(shape->context, TopTransactionContext);
			shape = NULL;
		}
		relid = shape != NULL ? shape->relid : queue_storage_relid("retained");
		if (!OidIsValid(relid))
			elog(ERROR, "queue: queue_storage.retained is missing");
		LockRelationOid(relid, RowExclusiveLock);
		if (shape != NULL && !shape_stale)
			break;
		if (shape == NULL)
		{
			Relation	rel = table_open(relid, NoLock);

			shape_stale = false;
			describing = true;
			shape = describe(rel);
			describing = false;
			table_close(rel, NoLock);
			if (!shape_stale)
				break;
		}
		UnlockRelationOid(relid, RowExclusiveLock);
	}
	retained->rel = table_open(relid, NoLock);
	retained->shape = shape;
	retained->indexes = palloc(sizeof(Relation) * Max(shape->index_count, 1));
	retained->index_infos = palloc(sizeof(IndexInfo *) * Max(shape->index_count, 1));
	for (i = 0; i < shape->index_count; i++)
	{
		retained->indexes[i] = index_open(shape->index_relids[i], RowExclusiveLock);
		/* the call's own copy: an access method keeps its state in it */
		retained->index_infos[i] = palloc(sizeof(IndexInfo));
		memcpy(retained->index_infos[i], shape->index_infos[i], sizeof(IndexInfo));
		retained->index_infos[i]->ii_Context = CurrentMemoryContext;
	}
	retained->slot = MakeSingleTupleTableSlot(RelationGetDescr(retained->rel), &TTSOpsVirtual);
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
	const RetainedShape *table;
	int			i;

	if (retained->rel == NULL)
		open_retained(retained);
	slot = retained->slot;
	table = retained->shape;
	slot_getallattrs(deleted);
	ExecClearTuple(slot);
	for (i = 0; i < slot->tts_tupleDescriptor->natts; i++)
	{
		int			from = table->sources[i];

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

	for (i = 0; i < table->index_count; i++)
	{
		IndexInfo  *info = retained->index_infos[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		FormIndexDatum(info, slot, NULL, values, isnull);
		index_insert(retained->indexes[i], values, isnull, &slot->tts_tid, retained->rel,
					 info->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO, false, info);
	}
}

/* Closes what queue_retained_keep opened, if it opened anything. */
void
queue_retained_close(RetainedTable *retained)
{
	int			i;

	if (retained->rel == NULL)
		return;
	ExecDropSingleTupleTableSlot(retained->slot);
	for (i = 0; i < retained->shape->index_count; i++)
	{
		queue_index_insert_cleanup(retained->indexes[i], retained->index_infos[i]);
		index_close(retained->indexes[i], NoLock);
	}
	table_close(retained->rel, NoLock);
	retained->rel = NULL;
}
