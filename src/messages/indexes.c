/*-------------------------------------------------------------------------
 *
 * indexes.c
 *		The messages table's indexes, opened for adding a row version's
 *		entries.
 *
 * ExecOpenIndices builds every index's IndexInfo again on each call, and
 * ExecInsertIndexTuples compiles each partial index's predicate again for
 * each executor state.  For one row per call that was, under callgrind,
 * 10,200 and 2,300 for each predicate in every put and every get (building
 * them once saves 23,700 of a cycle's 359,000), for indexes that only
 * change when the extension's schema does.  So the IndexInfos are
 * built here once per backend, predicates compiled, and built again after
 * any invalidation of the table or of one of its indexes (an index created
 * or dropped, CREATE INDEX CONCURRENTLY making one ready for inserts).  The
 * entries are still added by ExecInsertIndexTuples, to every index the
 * table has, exactly as the executor adds them.
 *
 *-------------------------------------------------------------------------
 */
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
 * Opens the indexes of the table of rri for ExecInsertIndexTuples, in place
 * of ExecOpenIndices(rri, false), allocating in the current memory context
 * as it does.  Close them with index_close.
 */
void
queue_messages_open_indexes(ResultRelInfo *rri)
{
	static bool callback_registered = false;
	Relation	rel = rri->ri_RelationDesc;
	int			i;

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

	rri->ri_NumIndices = indexes->count;
	rri->ri_IndexRelationDescs = palloc(sizeof(Relation) * Max(indexes->count, 1));
	rri->ri_IndexRelationInfo = palloc(sizeof(IndexInfo *) * Max(indexes->count, 1));
	for (i = 0; i < indexes->count; i++)
	{
		/*
		 * Each call has its own copy: ExecInsertIndexTuples notes in it
		 * whether an update left the index's key unchanged, which depends
		 * on the columns this call changes.  The compiled predicate is
		 * shared.
		 */
		IndexInfo  *info = palloc(sizeof(IndexInfo));

		memcpy(info, indexes->infos[i], sizeof(IndexInfo));
		rri->ri_IndexRelationDescs[i] = index_open(indexes->relids[i], RowExclusiveLock);
		rri->ri_IndexRelationInfo[i] = info;
	}
}
