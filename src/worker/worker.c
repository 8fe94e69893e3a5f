/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The worker: sweeps one database every queue.maintenance_interval.
 *
 * Started by the launcher, one per database.  It exits at once if its
 * database does not have the extension (that is how the launcher finds
 * the databases that do) and when the extension is dropped or the worker
 * is switched off (queue.enable_worker).  A sweep puts the messages of due
 * schedules, deletes expired messages and moves poison messages in
 * batches, one transaction per batch
 * (worker/sweep.c does the work); then the messages table is vacuumed if
 * enough of it changed (vacuum.c).  An error in a sweep is logged and the
 * worker goes on with the next sweep; it never takes the server down.
 *
 * Asked to stop (SIGTERM: the server stops, or a DROP DATABASE needs the
 * worker gone) while it sleeps between sweeps, as it mostly does, it
 * writes the counters shared memory holds (counters/shared.c: so a stop
 * followed by a switchover or a pg_upgrade loses none) and exits; during a
 * sweep it stops at once, as a backend does, and the postmaster saves the
 * counters to a file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "schedules/schedules.h"
#include "worker/worker.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

PGDLLEXPORT void queue_worker_main(Datum main_arg);

/* What one sweep did, for its log line. */
typedef struct SweepTotals
{
	int64		expired;
	int64		poisoned;
	int64		released;
	int64		removed;		/* retained messages past their retention */
	int			transactions;
} SweepTotals;

static SweepTotals totals;
static MemoryContext sweep_context;
static char *database_name;
static bool was_read_only = false;

/*
 * The worker sleeps between two sweeps.  SIGTERM then ends the sleep, and
 * the worker writes the last counts and exits.  At any other time it ends
 * what the worker is doing at once, as die() does: an error at the next
 * CHECK_FOR_INTERRUPTS, and no waiting for a synchronous standby that may
 * be gone.  A SIGTERM repeated while the last counts are written changes
 * nothing: PostgreSQL 18's fast shutdown was seen to send a second one
 * right after the first, which killed that write and lost the counts.
 */
static volatile sig_atomic_t sleeping = false;

static void
worker_sigterm(SIGNAL_ARGS)
{
	if (!sleeping && !ShutdownRequestPending)
	{
		InterruptPending = true;
		ProcDiePending = true;
	}
	ShutdownRequestPending = true;
	SetLatch(MyLatch);
}

