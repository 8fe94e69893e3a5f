/*-------------------------------------------------------------------------
 *
 * transaction.c
 *		The counts of a transaction, written when it commits.
 *
 * A transaction's counts stay with this backend until it commits, so a
 * rolled-back put was never counted.  Counts in a subtransaction that rolls
 * back are dropped with it (the subtransaction callback below).  At commit
 * they go, one entry per queue, to shared memory (counters/shared.c) when
 * the library is preloaded; else, or with queue.durable_counters on, or
 * when the shared table is full, or for a prepared transaction, to the
 * queue_storage.counters table in the transaction:
 *
 * The first counts of such a transaction are written at once, in the
 * storage session of the call that made them: most transactions make one
 * call, and writing there costs no second storage session at commit
 * (bench/reports/history.md, "Figures once kept in code comments").
 * Later counts are written just before the transaction commits (or is
 * prepared), one row update per queue: so a transaction that puts 100,000
 * messages one call at a time updates the counters row twice, not 100,000
 * times (that was quadratic: each update of a row the transaction already
 * updated walks the chain of its versions).  Each backend writes its own
 * row of the counters table (its backend id is the shard): two sessions
 * never wait on each other to count.
 *
 * A prepared transaction keeps the locks of the rows it wrote until it is
 * committed or rolled back, perhaps by another session much later: so its
 * counts go to a row of its own (a shard below QUEUE_SHARED_SHARD, made of
 * its transaction id), and the sweep folds such rows into the shared
 * shard's row once they are committed.  A transaction that finds its
 * backend's row held -- by a prepared transaction of an earlier session in
 * the same backend slot -- writes to a row of its own the same way.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "durability.h"
#include "queue_storage/queue_storage.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* Counts of one queue made at one subtransaction level, not yet written. */
typedef struct PendingCounts
{
	int32		queue_id;
	int			level;			/* GetCurrentTransactionNestLevel() */
	QueueCounts counts;
} PendingCounts;

static PendingCounts *pending = NULL;
static int	pending_count = 0;
static int	pending_size = 0;
static bool callbacks_registered = false;

/* This transaction has written counts at once; the rest wait for commit. */
static bool written_at_once = false;

/* This transaction ran a sweep of the counters (queue_counters_sweep). */
static bool swept = false;

/* The queues table whose queues the pending counts are of, at commit. */
static Oid	commit_catalog = InvalidOid;

static int32
counter_shard(void)
{
	return (int32) queue_backend_slot();
}

/*
 * The transaction's own row: below QUEUE_SHARED_SHARD, one per transaction
 * id (modulo 2^31 - 2; no two prepared transactions are that far apart).
 */
static int32
transaction_shard(void)
{
	TransactionId xid = GetTopTransactionId();

	return QUEUE_SHARED_SHARD - 1 - (int32) (xid % (uint32) (PG_INT32_MAX - 1));
}

/* The index of queue_id's entry at level among the first n, or -1. */
static int
find_pending(int32 queue_id, int level, int n)
{
	int			i;

	for (i = 0; i < n; i++)
		if (pending[i].queue_id == queue_id && pending[i].level == level)
			return i;
	return -1;
}

/* The entry for queue_id at level, made if missing. */
static PendingCounts *
pending_entry(int32 queue_id, int level)
{
	int			found = find_pending(queue_id, level, pending_count);

	if (found >= 0)
		return &pending[found];

	if (pending_count == pending_size)
	{
		pending_size = pending_size == 0 ? 8 : pending_size * 2;
		pending = pending == NULL ?
			MemoryContextAlloc(TopMemoryContext, sizeof(PendingCounts) * pending_size) :
			repalloc(pending, sizeof(PendingCounts) * pending_size);
	}
	pending[pending_count].queue_id = queue_id;
	pending[pending_count].level = level;
	memset(&pending[pending_count].counts, 0, sizeof(QueueCounts));
	return &pending[pending_count++];
}

/*
 * Adds counts to this backend's row of queue_id, or (preparing, or that row
 * is held) to the transaction's own.  Inside a StorageSession.
 */
static void
write_counts(int32 queue_id, const QueueCounts *counts, bool preparing)
{
	int32		shard = preparing ? transaction_shard() : counter_shard();
	PlanArgs	args;

	queue_counts_args(&args, PLAN_COUNTERS_BUMP, queue_id, shard, counts);
	if (queue_plan_run(&args) > 0)
		return;
	queue_counts_args(&args, PLAN_COUNTERS_ADD, queue_id, shard, counts);
	queue_plan_set(&args, "own_shard", Int32GetDatum(transaction_shard()));
	queue_plan_run(&args);
}

/*
 * Before commit or prepare: the pending counts go to the table, one
 * statement per queue, except those that will go to shared memory at
 * commit (to_shared: their entries are made sure of here); those stay
 * listed.
 */
