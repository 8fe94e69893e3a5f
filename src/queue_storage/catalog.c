/*-------------------------------------------------------------------------
 *
 * catalog.c
 *		Finding queues by name: the per-backend cache and the queue locks.
 *
 * Queue settings are read from queue_storage.queues once and kept in a
 * backend-local hash.  Whoever creates, alters or drops a queue calls
 * queue_catalog_changed(), which queues a relcache invalidation of the
 * queues table; at commit every backend receives it and empties its cache
 * (and at abort the local backend does).
 *
 * Every operation on a queue holds a lock on it until its transaction ends,
 * taken as a lock on the object (queues table, queue_id): operations on
 * messages take AccessShareLock, queue_drop AccessExclusiveLock.  So a drop
 * waits for the transactions using the queue, and nobody adds a message to
 * a queue whose drop has committed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

/* The cache, keyed by name; rebuilt lazily after an invalidation. */
static HTAB *queue_cache = NULL;
static bool queue_cache_valid = false;
/* The queues table the cache was filled from. */
static Oid	cache_relid = InvalidOid;

/*
 * Relcache callback: anything that touches the queues table (a queue
 * created, altered or dropped; the extension dropped) invalidates it all.
 * It may run in the middle of one of our calls, so it only sets flags; no
 * caller ever holds a pointer into the cache.
 */
static void
queue_cache_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == cache_relid)
		queue_cache_valid = false;
}

void
queue_catalog_init(void)
{
	CacheRegisterRelcacheCallback(queue_cache_invalidate, (Datum) 0);
}

/* Fills info from row number row of rows, a statement's QUEUE_COLUMNS. */
QueueInfo *
queue_info_from_row(SPITupleTable *rows, uint64 row, QueueInfo *info)
{
	Datum		value;
	bool		isnull;

	memset(info, 0, sizeof(*info));
	info->queue_id = DatumGetInt32(queue_row_value(rows, row, "queue_id", &isnull));
	strlcpy(info->name,
			TextDatumGetCString(queue_row_value(rows, row, "name", &isnull)),
			sizeof(info->name));
	value = queue_row_value(rows, row, "visibility_timeout", &isnull);
	info->visibility_timeout =
		queue_interval_usecs(DatumGetIntervalP(value), "visibility_timeout", info->name);
	value = queue_row_value(rows, row, "message_ttl", &isnull);
	info->message_ttl = isnull ? -1 :
		queue_interval_usecs(DatumGetIntervalP(value), "message_ttl", info->name);
	value = queue_row_value(rows, row, "max_dequeue_count", &isnull);
	info->max_dequeue_count = isnull ? 0 : DatumGetInt32(value);
	info->max_message_size =
		DatumGetInt32(queue_row_value(rows, row, "max_message_size", &isnull));
	value = queue_row_value(rows, row, "poison_queue_id", &isnull);
	info->poison_queue_id = isnull ? 0 : DatumGetInt32(value);
	info->is_poison = DatumGetBool(queue_row_value(rows, row, "is_poison", &isnull));
	if (SPI_fnumber(rows->tupdesc, "deduplication_window") > 0)
		info->deduplication_window =
			queue_interval_usecs(DatumGetIntervalP(queue_row_value(rows, row,
																   "deduplication_window",
																   &isnull)),
								 "deduplication_window", info->name);
	if (SPI_fnumber(rows->tupdesc, "delay") > 0)
		info->delay =
			queue_interval_usecs(DatumGetIntervalP(queue_row_value(rows, row, "delay",
																   &isnull)),
								 "delay", info->name);
	info->retry_delay_max = -1;
	if (SPI_fnumber(rows->tupdesc, "paused") > 0)
	{
		info->retry_delay =
			queue_interval_usecs(DatumGetIntervalP(queue_row_value(rows, row, "retry_delay",
																   &isnull)),
								 "retry_delay", info->name);
		info->retry_backoff = DatumGetBool(queue_row_value(rows, row, "retry_backoff",
														   &isnull));
		value = queue_row_value(rows, row, "retry_delay_max", &isnull);
		if (!isnull)
			info->retry_delay_max = queue_interval_usecs(DatumGetIntervalP(value),
														 "retry_delay_max", info->name);
		info->paused = DatumGetBool(queue_row_value(rows, row, "paused", &isnull));
	}
	if (SPI_fnumber(rows->tupdesc, "retention") > 0)
	{
		value = queue_row_value(rows, row, "retention", &isnull);
		if (!isnull)
			info->retention = queue_interval_usecs(DatumGetIntervalP(value),
												   "retention", info->name);
	}
	return info;
}

/*
 * Looks a queue up by name, from the cache or else from the table, and
 * copies its settings into *info.  Returns false if there is no such
 * queue.  Must be called inside a StorageSession.
 */
