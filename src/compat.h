/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Every difference between the PostgreSQL major versions the queue
 *		extension builds against (15 to 19), in one place.
 *
 * One block per change of PostgreSQL's API, each naming the release that
 * made it.  The rest of the code calls the names defined here and never
 * tests PG_VERSION_NUM itself.  The extension's behaviour is the same on
 * every version; where a newer server offers more (named wait events, the
 * vacuum's buffer ring and eager freezing), it is used there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_COMPAT_H
#define QUEUE_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "catalog/pg_database.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/bufmgr.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/hsearch.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000
#error "queue needs PostgreSQL 15 or later"
#endif

/*
 * PostgreSQL 18 replaced the pg_attribute_noreturn() suffix by the
 * pg_noreturn prefix (for C11's _Noreturn).  Ours is written as a prefix
 * everywhere; before 18 the old attribute works in that place too.
 */
#if PG_VERSION_NUM < 180000 && !defined(pg_noreturn)
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * A backend's slot in our per-backend arrays in shared memory: 1 to
 * MaxBackends for a backend or background worker, 0 for a process that has
 * none.  PostgreSQL 17 replaced the 1-based BackendId by the 0-based
 * ProcNumber (MyProcNumber); regular backends and background workers have
 * the first MaxBackends of them, as they had BackendIds 1 to MaxBackends.
 */
#if PG_VERSION_NUM >= 170000
#include "storage/procnumber.h"
#define QUEUE_MY_PROC_INDEX		(MyProcNumber == INVALID_PROC_NUMBER ? -1 : MyProcNumber)
#else
#include "storage/backendid.h"
#define QUEUE_MY_PROC_INDEX		(MyBackendId == InvalidBackendId ? -1 : MyBackendId - 1)
#endif

static inline int
queue_backend_slot(void)
{
	int			index = QUEUE_MY_PROC_INDEX;

	return index >= 0 && index < MaxBackends ? index + 1 : 0;
}

/*
 * Which index entries a new row version needs after simple_table_tuple_update.
 * PostgreSQL 16 made the answer a TU_UpdateIndexes (none, all, or only the
 * summarizing indexes such as BRIN) instead of a bool, and gave
 * ExecInsertIndexTuples the matching onlySummarizing argument.
 */
#if PG_VERSION_NUM >= 160000
typedef TU_UpdateIndexes QueueIndexUpdate;
#define QUEUE_NEEDS_INDEX_ENTRIES(u)	((u) != TU_None)
#define QUEUE_ONLY_SUMMARIZING(u)		((u) == TU_Summarizing)
#else
typedef bool QueueIndexUpdate;
#define QUEUE_NEEDS_INDEX_ENTRIES(u)	(u)
#define QUEUE_ONLY_SUMMARIZING(u)		false
#endif

/*
 * Adds a new row version's index entries.  PostgreSQL 16 added the
 * onlySummarizing argument (above); PostgreSQL 19 folded the boolean
 * arguments into flags (EIIT_*).
 */
#if PG_VERSION_NUM >= 190000
#define queue_insert_index_tuples(rri, slot, estate, update, only_summarizing) \
	ExecInsertIndexTuples((rri), (estate), \
						  ((update) ? EIIT_IS_UPDATE : 0) | \
						  ((only_summarizing) ? EIIT_ONLY_SUMMARIZING : 0), \
						  (slot), NIL, NULL)
#elif PG_VERSION_NUM >= 160000
#define queue_insert_index_tuples(rri, slot, estate, update, only_summarizing) \
	ExecInsertIndexTuples((rri), (slot), (estate), (update), false, NULL, NIL, \
						  (only_summarizing))
#else
#define queue_insert_index_tuples(rri, slot, estate, update, only_summarizing) \
	ExecInsertIndexTuples((rri), (slot), (estate), (update), false, NULL, NIL)
#endif

/*
 * The unique check before a speculative insertion, and the index entries
 * of one, as ExecInsert makes them for INSERT ... ON CONFLICT.  PostgreSQL
 * 18 gave ExecCheckIndexConstraints the tid of the row being updated (NULL
 * for an insert); 19 turned ExecInsertIndexTuples' booleans into flags.
 */
#if PG_VERSION_NUM >= 180000
#define queue_check_index_constraints(rri, slot, estate, conflict, arbiter) \
	ExecCheckIndexConstraints((rri), (slot), (estate), (conflict), NULL, (arbiter))
#else
#define queue_check_index_constraints(rri, slot, estate, conflict, arbiter) \
	ExecCheckIndexConstraints((rri), (slot), (estate), (conflict), (arbiter))
#endif
#if PG_VERSION_NUM >= 190000
#define queue_insert_index_tuples_speculative(rri, slot, estate, arbiter, conflict) \
	ExecInsertIndexTuples((rri), (estate), EIIT_NO_DUPE_ERROR, (slot), (arbiter), (conflict))
#elif PG_VERSION_NUM >= 160000
#define queue_insert_index_tuples_speculative(rri, slot, estate, arbiter, conflict) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, true, (conflict), (arbiter), false)
#else
#define queue_insert_index_tuples_speculative(rri, slot, estate, arbiter, conflict) \
	ExecInsertIndexTuples((rri), (slot), (estate), false, true, (conflict), (arbiter))
#endif

/*
 * An executor state's range table of one relation, with the columns an
 * update changes (the executor asks for them to decide whether an index is
 * unchanged by the update).  PostgreSQL 16 moved the columns from the range
 * table entry to a separate RTEPermissionInfo, passed to ExecInitRangeTable
 * beside the range table; PostgreSQL 18 added the set of relations left
 * after partition pruning (here, the one relation).
 */
static inline void
queue_init_range_table(EState *estate, RangeTblEntry *rte, Bitmapset *updated_cols)
{
#if PG_VERSION_NUM >= 160000
	RTEPermissionInfo *perminfo = makeNode(RTEPermissionInfo);

	perminfo->relid = rte->relid;
	perminfo->updatedCols = updated_cols;
	rte->perminfoindex = 1;
#if PG_VERSION_NUM >= 180000
	ExecInitRangeTable(estate, list_make1(rte), list_make1(perminfo),
					   bms_make_singleton(1));
#else
	ExecInitRangeTable(estate, list_make1(rte), list_make1(perminfo));
#endif
#else
	rte->updatedCols = updated_cols;
	ExecInitRangeTable(estate, list_make1(rte));
#endif
}

/*
 * A scan of an index with nkeys keys and no ordering.  PostgreSQL 18 added
 * the instrumentation argument (EXPLAIN's count of index searches),
 * PostgreSQL 19 the scan's option flags.
 */
#if PG_VERSION_NUM >= 190000
#define queue_index_beginscan(heap, index, snapshot, nkeys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), 0, SO_NONE)
#elif PG_VERSION_NUM >= 180000
#define queue_index_beginscan(heap, index, snapshot, nkeys) \
	index_beginscan((heap), (index), (snapshot), NULL, (nkeys), 0)
#else
#define queue_index_beginscan(heap, index, snapshot, nkeys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), 0)
#endif

/*
 * Deletes the row version at tid, waiting for a concurrent writer.
 * PostgreSQL 19 replaced table_tuple_delete's changingPart argument by a
 * bitmask of options, before the snapshot.
 */
#if PG_VERSION_NUM >= 190000
#define queue_table_tuple_delete(rel, tid, cid, snapshot, tmfd) \
	table_tuple_delete((rel), (tid), (cid), 0, (snapshot), InvalidSnapshot, \
					   true, (tmfd))
#else
#define queue_table_tuple_delete(rel, tid, cid, snapshot, tmfd) \
	table_tuple_delete((rel), (tid), (cid), (snapshot), InvalidSnapshot, \
					   true, (tmfd), false)
#endif

/*
 * The end of a call's inserts into an index through index_insert: the
 * access method lets go of what it kept between them (BRIN a pinned
 * buffer).  PostgreSQL 17 added it; before, nothing was kept past the
 * IndexInfo, which the caller drops.
 */
#if PG_VERSION_NUM >= 170000
#define queue_index_insert_cleanup(index, info)	index_insert_cleanup((index), (info))
#else
#define queue_index_insert_cleanup(index, info)	((void) 0)
#endif

/*
 * Updates a row version, waiting for a transaction that holds it.
 * PostgreSQL 19 added an options argument after the command id, as for
 * deletes above.
 */
#if PG_VERSION_NUM >= 190000
#define queue_table_tuple_update(rel, tid, slot, cid, snapshot, tmfd, lockmode, update_indexes) \
	table_tuple_update((rel), (tid), (slot), (cid), 0, (snapshot), \
					   InvalidSnapshot, true, (tmfd), (lockmode), (update_indexes))
#else
#define queue_table_tuple_update(rel, tid, slot, cid, snapshot, tmfd, lockmode, update_indexes) \
	table_tuple_update((rel), (tid), (slot), (cid), (snapshot), \
					   InvalidSnapshot, true, (tmfd), (lockmode), (update_indexes))
#endif

/*
 * A fixed-size hash table in shared memory.  PostgreSQL 19 folded the
 * initial and maximum sizes of ShmemInitHash into one.
 */
#if PG_VERSION_NUM >= 190000
#define queue_shmem_init_fixed_hash(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (info), (flags))
#else
#define queue_shmem_init_fixed_hash(name, nelems, info, flags) \
	ShmemInitHash((name), (nelems), (nelems), (info), (flags))
#endif

/*
 * Whether snapshot, registered by the caller, is the oldest snapshot this
 * backend holds, so that letting go of the backend's xmin holds back no
 * other.  PostgreSQL 18 removed GetOldestSnapshot; there the snapshot must
 * be the only registered one once the catalog snapshot (which is also kept
 * among the registered ones, and is taken again when needed) is let go.
 * That does not see the unregistered active snapshot of an enclosing DO
 * block or CALL, as GetOldestSnapshot did: the caller makes sure that its
 * statement is the client's own (snapshot.c).
 */
static inline bool
queue_snapshot_is_oldest(Snapshot snapshot)
{
#if PG_VERSION_NUM >= 180000
	InvalidateCatalogSnapshot();
	return snapshot->regd_count > 0 && ThereAreNoPriorRegisteredSnapshots();
#else
	return GetOldestSnapshot() == snapshot;
#endif
}

/*
 * The wait event a process of ours shows in pg_stat_activity while it
 * sleeps.  PostgreSQL 17 lets an extension name its own
 * (WaitEventExtensionNew: a lookup in shared memory, so callers keep what it
 * returns), shown under the type "Extension"; before, every such sleep
 * shows as "Extension" alone.
 */
#if PG_VERSION_NUM >= 170000
#define queue_wait_event(name)	WaitEventExtensionNew(name)
#else
#define queue_wait_event(name)	PG_WAIT_EXTENSION
#endif

/*
 * Whether the role owns the database.  PostgreSQL 16 folded the per-kind
 * ownership checks into object_ownercheck.
 */
#if PG_VERSION_NUM >= 160000
#define queue_database_ownercheck(dboid, roleid) \
	object_ownercheck(DatabaseRelationId, (dboid), (roleid))
#else
#define queue_database_ownercheck(dboid, roleid) \
	pg_database_ownercheck((dboid), (roleid))
#endif

/*
 * The i-th (from 1) entry of this backend's snapshot of the backend status
 * table.  PostgreSQL 16 renamed pgstat_fetch_stat_local_beentry.
 */
#if PG_VERSION_NUM >= 160000
#define queue_local_beentry(i)	pgstat_get_local_beentry_by_index(i)
#else
#define queue_local_beentry(i)	pgstat_fetch_stat_local_beentry(i)
#endif

/*
 * A table's live rows and vacuum count in its statistics entry.
 * PostgreSQL 16 renamed n_live_tuples and autovac_vacuum_count.
 */
#if PG_VERSION_NUM >= 160000
#define QUEUE_STATS_LIVE_TUPLES(entry)		((entry)->live_tuples)
#define QUEUE_STATS_AUTOVACUUMS(entry)		((entry)->autovacuum_count)
#else
#define QUEUE_STATS_LIVE_TUPLES(entry)		((entry)->n_live_tuples)
#define QUEUE_STATS_AUTOVACUUMS(entry)		((entry)->autovac_vacuum_count)
#endif

/*
 * The settings of a VACUUM of a table and its TOAST table that logs nothing
 * and freezes as autovacuum does by default (params zeroed by the caller).
 * PostgreSQL 16 made processing the table itself an option of its own
 * (VACOPT_PROCESS_MAIN); PostgreSQL 18 added eager freezing (its failure
 * rate, from vacuum_max_eager_freeze_failure_rate); PostgreSQL 19 renamed
 * log_min_duration for VACUUM's own.
 */
static inline void
queue_vacuum_params_init(VacuumParams *params)
{
#if PG_VERSION_NUM >= 160000
	params->options = VACOPT_PROCESS_MAIN | VACOPT_PROCESS_TOAST;
#else
	params->options = VACOPT_PROCESS_TOAST;
#endif
	params->freeze_min_age = -1;
	params->freeze_table_age = -1;
	params->multixact_freeze_min_age = -1;
	params->multixact_freeze_table_age = -1;
#if PG_VERSION_NUM >= 190000
	params->log_vacuum_min_duration = -1;
	params->log_analyze_min_duration = -1;
#else
	params->log_min_duration = -1;
#endif
#if PG_VERSION_NUM >= 180000
	params->max_eager_freeze_failure_rate = vacuum_max_eager_freeze_failure_rate;
#endif
}

/*
 * VACUUM of a list of relations, as autovacuum runs it, from a process
 * outside any statement.  Its lists must outlive the transactions vacuum()
 * commits; context is a long-lived memory context for them (the caller
 * empties it after).
 * PostgreSQL 16 made the caller give that context and the buffer strategy
 * (sized by vacuum_buffer_usage_limit, new in 16); before, vacuum() made
 * both, its context under PortalContext.
 */
static inline void
queue_vacuum(List *relations, VacuumParams *params, MemoryContext context)
{
#if PG_VERSION_NUM >= 160000
	MemoryContext old = MemoryContextSwitchTo(context);
	BufferAccessStrategy strategy = GetAccessStrategyWithSize(BAS_VACUUM,
															  VacuumBufferUsageLimit);

	MemoryContextSwitchTo(old);
	vacuum(relations, params, strategy, context, true);
#else
	MemoryContext old_portal = PortalContext;

	PortalContext = context;
	PG_TRY();
	{
		vacuum(relations, params, NULL, true);
	}
	PG_FINALLY();
	{
		PortalContext = old_portal;
	}
	PG_END_TRY();
#endif
}

#endif							/* QUEUE_COMPAT_H */