static void
write_pending(bool to_shared, bool preparing)
{
	StorageSession session;
	bool		pushed = false;
	int			kept = 0;
	int			i;

	if (pending_count == 0)
		return;
	if (to_shared)
	{
		/* Their queues have entries, as most have: no SQL to run. */
		commit_catalog = queue_catalog_relid();
		for (i = 0; i < pending_count; i++)
			if (!queue_shared_counters_exist(commit_catalog, pending[i].queue_id))
				break;
		if (i == pending_count)
			return;
	}
	if (!ActiveSnapshotSet())
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pushed = true;
	}
	queue_storage_begin(&session);
	for (i = 0; i < pending_count; i++)
	{
		if (to_shared &&
			queue_shared_counters_reserve(commit_catalog, pending[i].queue_id))
			pending[kept++] = pending[i];
		else
			write_counts(pending[i].queue_id, &pending[i].counts, preparing);
	}
	queue_storage_end(&session);
	if (pushed)
		PopActiveSnapshot();
	pending_count = kept;
}

static void
counters_xact_callback(XactEvent event, void *arg)
{
	int			i;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			/* the counts of leases and acknowledgements are part of them */
			queue_durability_begin();
			write_pending(queue_shared_counters_enabled(), false);
			queue_durability_end();
			break;
		case XACT_EVENT_PRE_PREPARE:
			/* it would hold the shared shard's row, and the worker with it */
			if (swept)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that has run queue_maintain()")));
			write_pending(false, true);
			break;
		case XACT_EVENT_COMMIT:
			/* What write_pending left is for shared memory. */
			for (i = 0; i < pending_count; i++)
				queue_shared_counters_add(commit_catalog, pending[i].queue_id,
										  &pending[i].counts);
			pending_count = 0;
			written_at_once = false;
			swept = false;
			break;
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
			pending_count = 0;
			written_at_once = false;
			swept = false;
			break;
		default:
			break;
	}
}

/*
 * A subtransaction that rolls back drops its counts; one that commits hands
 * them to its parent (merged with the parent's own for the same queue).
 */
static void
counters_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						  SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	int			i;
	int			kept = 0;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return;

	for (i = 0; i < pending_count; i++)
	{
		PendingCounts entry = pending[i];
		int			parent;

		if (entry.level >= level)
		{
			if (event == SUBXACT_EVENT_ABORT_SUB)
				continue;
			entry.level = level - 1;
			parent = find_pending(entry.queue_id, entry.level, kept);
			if (parent >= 0)
			{
				queue_counts_add(&pending[parent].counts, &entry.counts);
				continue;
			}
		}
		pending[kept++] = entry;
	}
	pending_count = kept;
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(counters_xact_callback, NULL);
	RegisterSubXactCallback(counters_subxact_callback, NULL);
	callbacks_registered = true;
}

/*
 * Adds counts to queue_id's counters in this transaction: when it commits,
 * or at once if they are its first and go to the table.  Must be called inside a
 * StorageSession; SPI_tuptable and SPI_processed are left as they were.
 */
void
queue_counters_add(int32 queue_id, const QueueCounts *counts)
{
	if (queue_counts_zero(counts))
		return;

	register_callbacks();

	/*
	 * Nothing is listed before this is set: the first counts set it.
	 * Counts for shared memory are all listed.
	 */
	if (!written_at_once && !queue_shared_counters_enabled())
	{
		SPITupleTable *rows = SPI_tuptable;
		uint64		processed = SPI_processed;

		write_counts(queue_id, counts, false);
		written_at_once = true;
		SPI_tuptable = rows;
		SPI_processed = processed;
		return;
	}
	queue_counts_add(&pending_entry(queue_id, GetCurrentTransactionNestLevel())->counts,
					 counts);
}

/* The counts of queue_id this transaction made and has not written. */
void
queue_counters_pending(int32 queue_id, QueueCounts *counts)
{
	int			i;

	memset(counts, 0, sizeof(*counts));
	for (i = 0; i < pending_count; i++)
		if (pending[i].queue_id == queue_id)
			queue_counts_add(counts, &pending[i].counts);
}

/*
 * What the counters table lacks of queue_id's counts: what shared memory
 * counted since the last sweep and what this transaction counted.  Between
 * queue_shared_counters_read_begin and _end, as queue_stats and
 * queue_metrics read them.
 */
void
queue_counters_unwritten(int32 queue_id, QueueCounts *counts)
{
	QueueCounts own;

	queue_shared_counters_read(queue_id, counts);
	queue_counters_pending(queue_id, &own);
	queue_counts_add(counts, &own);
}

/* Forgets the counts of a queue this transaction drops. */
void
queue_counters_forget(int32 queue_id)
{
	int			i;
	int			kept = 0;

	for (i = 0; i < pending_count; i++)
		if (pending[i].queue_id != queue_id)
			pending[kept++] = pending[i];
	pending_count = kept;
	queue_shared_counters_forget(queue_id);
}

/*
 * The sweep's part: folds the rows of committed prepared transactions into
 * the shared shard's row, and adds to it what shared memory counted.
 * Inside a StorageSession.
 */
void
queue_counters_sweep(void)
{
	register_callbacks();
	swept = true;
	queue_plan_run1(PLAN_COUNTERS_FOLD, "shared_shard", Int32GetDatum(QUEUE_SHARED_SHARD));
	(void) queue_shared_counters_write();
}
