/*-------------------------------------------------------------------------
 *
 * registry.c
 *		Which database has a running worker: a table in shared memory.
 *
 * One slot per possible background worker holds (database, pid) while a
 * worker runs.  A worker claims its database's slot when it starts and
 * frees it when it exits, so there is never more than one worker per
 * database, even when the launcher restarts and no longer knows what it
 * started.  After a crash, shared memory starts empty along with every
 * process.  A database can also be paused for a while: the launcher starts
 * no worker for it (utility.c pauses a database that DROP DATABASE and its
 * kin need without connections).  And it notes when queue_metrics was last
 * read in a database, so that censuses are taken there (worker/census.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "worker/worker.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#define QUEUE_MAX_PAUSED	16
#define QUEUE_MAX_WATCHED	64

typedef struct WorkerSlot
{
	Oid			dboid;
	pid_t		pid;
} WorkerSlot;

typedef struct PausedDatabase
{
	Oid			dboid;
	TimestampTz until;
} PausedDatabase;

/* A database where queue_metrics was read, and when last. */
typedef struct WatchedDatabase
{
	Oid			dboid;
	TimestampTz read_at;
} WatchedDatabase;

typedef struct QueueRegistry
{
	LWLock	   *lock;
	int			nslots;
	PausedDatabase paused[QUEUE_MAX_PAUSED];
	WatchedDatabase watched[QUEUE_MAX_WATCHED];
	WorkerSlot	slots[FLEXIBLE_ARRAY_MEMBER];
} QueueRegistry;

static QueueRegistry *registry = NULL;

/* The size of the registry in shared memory (shmem.c asks for it). */
Size
queue_registry_size(void)
{
	return add_size(offsetof(QueueRegistry, slots),
					mul_size(max_worker_processes, sizeof(WorkerSlot)));
}

/* Attaches to the registry, setting it up if this is the first time. */
void
queue_registry_attach(LWLock *lock)
{
	bool		found;

	registry = ShmemInitStruct("queue worker registry", queue_registry_size(), &found);
	if (!found)
	{
		memset(registry, 0, queue_registry_size());
		registry->lock = lock;
		registry->nslots = max_worker_processes;
	}
}

/* Frees the slot of the exiting worker. */
static void
registry_release(int code, Datum arg)
{
	int			i;

	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	for (i = 0; i < registry->nslots; i++)
		if (registry->slots[i].pid == MyProcPid)
			registry->slots[i].pid = 0;
	LWLockRelease(registry->lock);
}

/* Under the lock: is dboid paused now? */
static bool
is_paused(Oid dboid)
{
	TimestampTz now = GetCurrentTimestamp();
	int			i;

	for (i = 0; i < QUEUE_MAX_PAUSED; i++)
		if (registry->paused[i].dboid == dboid && registry->paused[i].until > now)
			return true;
	return false;
}

/*
 * A worker starting in database dboid takes its slot.  Returns false if
 * another worker already serves the database, or the database is paused:
 * then the caller exits.
 */
bool
queue_registry_claim(Oid dboid)
{
	int			i;
	int			free_slot = -1;

	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	if (is_paused(dboid))
	{
		LWLockRelease(registry->lock);
		return false;
	}
	for (i = 0; i < registry->nslots; i++)
	{
		if (registry->slots[i].pid != 0 && registry->slots[i].dboid == dboid)
		{
			LWLockRelease(registry->lock);
			return false;
		}
		if (registry->slots[i].pid == 0 && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0)
	{
		LWLockRelease(registry->lock);
		return false;
	}
	registry->slots[free_slot].dboid = dboid;
	registry->slots[free_slot].pid = MyProcPid;
	LWLockRelease(registry->lock);

	before_shmem_exit(registry_release, (Datum) 0);
	return true;
}

/* The pid of the worker serving dboid, or 0. */
pid_t
queue_registry_worker(Oid dboid)
{
	pid_t		pid = 0;
	int			i;

	if (registry == NULL)
		return 0;
	LWLockAcquire(registry->lock, LW_SHARED);
	for (i = 0; i < registry->nslots; i++)
		if (registry->slots[i].pid != 0 && registry->slots[i].dboid == dboid)
			pid = registry->slots[i].pid;
	LWLockRelease(registry->lock);
	return pid;
}

/* Should the launcher leave dboid alone for now? */
bool
queue_registry_paused(Oid dboid)
{
	bool		paused;

	if (registry == NULL)
		return false;
	LWLockAcquire(registry->lock, LW_SHARED);
	paused = is_paused(dboid);
	LWLockRelease(registry->lock);
	return paused;
}

/* No worker for dboid until the given time. */
void
queue_registry_pause(Oid dboid, TimestampTz until)
{
	TimestampTz now = GetCurrentTimestamp();
	int			slot = -1;
	int			i;

	if (registry == NULL)
		return;
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	for (i = 0; i < QUEUE_MAX_PAUSED; i++)
	{
		if (registry->paused[i].dboid == dboid)
		{
			slot = i;
			break;
		}
		if (slot < 0 && registry->paused[i].until <= now)
			slot = i;
	}
	if (slot >= 0)
	{
		registry->paused[slot].dboid = dboid;
		registry->paused[slot].until = until;
	}
	LWLockRelease(registry->lock);
}

/*
 * queue_metrics was read in dboid.  With more databases watched than
 * places, the one read longest ago is forgotten.
 */
void
queue_registry_note_metrics_read(Oid dboid)
{
	TimestampTz now = GetCurrentTimestamp();
	int			slot = 0;
	int			i;

	if (registry == NULL)
		return;
	LWLockAcquire(registry->lock, LW_EXCLUSIVE);
	for (i = 0; i < QUEUE_MAX_WATCHED; i++)
	{
		if (registry->watched[i].dboid == dboid)
		{
			slot = i;
			break;
		}
		if (registry->watched[i].read_at < registry->watched[slot].read_at)
			slot = i;
	}
	registry->watched[slot].dboid = dboid;
	registry->watched[slot].read_at = now;
	LWLockRelease(registry->lock);
}

/*
 * When queue_metrics was last read in dboid, or 0.  *tracked is false where
 * the library was not preloaded: no shared memory keeps the time.
 */
TimestampTz
queue_registry_metrics_read_at(Oid dboid, bool *tracked)
{
	TimestampTz read_at = 0;
	int			i;

	*tracked = registry != NULL;
	if (registry == NULL)
		return 0;
	LWLockAcquire(registry->lock, LW_SHARED);
	for (i = 0; i < QUEUE_MAX_WATCHED; i++)
		if (registry->watched[i].dboid == dboid)
			read_at = registry->watched[i].read_at;
	LWLockRelease(registry->lock);
	return read_at;
}
