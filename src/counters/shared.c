/*-------------------------------------------------------------------------
 *
 * shared.c
 *		The counters of queue_stats, kept in shared memory between sweeps.
 *
 * Updating a row of queue_storage.counters in every transaction took a
 * large share of a put/get/delete cycle (bench/reports/history.md,
 * "Measurements behind the design decisions", queue_stats).  So, when the
 * library is preloaded, a transaction adds its counts
 * (counters/transaction.c) at commit to its queue's entry in a hash table in
 * shared memory, under a lightweight lock, and the sweep (the worker, or
 * queue_maintain) takes what an entry holds and adds it to the queue's
 * counters row of shard QUEUE_SHARED_SHARD.  An entry holds only counts
 * not in the table yet; queue_stats adds them to the table's sum.
 *
 * The table is the record; shared memory only ever adds to it.  A sweep
 * takes counts out of an entry as it writes them, and gives them back if
 * its (sub)transaction rolls back, so two sweeps never write the same
 * counts and a failed one loses none.  Readers wait for a sweep that took
 * counts to end (COUNTERS_LOCK_SPACE), so a counter read twice never goes
 * back.  What is lost when, and never more:
 *
 *	- a crash (a process dying, shared memory reset) or a failover loses
 *	  the counts made since the last sweep, as PostgreSQL's own statistics
 *	  are lost;
 *	- a clean stop loses nothing: the worker writes the entries as it stops
 *	  (worker.c), and what committed after that is saved to a file by the
 *	  postmaster as it exits and read back by the next start -- unless the
 *	  server starts as a standby (a switchover): it must not add, once
 *	  promoted, counts its new primary never had, so it drops them;
 *	- pg_upgrade and a dump and restore keep what the table holds: the
 *	  file is not carried over, and a dump taken while the server runs
 *	  lacks the counts since the last sweep.
 *
 * queue.durable_counters = on writes a transaction's counts to the table
 * in the transaction instead.  An entry is made before the first
 * transaction that counts for its queue commits, and removed when a drop
 * of the queue commits.  Whoever counts for a queue holds a lock on it
 * until its transaction ends, so no drop commits between making sure of the
 * entry and adding to it.  When the table is full, counts go to the
 * counters table as in durable mode.  Entries of a database or extension
 * dropped since the server started are never read again; they stay until
 * the next start.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "queue_storage/queue_storage.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* Entries: far more queues than anyone counts in one server. */
#define SHARED_COUNTERS_MAX		4096

/*
 * field4 of the advisory lock that orders a sweep and the readers: a sweep
 * holds it (row exclusive) from taking counts out of shared memory until
 * its transaction ends, a reader (share) while it adds the table's sum and
 * shared memory up, so that no reader sees the counts in neither place
 * (between the take and the commit) and a counter never goes back.  Sweeps
 * do not wait for each other: each takes only counts no other took.  The
 * reader reads the table with the latest snapshot (queue_plan_run_latest),
 * so that under REPEATABLE READ too it sees what the sweep committed.
 */
#define COUNTERS_LOCK_SPACE		0x5143

#define SHARED_COUNTERS_FILE	PGSTAT_STAT_PERMANENT_DIRECTORY "/queue_counters.stat"
#define SHARED_COUNTERS_MAGIC	0x51434e32	/* "QCN2": counts not yet written */

typedef struct SharedCountersKey
{
	Oid			database;
	Oid			catalog;		/* queue_storage.queues: one per CREATE EXTENSION */
	int32		queue_id;
} SharedCountersKey;

typedef struct SharedCountersEntry
{
	SharedCountersKey key;
	QueueCounts unwritten;		/* committed, not yet added to the table */
} SharedCountersEntry;

typedef struct SharedCounters
{
	LWLock	   *lock;
	HTAB	   *entries;
} SharedCounters;

static SharedCounters shared = {NULL, NULL};

/*
 * A drop this transaction makes, or counts a sweep of this transaction took
 * from an entry to write them, at the (sub)transaction level it did so.
 */
typedef struct CountersChange
{
	SharedCountersKey key;
	QueueCounts counts;			/* taken: given back if the level rolls back */
	int			level;
} CountersChange;

static List *dropped = NIL;
static List *taken = NIL;
static bool callbacks_registered = false;

Size
queue_shared_counters_size(void)
{
	return add_size(MAXALIGN(sizeof(SharedCounters)),
					hash_estimate_size(SHARED_COUNTERS_MAX,
									   sizeof(SharedCountersEntry)));
}

/*
 * Adds counts to key's entry, made if missing.  Under the lock.  Returns
 * false if the table is full.
 */
