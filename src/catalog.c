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
#include "queue.h"

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

#define QUEUE_STORAGE_SCHEMA	"queue_storage"
#define QUEUE_CATALOG_TABLE		"queues"

/* The cache, keyed by name; rebuilt lazily after an invalidation. */
static HTAB *queue_cache = NULL;
static bool queue_cache_valid = false;

/* The queues table and its owner; InvalidOid until looked up. */
static Oid	catalog_relid = InvalidOid;
static Oid	catalog_owner = InvalidOid;

/*
 * Relcache callback: anything that touches the queues table (a queue
 * created, altered or dropped; the extension dropped) invalidates it all.
 * It may run in the middle of one of our calls, so it only sets flags; no
 * caller ever holds a pointer into the cache.
 */
static void
queue_cache_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == catalog_relid)
	{
		queue_cache_valid = false;
		catalog_relid = InvalidOid;
		catalog_owner = InvalidOid;
	}
}

void
queue_catalog_init(void)
{
	CacheRegisterRelcacheCallback(queue_cache_invalidate, (Datum) 0);
}

/* The OID of the table queue_storage.<table>, or InvalidOid if none. */
Oid
queue_storage_relid(const char *table)
{
	Oid			nsp = get_namespace_oid(QUEUE_STORAGE_SCHEMA, true);

	return OidIsValid(nsp) ? get_relname_relid(table, nsp) : InvalidOid;
}

/*
 * The OID of queue_storage.queues, which also names the lock space of
 * queues.
 */
Oid
queue_catalog_relid(void)
{
	if (!OidIsValid(catalog_relid))
	{
		Oid			relid = queue_storage_relid(QUEUE_CATALOG_TABLE);

		if (!OidIsValid(relid))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("extension \"queue\" is not installed in this database"),
					 errhint("Run CREATE EXTENSION queue.")));
		catalog_relid = relid;
	}
	return catalog_relid;
}

/* The role the API runs as when it touches storage. */
Oid
queue_storage_owner(void)
{
	if (!OidIsValid(catalog_owner))
	{
		Oid			relid = queue_catalog_relid();
		HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (!HeapTupleIsValid(tuple))
			elog(ERROR, "queue: cache lookup failed for relation %u", relid);
		catalog_owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
		ReleaseSysCache(tuple);
	}
	return catalog_owner;
}

/* Fills info from a row with the columns QUEUE_COLUMNS of plans.c. */
QueueInfo *
queue_info_from_tuple(HeapTuple tuple, TupleDesc tupdesc, QueueInfo *info)
{
	Datum		value;
	bool		isnull;

	memset(info, 0, sizeof(*info));
	info->queue_id = DatumGetInt32(SPI_getbinval(tuple, tupdesc, 1, &isnull));
	strlcpy(info->name, TextDatumGetCString(SPI_getbinval(tuple, tupdesc, 2, &isnull)),
			sizeof(info->name));
	info->visibility_timeout =
		queue_interval_usecs(DatumGetIntervalP(SPI_getbinval(tuple, tupdesc, 3, &isnull)),
							 "visibility_timeout", info->name);
	value = SPI_getbinval(tuple, tupdesc, 4, &isnull);
	info->message_ttl = isnull ? -1 :
		queue_interval_usecs(DatumGetIntervalP(value), "message_ttl", info->name);
	value = SPI_getbinval(tuple, tupdesc, 5, &isnull);
	info->max_dequeue_count = isnull ? 0 : DatumGetInt32(value);
	info->max_message_size = DatumGetInt32(SPI_getbinval(tuple, tupdesc, 6, &isnull));
	value = SPI_getbinval(tuple, tupdesc, 7, &isnull);
	info->poison_queue_id = isnull ? 0 : DatumGetInt32(value);
	info->is_poison = DatumGetBool(SPI_getbinval(tuple, tupdesc, 8, &isnull));
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
	Datum		arg;

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
	}

	entry = hash_search(queue_cache, name, HASH_FIND, NULL);
	if (entry != NULL)
	{
		*info = *entry;
		return true;
	}

	arg = CStringGetTextDatum(name);
	if (queue_plan_run(PLAN_QUEUE_LOOKUP, &arg, NULL) == 0)
		return false;
	queue_info_from_tuple(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, info);

	/* The lookup may have processed an invalidation: cache only if valid. */
	if (queue_cache_valid)
	{
		entry = hash_search(queue_cache, info->name, HASH_ENTER, &found);
		*entry = *info;
	}
	return true;
}

/*
 * Looks a queue up and locks it for the rest of the transaction.  Raises
 * 42704 if it does not exist, 42501 if the caller holds none of the
 * permissions (QUEUE_PERM_* bits; 0: no check).  If the queue was dropped
 * (and perhaps created again) while we waited for the lock, looks again.
 */
void
queue_open(const char *name, LOCKMODE lockmode, int permissions,
		   QueueInfo *info)
{
	for (;;)
	{
		QueueInfo	again;

		if (!queue_find(name, info))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("queue \"%s\" does not exist", name),
					 errhint("Create it with queue_create().")));

		LockDatabaseObject(queue_catalog_relid(), (Oid) info->queue_id, 0,
						   lockmode);
		AcceptInvalidationMessages();

		if (queue_find(name, &again) && again.queue_id == info->queue_id)
		{
			*info = again;
			queue_require_permission(info->queue_id, info->name, permissions);
			return;
		}
		UnlockDatabaseObject(queue_catalog_relid(), (Oid) info->queue_id, 0,
							 lockmode);
	}
}

/* Locks a queue if nobody holds a conflicting lock; never waits. */
bool
queue_try_lock(int32 queue_id, LOCKMODE lockmode)
{
	return ConditionalLockDatabaseObject(queue_catalog_relid(),
										 (Oid) queue_id, 0, lockmode);
}

/* Tells every backend, at commit, to forget what it knows of queues. */
void
queue_catalog_changed(void)
{
	CacheInvalidateRelcacheByRelid(queue_catalog_relid());
}
