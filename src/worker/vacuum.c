/*-------------------------------------------------------------------------
 *
 * vacuum.c
 *		The worker vacuums the messages table when enough rows changed.
 *
 * Every message is inserted, updated by each get and deleted: a busy queue
 * leaves dead rows as fast as it moves messages.  PostgreSQL prunes a page
 * when it reads it, but only VACUUM tells the free space map about the
 * room it made, so between two vacuums new rows go to new pages and the
 * table grows with the messages moved since the last one.  Autovacuum
 * looks at a database every autovacuum_naptime (a minute by default), and
 * under a busy queue the table grew several times larger with a minute
 * between vacuums than with one every few seconds (bench/reports/history.md,
 * "The worker vacuums the messages table").
 *
 * So, after each sweep, the worker counts the rows updated and deleted in
 * the table since the last vacuum (anyone's: the cumulative statistics
 * tell) and, past queue.vacuum_threshold and a fifth of the live rows,
 * vacuums it as VACUUM would: skipping it if someone else holds a
 * conflicting lock (an autovacuum, a DDL), never waiting.  It looks at the
 * lock first and, if it is taken, waits for the next sweep without calling
 * VACUUM: VACUUM would say it skipped the table in the server log, at every
 * sweep for as long as an autovacuum of a big table runs.  The fifth keeps
 * a big backlog from being vacuumed for a few changes (a vacuum's work
 * grows with the table, and the next sweep waits for it).  0 leaves it all
 * to autovacuum.
 *
 * The worker also decides whether the vacuum gives the table's empty tail
 * back to the file system.  A vacuum that truncates leaves the table
 * smaller than the traffic needs until the next one, so new rows extend it
 * again: under steady traffic the table went up and down with truncation
 * and stayed level without (bench/reports/history.md, "It gives a burst's
 * room back, and only that").  But a burst (a million messages waiting)
 * leaves a table that only truncation gives back.  So the table is created
 * with vacuum_truncate off (autovacuum and a plain VACUUM keep its pages),
 * and the worker's vacuum truncates only when the table is more than
 * TRUNCATE_BEYOND_NEED times the size of the rows written since the last
 * vacuum began: what the traffic fills between two vacuums stays, a
 * burst's room goes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "worker/worker.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/vacuum.h"
#include "nodes/makefuncs.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* The table is truncated when bigger than this many times what it needs. */
#define TRUNCATE_BEYOND_NEED 4

/* What the statistics said at the last vacuum seen, of ours or another. */
static PgStat_Counter vacuums_seen = -1;
static PgStat_Counter changes_at_last_vacuum = 0;

/*
 * The changes counted when the last vacuum began: ours, at its start;
 * another's, at the look that saw it done (when it began is not known).
 */
static PgStat_Counter changes_at_vacuum_start = 0;
static bool our_vacuum_pending = false;

/* Where PostgreSQL's vacuum keeps what must outlive its transactions. */
static MemoryContext vacuum_context = NULL;

/*
 * Is the table more than TRUNCATE_BEYOND_NEED times the size of the rows
 * written over `changes`?  Each update or delete counted in
 * `changes` goes with one row version written (a message is inserted,
 * updated by each get, deleted); a version's size is the columns' average
 * widths from the statistics, its header and line pointer.
 *
 * Not before an ANALYZE has measured the bodies: without statistics the
 * planner guesses 32 bytes for a text column, so 1 KiB messages looked
 * five times smaller than they are and a table holding just what the
 * traffic needs looked worth truncating (test/t/011_vacuum_unanalyzed.pl;
 * seen on a new server under the batch benchmark, the vacuum stuck in
 * "truncating heap" while dead rows piled up: bench/reports/history.md,
 * "It gives a burst's room back, and only that").  Autovacuum analyzes
 * a table soon after a burst of inserts (with it off, an ANALYZE does),
 * so a burst's room still goes back at a later vacuum.  The caller holds
 * a lock on the table.
 */
static bool
worth_truncating(Oid relid, int64 changes)
{
	Relation	rel;
	double		table_bytes;
	double		row_bytes;

	if (get_attavgwidth(relid, get_attnum(relid, "body")) <= 0)
		return false;

	rel = table_open(relid, NoLock);
	table_bytes = (double) RelationGetNumberOfBlocks(rel) * BLCKSZ;
	row_bytes = get_rel_data_width(rel, NULL) +
		MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData);
	table_close(rel, NoLock);
	return table_bytes > TRUNCATE_BEYOND_NEED * (double) changes * row_bytes;
}