static bool
add_to_entry(const SharedCountersKey *key, const QueueCounts *counts)
{
	SharedCountersEntry *entry;
	bool		found;

	entry = hash_search(shared.entries, key, HASH_ENTER_NULL, &found);
	if (entry == NULL)
		return false;
	if (!found)
		memset(&entry->unwritten, 0, sizeof(entry->unwritten));
	queue_counts_add(&entry->unwritten, counts);
	return true;
}

/*
 * Reads the counts the postmaster saved at the last clean stop, unless this
 * server starts as a standby: they are counts of its time as a primary that
 * no sweep wrote, and its new primary counted its own since.
 */
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
	if (count > 0 && (access(STANDBY_SIGNAL_FILE, F_OK) == 0 ||
					  access(RECOVERY_SIGNAL_FILE, F_OK) == 0))
	{
		ereport(LOG,
				(errmsg("queue: the counts of %d queues made after the last sweep before the stop are dropped: the server starts as a standby",
						count)));
		count = 0;
	}
	for (i = 0; i < count; i++)
	{
		SharedCountersEntry saved;

		if (fread(&saved, sizeof(saved), 1, file) != 1 ||
			!add_to_entry(&saved.key, &saved.unwritten))
			break;
	}
	FreeFile(file);

	/* A crash must not bring these back a second time. */
	unlink(SHARED_COUNTERS_FILE);
}

/* Postmaster exit: saves the unwritten counts, unless the server crashed. */
static void
save_counters(int code, Datum arg)
{
	FILE	   *file;
	HASH_SEQ_STATUS scan;
	SharedCountersEntry *entry;
	uint32		magic = SHARED_COUNTERS_MAGIC;
	int32		count = 0;

	if (code != 0)
		return;

	hash_seq_init(&scan, shared.entries);
	while ((entry = hash_seq_search(&scan)) != NULL)
		if (!queue_counts_zero(&entry->unwritten))
			count++;
	if (count == 0)
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
		if (queue_counts_zero(&entry->unwritten))
			continue;
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
 * Before commit: makes sure queue_id has an entry.  Returns false if the
 * table is full.
 */
bool
queue_shared_counters_reserve(Oid catalog, int32 queue_id)
{
	static const QueueCounts zero = {0};
	SharedCountersKey key = key_of(catalog, queue_id);
	bool		made;

	LWLockAcquire(shared.lock, LW_EXCLUSIVE);
	made = add_to_entry(&key, &zero);
	LWLockRelease(shared.lock);
	return made;
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
		queue_counts_add(&entry->unwritten, counts);
	LWLockRelease(shared.lock);

	if (entry == NULL)
		ereport(WARNING,
				(errmsg("queue: the counters of queue %d lost the counts of a transaction",
						queue_id)));
}

static void
counters_lock_tag(LOCKTAG *tag)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, 0, 0, COUNTERS_LOCK_SPACE);
}

/*
 * Before a reader sums the table's counters: waits for a sweep that took
 * counts out of shared memory to end.  queue_shared_counters_read_end()
 * after the last queue_shared_counters_read().
 */
void
queue_shared_counters_read_begin(void)
{
	LOCKTAG		tag;

	if (shared.entries == NULL)
		return;
	counters_lock_tag(&tag);
	(void) LockAcquire(&tag, ShareLock, false, false);
}

void
queue_shared_counters_read_end(void)
{
	LOCKTAG		tag;

	if (shared.entries == NULL)
		return;
	counters_lock_tag(&tag);
	(void) LockRelease(&tag, ShareLock, false);
}

/*
 * The counts of queue_id in shared memory, not in the table yet: zeros if
 * it has no entry.
 */
void
queue_shared_counters_read(int32 queue_id, QueueCounts *counts)
{
	SharedCountersKey key;
	SharedCountersEntry *entry;

	memset(counts, 0, sizeof(*counts));
	if (shared.entries == NULL)
		return;
	key = key_of(queue_catalog_relid(), queue_id);
	LWLockAcquire(shared.lock, LW_SHARED);
	entry = hash_search(shared.entries, &key, HASH_FIND, NULL);
	if (entry != NULL)
		*counts = entry->unwritten;
	LWLockRelease(shared.lock);
}

/* Gives the counts taken at this level or deeper back to their entries. */
static void
give_back(int level)
{
	ListCell   *cell;

	if (taken == NIL)
		return;
	LWLockAcquire(shared.lock, LW_EXCLUSIVE);
	foreach(cell, taken)
	{
		CountersChange *take = lfirst(cell);

		if (take->level < level)
			continue;
		(void) add_to_entry(&take->key, &take->counts);
		taken = foreach_delete_current(taken, cell);
	}
	LWLockRelease(shared.lock);
}