static void
begin_transaction(const char *activity)
{
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
commit_transaction(void)
{
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
	totals.transactions++;
}

/* The kinds of batches a sweep runs. */
typedef enum SweepBatch
{
	SWEEP_SCHEDULES,			/* put the messages of due schedules */
	SWEEP_EXPIRED,				/* delete expired messages */
	SWEEP_POISON,				/* move the poison messages of queue */
	SWEEP_DEDUPLICATION,		/* forget deduplication_ids past their window */
	SWEEP_RETAINED				/* remove retained messages past their retention */
} SweepBatch;

/* Runs batches of one kind, a transaction each, until one comes short. */
static int64
run_batches(const char *activity, SweepBatch kind, const QueueInfo *queue)
{
	int64		total = 0;
	int64		done;
	SweepPassedOver passed_over;

	queue_sweep_passed_over_init(&passed_over, sweep_context);
	do
	{
		StorageSession session;

		CHECK_FOR_INTERRUPTS();
		begin_transaction(activity);
		queue_storage_begin(&session);
		switch (kind)
		{
			case SWEEP_SCHEDULES:
				done = queue_put_due(GetCurrentTimestamp(), queue_maintenance_batch_size);
				break;
			case SWEEP_EXPIRED:
				done = queue_expire_batch(GetCurrentTimestamp(), queue_maintenance_batch_size,
										  &passed_over);
				break;
			case SWEEP_POISON:
				done = queue_poison_batch(queue, queue_writer_now(), queue_maintenance_batch_size,
										  &passed_over);
				break;
			case SWEEP_RETAINED:
				done = queue_retained_remove(GetCurrentTimestamp(),
											 queue_maintenance_batch_size);
				break;
			case SWEEP_DEDUPLICATION:
			default:
				done = queue_deduplication_forget(GetCurrentTimestamp(),
												  queue_maintenance_batch_size);
				break;
		}
		queue_storage_end(&session);
		commit_transaction();
		if (done > 0)
			total += done;
	} while (queue_sweep_batch_full(&passed_over, done, queue_maintenance_batch_size));

	return total;
}

/*
 * Is the extension installed in the database?  *writable says whether the
 * worker may write there now: default_transaction_read_only = on is how
 * operators freeze writes before a switchover or a dump, and the worker
 * writes nothing then either (it says so once).
 */
static bool
extension_here(bool *writable)
{
	bool		present;

	begin_transaction("queue: looking for the extension");
	present = OidIsValid(get_extension_oid("queue", true));
	*writable = !XactReadOnly;
	commit_transaction();

	if (present && *writable == was_read_only)
		ereport(LOG,
				(errmsg(*writable ?
						"queue worker: database \"%s\" is writable again: sweeps resume" :
						"queue worker: database \"%s\" is read-only (default_transaction_read_only): no sweeps until it is not",
						database_name)));
	was_read_only = !*writable;
	return present;
}

/* Adds the counts shared memory holds to the counters table. */
static void
write_counters(void)
{
	StorageSession session;

	begin_transaction("queue: writing the counters");
	queue_storage_begin(&session);
	queue_counters_sweep();
	queue_storage_end(&session);
	commit_transaction();
}

/*
 * The worker's last step: the counts, if the extension is here to take them.
 * Its commit does not wait for a synchronous standby, which may be gone
 * (nothing would end the wait: SIGTERM came already); a clean stop sends
 * the standbys every WAL record before it ends anyway.
 */
static bool
write_counters_if_writable(void)
{
	bool		writable;

	if (!extension_here(&writable) || !writable)
		return true;
	SetConfigOption("synchronous_commit", "local", PGC_SUSET, PGC_S_OVERRIDE);
	/* a repeated SIGTERM no longer ends it (worker_sigterm): no endless wait */
	SetConfigOption("lock_timeout", "10s", PGC_SUSET, PGC_S_OVERRIDE);
	write_counters();
	return true;
}

/* One sweep of the database.  Returns false if the extension is not here. */
static bool
sweep_database(void)
{
	StorageSession session;
	QueueInfo  *queues;
	int			count;
	int			i;
	int64		changes;
	bool		writable;

	if (!extension_here(&writable))
		return false;
	if (!writable)
		return true;

	/* first, so that a due time waits for no other work */
	(void) run_batches("queue: putting the messages of due schedules", SWEEP_SCHEDULES, NULL);
	totals.expired += run_batches("queue: deleting expired messages", SWEEP_EXPIRED, NULL);
	(void) run_batches("queue: forgetting deduplication ids", SWEEP_DEDUPLICATION, NULL);
	totals.removed += run_batches("queue: removing retained messages", SWEEP_RETAINED, NULL);

	begin_transaction("queue: releasing leases of ended sessions");
	queue_storage_begin(&session);
	totals.released += queue_release_orphans(queue_writer_now());
	queue_storage_end(&session);
	commit_transaction();

	begin_transaction("queue: listing queues with a poison queue");
	queue_storage_begin(&session);
	count = queue_poisoning_queues(&queues, sweep_context);
	queue_storage_end(&session);
	commit_transaction();

	for (i = 0; i < count; i++)
		totals.poisoned += run_batches("queue: moving poison messages", SWEEP_POISON,
									   &queues[i]);

	write_counters();

	if (queue_census_due())
	{
		begin_transaction("queue: counting messages for queue_metrics");
		queue_storage_begin(&session);
		queue_census_take();
		queue_storage_end(&session);
		commit_transaction();
	}

	changes = queue_vacuum_if_due();
	if (changes > 0)
		ereport(DEBUG1,
				(errmsg("queue worker: database \"%s\": vacuum of queue_storage.messages after %lld rows changed (skipped if its lock was taken)",
						database_name, (long long) changes)));
	return true;
}

/*
 * Runs step -- a sweep, or the last write of the counters -- logging its
 * errors instead of dying of them.  Returns false if the extension is not
 * installed (any more).
 */
static bool
sweep(bool (*step) (void))
{
	TimestampTz start = GetCurrentTimestamp();
	volatile bool present = true;

	memset(&totals, 0, sizeof(totals));
	PG_TRY();
	{
		present = step();
	}
	PG_CATCH();
	{
		HOLD_INTERRUPTS();
		EmitErrorReport();
		AbortOutOfAnyTransaction();
		FlushErrorState();
		pgstat_report_activity(STATE_IDLE, NULL);
		RESUME_INTERRUPTS();
		ereport(LOG,
				(errmsg("queue worker: sweep of database \"%s\" failed; the next one is in %d ms",
						database_name, queue_maintenance_interval)));
	}
	PG_END_TRY();
	MemoryContextReset(sweep_context);

	/*
	 * Report the rows this sweep changed now, not up to a second later
	 * (pgstat_report_stat(false) waits that long between reports): the
	 * worker's vacuum and autovacuum decide on these counts, and an ANALYZE
	 * in between would count the rows twice.
	 */
	if (totals.expired > 0 || totals.poisoned > 0 || totals.released > 0 ||
		totals.removed > 0)
	{
		pgstat_report_stat(true);
		ereport(LOG,
				(errmsg("queue worker: database \"%s\": %lld expired messages deleted, %lld poison messages moved, %lld leases of ended sessions released, %lld retained messages removed, in %d transactions and %ld ms",
						database_name, (long long) totals.expired,
						(long long) totals.poisoned, (long long) totals.released,
						(long long) totals.removed, totals.transactions,
						(long) TimestampDifferenceMilliseconds(start, GetCurrentTimestamp()))));
	}
	return present;
}

/*
 * Sleeps on the latch until the timeout, a signal or a notice wakes it;
 * then exits on SIGTERM and rereads the configuration on SIGHUP.  The loop
 * of the launcher and of the workers.
 */
void
queue_bgworker_sleep(long timeout_ms)
{
	static uint32 wait_event = 0;

	if (wait_event == 0)
		wait_event = queue_wait_event("QueueWorkerSleep");
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 timeout_ms, wait_event);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();

	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

/* Main of a worker process; main_arg is the database's OID. */
void
queue_worker_main(Datum main_arg)
{
	Oid			dboid = DatumGetObjectId(main_arg);
	bool		swept_before = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, worker_sigterm);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);

	/* Another worker serves this database, or it is paused: nothing to do. */
	if (!queue_registry_claim(dboid))
		proc_exit(0);

	StartTransactionCommand();
	database_name = MemoryContextStrdup(TopMemoryContext, get_database_name(dboid));
	CommitTransactionCommand();
	pgstat_report_appname("queue worker");

	sweep_context = AllocSetContextCreate(TopMemoryContext, "queue sweep",
										  ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		if (!queue_enable_worker)
		{
			ereport(LOG,
					(errmsg("queue worker: stopping in database \"%s\": queue.enable_worker is off",
							database_name)));
			break;
		}

		if (!sweep(sweep_database))
		{
			if (swept_before)
				ereport(LOG,
						(errmsg("queue worker: stopping in database \"%s\": the extension was dropped",
								database_name)));
			break;
		}
		swept_before = true;

		/*
		 * A SIGTERM during the sweep: its latch may have been reset by a
		 * wait since (a synchronous commit's), so look before sleeping.
		 */
		CHECK_FOR_INTERRUPTS();
		sleeping = true;
		queue_bgworker_sleep(queue_maintenance_interval);
		sleeping = false;
		if (ShutdownRequestPending)
		{
			/* the last counts, unless a sweep would not write them now */
			(void) sweep(write_counters_if_writable);
			break;
		}
	}

	proc_exit(0);
}
