/*-------------------------------------------------------------------------
 *
 * shared_counters.c
 *		The counters of queue_stats, kept in shared memory between sweeps.
 *
 * Updating a row of queue_storage.counters in every transaction took a
 * fifth of a put/get/delete cycle (callgrind: 180,000 of 791,000
 * instructions).  So, when the library is preloaded, a transaction adds its
 * counts (counters.c) at commit to its queue's entry in a hash table in
 * shared memory, under a lightweight lock, and the sweep (the worker, or
 * queue_maintain) writes each changed entry to the queue's counters row of
 * shard QUEUE_SHARED_SHARD, as a total.  queue_stats reads the entry where
 * there is one, and that row where there is none.
 *
 * The price: a crash (a process dying, shared memory reset) loses the
 * counts made since the last sweep wrote them, as it loses PostgreSQL's own
 * statistics.  A stop, even an immediate one, loses nothing: the postmaster
 * saves the entries to a file as it exits and the next start reads them
 * back.  queue.durable_counters = on writes a
 * transaction's counts to the table in the transaction instead.
 *
 * An entry is made, from its row, before the first transaction that counts
 * for its queue commits, and removed when a drop of the queue commits.
 * Whoever counts for a queue holds a lock on it until its transaction ends,
 * so no drop commits between making sure of the entry and adding to it.
 * When the table is full, counts go to the counters table as in durable
 * mode.  Entries of a database or extension dropped since the server
 * started are never read again; they stay until the next start.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* Entries: far more queues than anyone counts in one server. */
#define SHARED_COUNTERS_MAX		4096

#define SHARED_COUNTERS_FILE	PGSTAT_STAT_PERMANENT_DIRECTORY "/queue_counters.stat"
#define SHARED_COUNTERS_MAGIC	0x51434e54	/* "QCNT" */

typedef struct SharedCountersKey
{
	Oid			database;
	Oid			catalog;		/* queue_storage.queues: one per CREATE EXTENSION */
	int32		queue_id;
} SharedCountersKey;

typedef struct SharedCountersEntry
{
	SharedCountersKey key;
	QueueCounts total;			/* everything counted since the queue's creation */
	QueueCounts written;		/* what the table's row holds, as far as we know */
} SharedCountersEntry;

typedef struct SharedCounters
{
	LWLock	   *lock;
	HTAB	   *entries;
} SharedCounters;

static SharedCounters shared = {NULL, NULL};

/* Drops this transaction makes, at its (sub)transaction level. */
typedef struct DroppedQueue
{
	SharedCountersKey key;
	int			level;
} DroppedQueue;

/* Totals this transaction wrote to the table, known written at commit. */
typedef struct WrittenTotal
{
	SharedCountersKey key;
	QueueCounts total;
} WrittenTotal;

static List *dropped = NIL;
static List *written = NIL;
static bool callbacks_registered = false;

Size
queue_shared_counters_size(void)
{
	return add_size(MAXALIGN(sizeof(SharedCounters)),
					hash_estimate_size(SHARED_COUNTERS_MAX,
									   sizeof(SharedCountersEntry)));
}

/* Reads the entries the postmaster saved at the last clean shutdown. */
static void
load_saved_counters(void)
{
	FILE	   *file = AllocateFile(SHARED_COUNTERS_FILE, PG_BINARY_R);
	uint32		magic;
	int32		count;
	int			i;

	if (file == NULL)
		return;
	if (fread(&magic, sizeof(magic), 1, file) != 1 || magic != SHARED_COUNTERS_MAGIC ||
		fread(&count, sizeof(count), 1, file) != 1)
		count = 0;
	for (i = 0; i < count; i++)
	{
		SharedCountersEntry saved;
		SharedCountersEntry *entry;

		if (fread(&saved, sizeof(saved), 1, file) != 1)
			break;
		entry = hash_search(shared.entries, &saved.key, HASH_ENTER_NULL, NULL);
		if (entry == NULL)
			break;
		entry->total = saved.total;
		/* Not known to be in the table: the first sweep writes it. */
		memset(&entry->written, 0, sizeof(entry->written));
	}
	FreeFile(file);

	/* A crash must not bring these back a second time. */
	unlink(SHARED_COUNTERS_FILE);
}

