/*-------------------------------------------------------------------------
 *
 * launcher.c
 *		The launcher: one worker for every database with the extension.
 *
 * A background worker started with the server (shared_preload_libraries).
 * It connects to no database, reads pg_database every few seconds and
 * starts a worker (worker.c) for each database that has none running.  A
 * worker finds out itself whether its database has the extension and exits
 * if not, so a database created, or extended with CREATE EXTENSION, while
 * the server runs is picked up at the next look.  Template databases are
 * never visited: a connection to them would make CREATE DATABASE fail.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "worker/worker.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/wait_event.h"

PGDLLEXPORT void queue_launcher_main(Datum main_arg);

/* How often the launcher looks for databases that need a worker. */
#define LAUNCHER_SCAN_MS		5000

/* A database's worker is started at most this often. */
#define LAUNCHER_RESTART_DELAY_MS	5000

/* What the launcher remembers of a database. */
typedef struct DatabaseEntry
{
	Oid			dboid;			/* hash key */
	TimestampTz last_start;
	BackgroundWorkerHandle *handle;
} DatabaseEntry;

static HTAB *databases = NULL;

/*
 * What the launcher and the workers have in common: started on a primary,
 * with shared memory and a database connection, run by function (of this
 * library), shown as type in pg_stat_activity.
 */
static void
init_background_worker(BackgroundWorker *worker, const char *function,
					   const char *type)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	strlcpy(worker->bgw_library_name, "queue", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker->bgw_type, type, BGW_MAXLEN);
}

/* Registers the launcher; called from _PG_init when preloaded. */
void
queue_launcher_register(void)
{
	BackgroundWorker worker;

	init_background_worker(&worker, "queue_launcher_main", "queue launcher");
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_name, "queue launcher", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}

/* The databases a worker may visit: connectable, valid, not templates. */
static List *
database_list(void)
{
	List	   *result = NIL;
	MemoryContext caller = CurrentMemoryContext;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();

	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tuple = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tuple);
		MemoryContext old;

		if (!db->datallowconn || db->datistemplate || database_is_invalid_form(db))
			continue;
		old = MemoryContextSwitchTo(caller);
		result = lappend_oid(result, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);

	CommitTransactionCommand();
	return result;
}

/* Starts a worker for dboid; false if no background worker slot is free. */
static bool
start_worker(Oid dboid, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	init_background_worker(&worker, "queue_worker_main", "queue worker");
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_name, BGW_MAXLEN, "queue worker for database %u", dboid);
	worker.bgw_main_arg = ObjectIdGetDatum(dboid);
	worker.bgw_notify_pid = MyProcPid;

	return RegisterDynamicBackgroundWorker(&worker, handle);
}

/*
 * One look at the databases: starts a worker where none runs, none is
 * starting, the database is not paused, and the last start is not too
 * recent (a database without the extension is looked at again that often).
 */
static void
start_missing_workers(MemoryContext pass_context)
{
	TimestampTz now = GetCurrentTimestamp();
	static bool warned_no_slot = false;
	List	   *dbs;
	ListCell   *lc;

	MemoryContextSwitchTo(pass_context);
	dbs = database_list();

	foreach(lc, dbs)
	{
		Oid			dboid = lfirst_oid(lc);
		DatabaseEntry *entry;
		bool		found;
		pid_t		pid;
		MemoryContext old;

		if (queue_registry_worker(dboid) != 0 || queue_registry_paused(dboid))
			continue;

		entry = hash_search(databases, &dboid, HASH_ENTER, &found);
		if (!found)
		{
			entry->last_start = 0;
			entry->handle = NULL;
		}
		if (entry->handle != NULL &&
			GetBackgroundWorkerPid(entry->handle, &pid) != BGWH_STOPPED)
			continue;
		if (!TimestampDifferenceExceeds(entry->last_start, now, LAUNCHER_RESTART_DELAY_MS))
			continue;

		if (entry->handle != NULL)
			pfree(entry->handle);
		entry->handle = NULL;
		entry->last_start = now;

		old = MemoryContextSwitchTo(TopMemoryContext);
		if (!start_worker(dboid, &entry->handle))
		{
			entry->handle = NULL;
			if (!warned_no_slot)
				ereport(LOG,
						(errmsg("queue launcher: no free background worker slot for database %u", dboid),
						 errhint("Raise max_worker_processes: the queue extension needs one per database that has it, plus one.")));
			warned_no_slot = true;
		}
		else
			warned_no_slot = false;
		MemoryContextSwitchTo(old);
	}
	MemoryContextReset(pass_context);
}

/* Main of the launcher process. */
void
queue_launcher_main(Datum main_arg)
{
	HASHCTL		ctl;
	MemoryContext pass_context;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* No database: only the shared catalogs, pg_database among them. */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(DatabaseEntry);
	databases = hash_create("queue launcher databases", 64, &ctl,
							HASH_ELEM | HASH_BLOBS);
	pass_context = AllocSetContextCreate(TopMemoryContext, "queue launcher pass",
										 ALLOCSET_DEFAULT_SIZES);

	for (;;)
	{
		if (queue_enable_worker)
			start_missing_workers(pass_context);

		/* Woken early by SIGHUP, and when a worker it started stops. */
		queue_bgworker_sleep(LAUNCHER_SCAN_MS);
	}
}