bool
queue_find(const char *name, QueueInfo *info)
{
	QueueInfo  *entry;
	bool		found;
	PlanArgs	args;

	if (!queue_cache_valid || queue_cache == NULL)
	{
		HASHCTL		ctl;

		if (queue_cache != NULL)
			hash_destroy(queue_cache);
		ctl.keysize = sizeof(((QueueInfo *) NULL)->name);
		ctl.entrysize = sizeof(QueueInfo);
		ctl.hcxt = CacheMemoryContext;
		queue_cache = hash_create("queue settings cache", 64, &ctl,
								  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		queue_cache_valid = true;
		cache_relid = queue_catalog_relid();
	}

	entry = hash_search(queue_cache, name, HASH_FIND, NULL);
	if (entry != NULL)
	{
		*info = *entry;
		return true;
	}

	/*
	 * Read with the latest snapshot: the cache outlives the transaction,
	 * whose own snapshot (REPEATABLE READ) may be older than a change whose
	 * invalidation it has already accepted, a pause among them.
	 */
	queue_plan_begin(&args, queue_storage_has_retention() ? PLAN_QUEUE_LOOKUP_RETENTION :
					 queue_storage_has_retries() ? PLAN_QUEUE_LOOKUP_RETRIES :
					 queue_storage_has_attributes() ? PLAN_QUEUE_LOOKUP_ATTRIBUTES :
					 queue_storage_has_ordering() ? PLAN_QUEUE_LOOKUP_ORDERING :
					 PLAN_QUEUE_LOOKUP);
	queue_plan_set(&args, "name", CStringGetTextDatum(name));
	if (queue_plan_run_latest(&args) == 0)
		return false;
	queue_info_from_row(SPI_tuptable, 0, info);

	/* The lookup may have processed an invalidation: cache only if valid. */
	if (queue_cache_valid)
	{
		entry = hash_search(queue_cache, info->name, HASH_ENTER, &found);
		*entry = *info;
	}
	return true;
}

/*
 * Looks a queue up and locks it for the rest of the transaction; false if
 * it does not exist.  Raises 42501 if the caller holds none of the
 * permissions (QUEUE_PERM_* bits; 0: no check).  If the queue was dropped
 * (and perhaps created again) while we waited for the lock, looks again.
 */
bool
queue_open_if_exists(const char *name, LOCKMODE lockmode, int permissions,
					 QueueInfo *info)
{
	for (;;)
	{
		QueueInfo	again;

		if (!queue_find(name, info))
			return false;

		LockDatabaseObject(queue_catalog_relid(), (Oid) info->queue_id, 0,
						   lockmode);
		AcceptInvalidationMessages();

		if (queue_find(name, &again) && again.queue_id == info->queue_id)
		{
			*info = again;
			queue_require_permission(info->queue_id, info->name, permissions);
			return true;
		}
		UnlockDatabaseObject(queue_catalog_relid(), (Oid) info->queue_id, 0,
							 lockmode);
	}
}

/* The same, raising 42704 if the queue does not exist. */
void
queue_open(const char *name, LOCKMODE lockmode, int permissions,
		   QueueInfo *info)
{
	if (!queue_open_if_exists(name, lockmode, permissions, info))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("queue \"%s\" does not exist", name),
				 errhint("Create it with queue_create().")));
}

/* Locks a queue if nobody holds a conflicting lock; never waits. */
bool
queue_try_lock(int32 queue_id, LOCKMODE lockmode)
{
	return ConditionalLockDatabaseObject(queue_catalog_relid(),
										 (Oid) queue_id, 0, lockmode);
}

/*
 * Is the queue, paused by what this backend knows of it, paused still, by
 * what committed until now?  A resume wakes the queue's waiting getters as
 * it commits, before every backend has heard that its settings changed.
 */
bool
queue_still_paused(int32 queue_id)
{
	PlanArgs	args;
	bool		isnull;

	queue_plan_begin(&args, PLAN_QUEUE_PAUSED);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	if (queue_plan_run_latest(&args) == 0)
		return false;
	return DatumGetBool(queue_row_value(SPI_tuptable, 0, "paused", &isnull));
}

/*
 * Queues and topics share one namespace.  Whoever creates either locks the
 * topics table, then looks for the other kind under the name: a queue's
 * creator in ShareLock, which its kind shares, a topic's creator in
 * ShareRowExclusiveLock, which conflicts with both.  So a queue and a
 * topic of one name created at once take turns, and the second sees the
 * first; creating many queues in one transaction takes one lock.
 */
void
queue_lock_namespace(bool for_topic)
{
	LockRelationOid(queue_storage_relid("topics"),
					for_topic ? ShareRowExclusiveLock : ShareLock);
	AcceptInvalidationMessages();
}

/*
 * Tells every backend, at commit, to forget what it knows of queues and
 * topics (topics/subscriptions.c listens to the same invalidation).
 */
void
queue_catalog_changed(void)
{
	CacheInvalidateRelcacheByRelid(queue_catalog_relid());
}