/* Postmaster exit: saves the entries, unless the server crashed. */
static void
save_counters(int code, Datum arg)
{
	FILE	   *file;
	HASH_SEQ_STATUS scan;
	SharedCountersEntry *entry;
	uint32		magic = SHARED_COUNTERS_MAGIC;
	int32		count = (int32) hash_get_num_entries(shared.entries);

	if (code != 0)
		return;

	file = AllocateFile(SHARED_COUNTERS_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto failed;
	if (fwrite(&magic, sizeof(magic), 1, file) != 1 ||
		fwrite(&count, sizeof(count), 1, file) != 1)
		goto failed;
	hash_seq_init(&scan, shared.entries);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (fwrite(entry, sizeof(*entry), 1, file) != 1)
		{
			hash_seq_term(&scan);
			goto failed;
		}
	}
	if (FreeFile(file) != 0)
	{
		file = NULL;
		goto failed;
	}
	(void) durable_rename(SHARED_COUNTERS_FILE ".tmp", SHARED_COUNTERS_FILE, LOG);
	return;

failed:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("queue: could not save the counters of queue_stats to \"%s\": %m",
					SHARED_COUNTERS_FILE ".tmp")));
	if (file != NULL)
		FreeFile(file);
	unlink(SHARED_COUNTERS_FILE ".tmp");
}

/* Called by shmem.c, under AddinShmemInitLock, in every process. */
void
queue_shared_counters_attach(LWLock *lock)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(SharedCountersKey);
	ctl.entrysize = sizeof(SharedCountersEntry);
	shared.entries = queue_shmem_init_fixed_hash("queue counters", SHARED_COUNTERS_MAX,
												 &ctl, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
	shared.lock = lock;

	/* The postmaster, at start and after a crash. */
	if (!IsUnderPostmaster)
	{
		load_saved_counters();
		on_shmem_exit(save_counters, (Datum) 0);
	}
}

/* Do this backend's counts go to shared memory? */
bool
queue_shared_counters_enabled(void)
{
	return shared.entries != NULL && !queue_durable_counters;
}

static SharedCountersKey
key_of(Oid catalog, int32 queue_id)
{
	SharedCountersKey key;

	memset(&key, 0, sizeof(key));
	key.database = MyDatabaseId;
	key.catalog = catalog;
	key.queue_id = queue_id;
	return key;
}

/* The queue's row of the shared shard, or zeros if it has none. */
static QueueCounts
read_row(int32 queue_id)
{
	QueueCounts counts = {0};
	Datum		values[2];

	values[0] = Int32GetDatum(queue_id);
	values[1] = Int32GetDatum(QUEUE_SHARED_SHARD);
	if (queue_plan_run(PLAN_COUNTERS_ROW, values, NULL) > 0)
	{
		HeapTuple	row = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		counts.puts = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
		counts.gets = DatumGetInt64(SPI_getbinval(row, desc, 2, &isnull));
		counts.deletes = DatumGetInt64(SPI_getbinval(row, desc, 3, &isnull));
		counts.poisoned = DatumGetInt64(SPI_getbinval(row, desc, 4, &isnull));
		counts.expired = DatumGetInt64(SPI_getbinval(row, desc, 5, &isnull));
	}
	return counts;
}

/* Has queue_id an entry? */
bool
queue_shared_counters_exist(Oid catalog, int32 queue_id)
{
	SharedCountersKey key = key_of(catalog, queue_id);
	bool		found;

	LWLockAcquire(shared.lock, LW_SHARED);
	found = hash_search(shared.entries, &key, HASH_FIND, NULL) != NULL;
	LWLockRelease(shared.lock);
	return found;
}

/*
 * Before commit: makes sure queue_id has an entry, made from its row if
 * missing.  Returns false if the table is full.  Inside a StorageSession.
 */
bool
queue_shared_counters_reserve(Oid catalog, int32 queue_id)
{
	SharedCountersKey key = key_of(catalog, queue_id);
	SharedCountersEntry *entry;
	QueueCounts row;
	bool		found;

	if (queue_shared_counters_exist(catalog, queue_id))
		return true;

	/* Nobody writes the row of a queue without an entry: it is the total. */
	row = read_row(queue_id);

	LWLockAcquire(shared.lock, LW_EXCLUSIVE);
	entry = hash_search(shared.entries, &key, HASH_ENTER_NULL, &found);
	if (entry != NULL && !found)
		entry->total = entry->written = row;
	LWLockRelease(shared.lock);
	return entry != NULL;
}

/* At commit: adds counts to an entry reserved before.  Never fails. */
void
queue_shared_counters_add(Oid catalog, int32 queue_id, const QueueCounts *counts)
{
	SharedCountersKey key = key_of(catalog, queue_id);
	SharedCountersEntry *entry;

	LWLockAcquire(shared.lock, LW_EXCLUSIVE);
	entry = hash_search(shared.entries, &key, HASH_FIND, NULL);
	if (entry != NULL)
		queue_counts_add(&entry->total, counts);
	LWLockRelease(shared.lock);

	if (entry == NULL)
		ereport(WARNING,
				(errmsg("queue: the counters of queue %d lost the counts of a transaction",
						queue_id)));
}

