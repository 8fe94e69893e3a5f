/*-------------------------------------------------------------------------
 *
 * indexes.c
 *		The messages table's indexes: the entries a new row version needs.
 *
 * ExecOpenIndices builds every index's IndexInfo again on each call, and
 * ExecInsertIndexTuples compiles each partial index's predicate again for
 * each executor state.  For one row per call that was, under callgrind, a
 * noticeable share of every put and every get (bench/reports/history.md,
 * "The table's indexes are described once per backend"), for indexes that
 * only change when the extension's schema does.  So the IndexInfos are
 * built here once per backend, predicates compiled, and built again after
 * any invalidation of the table or of one of its indexes (an index created
 * or dropped, CREATE INDEX CONCURRENTLY making one ready for inserts).  The
 * entries are still added by ExecInsertIndexTuples, to every index the
 * table has whose predicate the row version meets, exactly as the executor
 * adds them.
 *
 * Five of the table's seven indexes are partial, and a version of a plain
 * message has an entry in two of them (the primary key and the claim
 * index).  The executor locks every index of the table for each statement
 * all the same; here a call opens, and locks, only the indexes a version
 * it writes has an entry in, when it first needs one.  An index no version
 * of the call belongs to is left alone: it gets no entry, so it needs no
 * lock (under callgrind, locking and releasing the five others was a
 * measurable part of a put-get-delete cycle: docs/performance.md, "The
 * cycle: a put, a get and a delete").
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"

#include "access/genam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "optimizer/optimizer.h"
#include "utils/inval.h"
#include "utils/memutils.h"

/* What ExecOpenIndices would build for the table, built once. */
typedef struct IndexSet
{
	MemoryContext context;		/* holds this set and all it points to */
	int			count;
	Oid		   *relids;
	IndexInfo **infos;			/* predicates compiled (ii_PredicateState) */
} IndexSet;

/* One call's indexes: those it opened so far, by their place in the set. */
struct MessagesIndexes
{
	IndexSet   *set;			/* stays for the call, even if replaced */
	Relation   *opened;			/* NULL: not opened by this call */
	IndexInfo **infos;			/* this call's copies */
};

static IndexSet *indexes = NULL;
static Oid	indexed_table = InvalidOid;
static bool indexes_stale = false;

/*
 * The table is known before its set is built, so that an invalidation that
 * arrives while the set is being built (as an index is locked) is not lost.
 */
static void
note_invalidation(Datum arg, Oid relid)
{
	int			i;

	if (relid == InvalidOid || relid == indexed_table)
		indexes_stale = true;
	for (i = 0; indexes != NULL && i < indexes->count; i++)
		if (relid == indexes->relids[i])
			indexes_stale = true;
}

/*
 * Builds the set for the table rel.  Its indexes are locked as the executor
 * locks them (RowExclusiveLock), to the end of the transaction.
 */
static IndexSet *
build_index_set(Relation rel)
{
	MemoryContext context = AllocSetContextCreate(CacheMemoryContext,
												  "queue messages indexes",
												  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *relids = RelationGetIndexList(rel);
	IndexSet   *set = palloc0(sizeof(IndexSet));
	ListCell   *cell;

	set->context = context;
	set->relids = palloc(sizeof(Oid) * Max(list_length(relids), 1));
	set->infos = palloc(sizeof(IndexInfo *) * Max(list_length(relids), 1));
	foreach(cell, relids)
	{
		Relation	index = index_open(lfirst_oid(cell), RowExclusiveLock);
		IndexInfo  *info = BuildIndexInfo(index);

		/* what ExecPrepareQual does, in this set's memory */
		if (info->ii_Predicate != NIL)
			info->ii_PredicateState =
				ExecInitQual((List *) expression_planner((Expr *) info->ii_Predicate), NULL);
		set->relids[set->count] = lfirst_oid(cell);
		set->infos[set->count] = info;
		set->count++;
		index_close(index, NoLock);
	}
	MemoryContextSwitchTo(old);
	return set;
}

/*
 * The indexes of the table of rri for one call that writes row versions,
 * in the current memory context; none opened yet, and rri's index arrays
 * made room for all of them (queue_messages_select_indexes fills them).
 * Close with queue_messages_close_indexes.
 */
MessagesIndexes *
queue_messages_open_indexes(ResultRelInfo *rri)
{
	static bool callback_registered = false;
	Relation	rel = rri->ri_RelationDesc;
	MessagesIndexes *call;
	int			room;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(note_invalidation, (Datum) 0);
		callback_registered = true;
	}
	if (indexes != NULL &&
		(indexes_stale || indexed_table != RelationGetRelid(rel)))
	{
		/*
		 * A call of this transaction may still be using the old set: it
		 * goes when the transaction does.
		 */
		MemoryContextSetParent(indexes->context, TopTransactionContext);
		indexes = NULL;
	}
	if (indexes == NULL)
	{
		indexed_table = RelationGetRelid(rel);
		indexes_stale = false;
		indexes = build_index_set(rel);
	}

	room = Max(indexes->count, 1);
	call = palloc(sizeof(MessagesIndexes));
	call->set = indexes;
	call->opened = palloc0(sizeof(Relation) * room);
	call->infos = palloc0(sizeof(IndexInfo *) * room);
	rri->ri_NumIndices = 0;
	rri->ri_IndexRelationDescs = palloc0(sizeof(Relation) * room);
	rri->ri_IndexRelationInfo = palloc0(sizeof(IndexInfo *) * room);
	return call;
}

/*
 * Points rri at the indexes the row version in slot has an entry in (each
 * opened and locked the first time the call needs it), for
 * ExecInsertIndexTuples.
 */
void
queue_messages_select_indexes(MessagesIndexes *call, ResultRelInfo *rri,
							  EState *estate, TupleTableSlot *slot)
{
	ExprContext *econtext = GetPerTupleExprContext(estate);
	IndexSet   *set = call->set;
	int			i;

	econtext->ecxt_scantuple = slot;
	rri->ri_NumIndices = 0;
	for (i = 0; i < set->count; i++)
	{
		IndexInfo  *shared = set->infos[i];

		if (shared->ii_PredicateState != NULL &&
			!ExecQual(shared->ii_PredicateState, econtext))
			continue;
		if (call->opened[i] == NULL)
		{
			/*
			 * Each call has its own copy: ExecInsertIndexTuples notes in it
			 * whether an update left the index's key unchanged, which
			 * depends on the columns this call changes.  The compiled
			 * predicate is shared.
			 */
			call->infos[i] = palloc(sizeof(IndexInfo));
			memcpy(call->infos[i], shared, sizeof(IndexInfo));
			call->opened[i] = index_open(set->relids[i], RowExclusiveLock);
		}
		rri->ri_IndexRelationDescs[rri->ri_NumIndices] = call->opened[i];
		rri->ri_IndexRelationInfo[rri->ri_NumIndices] = call->infos[i];
		rri->ri_NumIndices++;
	}
}

/*
 * Closes the indexes the call opened.  Their locks stay until the
 * transaction ends, as the table's do: releasing them one by one
 * (ExecCloseIndices) was a measurable cost in every call
 * (bench/reports/history.md, "Figures once kept in code comments").
 */
void
queue_messages_close_indexes(MessagesIndexes *call)
{
	int			i;

	for (i = 0; i < call->set->count; i++)
		if (call->opened[i] != NULL)
			index_close(call->opened[i], NoLock);
}