static void
vacuum_messages(Oid relid, bool truncate)
{
	VacuumParams params = {0};

	queue_vacuum_params_init(&params);
	params.options |= VACOPT_VACUUM | VACOPT_SKIP_LOCKED;
	params.index_cleanup = VACOPTVALUE_UNSPECIFIED;
	/* given, this overrides the table's vacuum_truncate = false */
	params.truncate = truncate ? VACOPTVALUE_ENABLED : VACOPTVALUE_DISABLED;
	params.nworkers = -1;		/* no parallel workers */

	if (vacuum_context == NULL)
		vacuum_context = AllocSetContextCreate(TopMemoryContext, "queue vacuum",
											   ALLOCSET_DEFAULT_SIZES);
	/* vacuum commits this transaction, runs its own, starts a new one */
	queue_vacuum(list_make1(makeVacuumRelation(NULL, relid, NIL)), &params,
				 vacuum_context);
}

/*
 * Called by the worker between sweeps, outside any transaction.  Returns
 * the number of row changes that made it run VACUUM (which skips the table
 * if its lock was taken after our look), or 0 if it did not.
 */
int64
queue_vacuum_if_due(void)
{
	Oid			relid;
	PgStat_StatTabEntry *stats;
	PgStat_Counter changes = 0;
	PgStat_Counter vacuums = 0;
	PgStat_Counter live = 0;
	int64		since = 0;
	bool		truncate;

	if (queue_vacuum_threshold <= 0)
		return 0;

	StartTransactionCommand();
	relid = queue_storage_relid("messages");
	stats = OidIsValid(relid) ? pgstat_fetch_stat_tabentry(relid) : NULL;
	if (stats != NULL)
	{
		changes = stats->tuples_updated + stats->tuples_deleted;
		vacuums = stats->vacuum_count + QUEUE_STATS_AUTOVACUUMS(stats);
		if (vacuums != vacuums_seen)
		{
			/*
			 * Someone vacuumed since our last look: count from here.  At our
			 * first look, from the table's creation if it was never vacuumed.
			 */
			changes_at_last_vacuum = vacuums_seen < 0 && vacuums == 0 ? 0 : changes;
			if (!our_vacuum_pending)
				changes_at_vacuum_start = changes_at_last_vacuum;
			our_vacuum_pending = false;
			vacuums_seen = vacuums;
		}
		since = changes - changes_at_last_vacuum;
		live = QUEUE_STATS_LIVE_TUPLES(stats);
	}
	if (since < queue_vacuum_threshold || since < live / 5)
	{
		CommitTransactionCommand();
		return 0;
	}

	/*
	 * Taken: try at the next sweep.  Free: VACUUM takes it again (and still
	 * skips the table if someone took it in between).
	 */
	if (!ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
	{
		CommitTransactionCommand();
		return 0;
	}
	/*
	 * What the table must hold is what the traffic writes from one vacuum's
	 * start to the next one's, not only since the last one ended: under
	 * traffic that changes rows faster than a vacuum of the table takes,
	 * most of it was written while the last vacuum ran.  Counted from its
	 * end only, the need looked a few times smaller than the table, the
	 * vacuum tried to truncate, and PostgreSQL's truncation then waited
	 * seconds for a lock that busy clients never leave free (no vacuuming
	 * meanwhile, dead rows piling up) and, each time it got it, stopped
	 * them all.
	 */
	truncate = worth_truncating(relid, changes - changes_at_vacuum_start);
	UnlockRelationOid(relid, ShareUpdateExclusiveLock);
	changes_at_vacuum_start = changes;
	our_vacuum_pending = true;

	pgstat_report_activity(STATE_RUNNING, "queue: vacuuming queue_storage.messages");
	vacuum_messages(relid, truncate);
	CommitTransactionCommand();
	pgstat_report_activity(STATE_IDLE, NULL);
	MemoryContextReset(vacuum_context);

	/*
	 * The next look counts from this vacuum (its vacuum_count is new), or,
	 * if the lock was taken and it skipped the table, tries again.
	 */
	return since;
}
