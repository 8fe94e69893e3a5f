/*-------------------------------------------------------------------------
 *
 * schema.c
 *		Where queue_storage lives: its tables and their owner.
 *
 * The OIDs are looked up once and forgotten when anything touches the
 * queues table (a queue created, altered or dropped; the extension dropped
 * or created again).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#define QUEUE_STORAGE_SCHEMA	"queue_storage"
#define QUEUE_CATALOG_TABLE		"queues"

/* The queues table and its owner; InvalidOid until looked up. */
static Oid	catalog_relid = InvalidOid;
static Oid	catalog_owner = InvalidOid;
/* Whether the storage has the columns of 1.3, 1.6, 1.8, 1.9: -1 until looked up. */
static int	ordering_storage = -1;
static int	attributes_storage = -1;
static int	retries_storage = -1;
static int	retention_storage = -1;
/* Whether it has the tables of topics and schedules (1.10): -1 until looked up. */
static int	topics_storage = -1;
static int	schedules_storage = -1;

static void
forget_oids(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == catalog_relid)
	{
		catalog_relid = InvalidOid;
		catalog_owner = InvalidOid;
		ordering_storage = -1;
		attributes_storage = -1;
		retries_storage = -1;
		retention_storage = -1;
		topics_storage = -1;
		schedules_storage = -1;
	}
}

void
queue_schema_init(void)
{
	CacheRegisterRelcacheCallback(forget_oids, (Datum) 0);
}

/* The OID of the table queue_storage.<table>, or InvalidOid if none. */
Oid
queue_storage_relid(const char *table)
{
	Oid			nsp = get_namespace_oid(QUEUE_STORAGE_SCHEMA, true);

	return OidIsValid(nsp) ? get_relname_relid(table, nsp) : InvalidOid;
}

/*
 * The same, locked in lockmode as PostgreSQL locks a table a statement
 * names: the name is looked up again once the lock is held, so that a
 * table made anew while the lock was waited for (the update to 1.7 makes
 * the messages table anew) is the one found and locked.
 */
Oid
queue_storage_lock_relid(const char *table, LOCKMODE lockmode)
{
	return RangeVarGetRelidExtended(makeRangeVar(QUEUE_STORAGE_SCHEMA, (char *) table, -1),
									lockmode, RVR_MISSING_OK, NULL, NULL);
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

/*
 * Whether the queues table has column, looked up once into *known (-1:
 * not yet) until the table's OIDs are forgotten.
 */
static bool
catalog_has_column(int *known, const char *column)
{
	if (*known < 0)
		*known = get_attnum(queue_catalog_relid(), column) != InvalidAttrNumber;
	return *known > 0;
}

/*
 * Does the storage have what version 1.3 added (groups, deduplication,
 * priorities)?  The library of 1.3 also runs on the storage of 1.2, until
 * ALTER EXTENSION UPDATE; the arguments of 1.3 cannot reach it before.
 */
bool
queue_storage_has_ordering(void)
{
	return catalog_has_column(&ordering_storage, "deduplication_window");
}

/*
 * Does the storage have what version 1.6 added to a queue (delay,
 * attributes, tags)?  As above, the library runs on older storage until
 * ALTER EXTENSION UPDATE.
 */
bool
queue_storage_has_attributes(void)
{
	return catalog_has_column(&attributes_storage, "attributes");
}

/*
 * Does the storage have what version 1.8 added to a queue (the retry
 * policy, the pause)?  As above.
 */
bool
queue_storage_has_retries(void)
{
	return catalog_has_column(&retries_storage, "paused");
}

/*
 * Does the storage have what version 1.9 added (a queue's retention, the
 * table of retained messages)?  As above.
 */
bool
queue_storage_has_retention(void)
{
	return catalog_has_column(&retention_storage, "retention");
}

/*
 * Does the storage have what version 1.10 added (topics and their
 * subscriptions)?  As above.
 */
bool
queue_storage_has_topics(void)
{
	if (topics_storage < 0)
		topics_storage = OidIsValid(queue_storage_relid("topics"));
	return topics_storage > 0;
}

/* The same for schedules (1.10). */
bool
queue_storage_has_schedules(void)
{
	if (schedules_storage < 0)
		schedules_storage = OidIsValid(queue_storage_relid("schedules"));
	return schedules_storage > 0;
}

/*
 * Raises 55000 unless present: what (a feature, plural) needs the storage
 * of version, which ALTER EXTENSION UPDATE brings.
 */
void
queue_require_storage(bool present, const char *what, const char *version)
{
	if (!present)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s need version %s of extension \"queue\"", what, version),
				 errhint("Run ALTER EXTENSION queue UPDATE.")));
}