static void
shared_counters_xact_callback(XactEvent event, void *arg)
{
	ListCell   *cell;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
			if (dropped != NIL)
			{
				LWLockAcquire(shared.lock, LW_EXCLUSIVE);
				foreach(cell, dropped)
					(void) hash_search(shared.entries,
									   &((CountersChange *) lfirst(cell))->key,
									   HASH_REMOVE, NULL);
				LWLockRelease(shared.lock);
			}
			break;
		case XACT_EVENT_ABORT:
			give_back(0);
			break;
		default:
			break;
	}
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
	{
		/* Both lists live in TopTransactionContext, gone with it. */
		dropped = NIL;
		taken = NIL;
	}
}

/* The changes made at level or deeper now belong to the level above. */
static void
hand_to_parent(List *changes, int level)
{
	ListCell   *cell;

	foreach(cell, changes)
	{
		CountersChange *change = lfirst(cell);

		if (change->level >= level)
			change->level = level - 1;
	}
}

/*
 * A drop rolled back to a savepoint removes nothing, and counts taken
 * there go back; a subtransaction that commits hands both to its parent.
 */
static void
shared_counters_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *cell;

	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		give_back(level);
		foreach(cell, dropped)
			if (((CountersChange *) lfirst(cell))->level >= level)
				dropped = foreach_delete_current(dropped, cell);
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		hand_to_parent(dropped, level);
		hand_to_parent(taken, level);
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

/* A change to remember until the transaction ends, in its context. */
static CountersChange *
new_change(const SharedCountersKey *key)
{
	CountersChange *change;

	register_callbacks();
	change = MemoryContextAllocZero(TopTransactionContext, sizeof(CountersChange));
	change->key = *key;
	change->level = GetCurrentTransactionNestLevel();
	return change;
}

/* queue_drop: the queue's entry goes when the drop commits. */
void
queue_shared_counters_forget(int32 queue_id)
{
	SharedCountersKey key;
	MemoryContext old;

	if (shared.entries == NULL)
		return;
	key = key_of(queue_catalog_relid(), queue_id);
	old = MemoryContextSwitchTo(TopTransactionContext);
	dropped = lappend(dropped, new_change(&key));
	MemoryContextSwitchTo(old);
}

/*
 * Takes what key's entry holds, to write it; remembered, to be given back
 * if this (sub)transaction rolls back.  Returns NULL if there is nothing.
 */
static CountersChange *
take_unwritten(const SharedCountersKey *key)
{
	CountersChange *take = new_change(key);
	SharedCountersEntry *entry;
	MemoryContext old;

	LWLockAcquire(shared.lock, LW_EXCLUSIVE);
	entry = hash_search(shared.entries, key, HASH_FIND, NULL);
	if (entry != NULL)
	{
		take->counts = entry->unwritten;
		memset(&entry->unwritten, 0, sizeof(entry->unwritten));
	}
	LWLockRelease(shared.lock);
	if (queue_counts_zero(&take->counts))
	{
		pfree(take);
		return NULL;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	taken = lappend(taken, take);
	MemoryContextSwitchTo(old);
	return take;
}

/*
 * The sweep: adds what shared memory counted for this database's queues to
 * their rows of the shared shard.  A queue being dropped (its lock taken)
 * waits for the next sweep.  Returns how many rows it wrote.  Inside a
 * StorageSession; never in a prepared transaction (counters/transaction.c).
 */
int
queue_shared_counters_write(void)
{
	Oid			catalog;
	HASH_SEQ_STATUS scan;
	SharedCountersEntry *entry;
	SharedCountersKey *keys;
	int			count = 0;
	int			rows = 0;
	int			i;

	if (shared.entries == NULL)
		return 0;
	catalog = queue_catalog_relid();

	LWLockAcquire(shared.lock, LW_SHARED);
	keys = palloc(sizeof(SharedCountersKey) * (hash_get_num_entries(shared.entries) + 1));
	hash_seq_init(&scan, shared.entries);
	while ((entry = hash_seq_search(&scan)) != NULL)
	{
		if (entry->key.database == MyDatabaseId && entry->key.catalog == catalog &&
			!queue_counts_zero(&entry->unwritten))
			keys[count++] = entry->key;
	}
	LWLockRelease(shared.lock);

	if (count > 0)
	{
		LOCKTAG		tag;

		/* held until the transaction ends: see COUNTERS_LOCK_SPACE */
		counters_lock_tag(&tag);
		(void) LockAcquire(&tag, RowExclusiveLock, false, false);
	}
	for (i = 0; i < count; i++)
	{
		CountersChange *take;
		PlanArgs	args;

		if (!queue_try_lock(keys[i].queue_id, AccessShareLock))
			continue;
		take = take_unwritten(&keys[i]);
		if (take == NULL)
			continue;
		queue_counts_args(&args, PLAN_COUNTERS_ADD_SHARED, keys[i].queue_id,
						  QUEUE_SHARED_SHARD, &take->counts);
		if (queue_plan_run(&args) > 0)
			rows++;
	}
	return rows;
}