/*
 * The totals of queue_id, if it has an entry; else false (its row of the
 * shared shard holds them).
 */
bool
queue_shared_counters_read(int32 queue_id, QueueCounts *counts)
{
	SharedCountersKey key;
	SharedCountersEntry *entry;

	if (shared.entries == NULL)
		return false;
	key = key_of(queue_catalog_relid(), queue_id);
	LWLockAcquire(shared.lock, LW_SHARED);
	entry = hash_search(shared.entries, &key, HASH_FIND, NULL);
	if (entry != NULL)
		*counts = entry->total;
	LWLockRelease(shared.lock);
	return entry != NULL;
}

static void
shared_counters_xact_callback(XactEvent event, void *arg)
{
	ListCell   *cell;

	if (event == XACT_EVENT_COMMIT && (dropped != NIL || written != NIL))
	{
		LWLockAcquire(shared.lock, LW_EXCLUSIVE);
		foreach(cell, written)
		{
			WrittenTotal *w = lfirst(cell);
			SharedCountersEntry *entry = hash_search(shared.entries, &w->key,
													 HASH_FIND, NULL);

			if (entry != NULL)
				entry->written = w->total;
		}
		foreach(cell, dropped)
			(void) hash_search(shared.entries, &((DroppedQueue *) lfirst(cell))->key,
							   HASH_REMOVE, NULL);
		LWLockRelease(shared.lock);
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		/* Both lists live in TopTransactionContext, gone with it. */
		dropped = NIL;
		written = NIL;
	}
}

/* A drop rolled back to a savepoint removes nothing. */
static void
shared_counters_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *cell;

	foreach(cell, dropped)
	{
		DroppedQueue *drop = lfirst(cell);

		if (drop->level < level)
			continue;
		if (event == SUBXACT_EVENT_ABORT_SUB)
			dropped = foreach_delete_current(dropped, cell);
		else if (event == SUBXACT_EVENT_COMMIT_SUB)
			drop->level = level - 1;
	}
}

static void
register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(shared_counters_xact_callback, NULL);
	RegisterSubXactCallback(shared_counters_subxact_callback, NULL);
	callbacks_registered = true;
}

/* queue_drop: the queue's entry goes when the drop commits. */
void
queue_shared_counters_forget(int32 queue_id)
{
	MemoryContext old;
	DroppedQueue *drop;

	if (shared.entries == NULL)
		return;
	register_callbacks();
	old = MemoryContextSwitchTo(TopTransactionContext);
	drop = palloc(sizeof(DroppedQueue));
	drop->key = key_of(queue_catalog_relid(), queue_id);
	drop->level = GetCurrentTransactionNestLevel();
	dropped = lappend(dropped, drop);
	MemoryContextSwitchTo(old);
}

/*
 * The sweep: writes the totals of this database's entries that changed
 * since they were last written to their rows.  A queue being dropped (its
 * lock taken) waits for the next sweep.  Returns how many rows it wrote.
 * Inside a StorageSession; the totals count as written once the caller's
 * transaction commits.
 */
int
queue_shared_counters_write(void)
{
	Oid			catalog;
	HASH_SEQ_STATUS scan;
	SharedCountersEntry *entry;
	WrittenTotal *changed;
	MemoryContext old;
	int			count = 0;
	int			rows = 0;
	int			i;

	if (shared.entries == NULL)
		return 0;
	catalog = queue_catalog_relid();
	register_callbacks();

	LWLockAcquire(shared.lock, LW_SHARED);
	changed = MemoryContextAlloc(TopTransactionContext,
								 sizeof(WrittenTotal) *
								 (hash_get_num_entries(shared.entries) + 1));
	hash_seq_init(&scan, shared.entries);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database != MyDatabaseId || entry->key.catalog != catalog ||
			memcmp(&entry->total, &entry->written, sizeof(QueueCounts)) == 0)
			continue;
		changed[count].key = entry->key;
		changed[count].total = entry->total;
		count++;
	}
	LWLockRelease(shared.lock);

	for (i = 0; i < count; i++)
	{
		Datum		values[QUEUE_COUNTS_PARAMS];

		if (!queue_try_lock(changed[i].key.queue_id, AccessShareLock))
			continue;
		queue_counts_params(values, changed[i].key.queue_id, QUEUE_SHARED_SHARD,
							&changed[i].total);
		if (queue_plan_run(PLAN_COUNTERS_WRITE_TOTAL, values, NULL) == 0)
			continue;			/* the queue was dropped */
		old = MemoryContextSwitchTo(TopTransactionContext);
		written = lappend(written, &changed[i]);
		MemoryContextSwitchTo(old);
		rows++;
	}
	return rows;
}
