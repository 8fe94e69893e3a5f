/*-------------------------------------------------------------------------
 *
 * subscriptions.c
 *		Finding a topic by name, with its subscriptions and their filters
 *		compiled: the per-backend cache and the topic locks.
 *
 * A topic is read from queue_storage.topics and .subscriptions once and
 * kept, filters compiled, until the catalog of queues changes: whoever
 * creates or drops a topic, subscribes or unsubscribes, or drops a queue
 * calls queue_catalog_changed(), whose invalidation empties this cache too.
 * The TopicInfo queue_topic_open returns stays valid until the next call
 * of queue_topic_open: an invalidation only marks the cache, and the next
 * lookup empties it.
 *
 * A topic's id comes from the queues' sequence, so a topic is locked as a
 * queue is (catalog.c), on the object (queues table, topic_id):
 * queue_publish and queue_subscribe take AccessShareLock, queue_topic_drop
 * AccessExclusiveLock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"

static HTAB *topic_cache = NULL;
/* what the entries point to: their subscriptions and filters */
static MemoryContext topic_cache_context = NULL;
static bool topic_cache_valid = false;
static Oid	topic_cache_relid = InvalidOid;
static bool callback_registered = false;

static void
topic_cache_invalidate(Datum arg, Oid relid)
{
	if (relid == InvalidOid || relid == topic_cache_relid)
		topic_cache_valid = false;
}

/* An empty cache, when the one there was is no longer valid. */
static void
reset_cache(void)
{
	HASHCTL		ctl;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(topic_cache_invalidate, (Datum) 0);
		callback_registered = true;
	}
	if (topic_cache_context == NULL)
		topic_cache_context = AllocSetContextCreate(CacheMemoryContext, "queue topics",
													ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(topic_cache_context);
	ctl.keysize = sizeof(((TopicInfo *) NULL)->name);
	ctl.entrysize = sizeof(TopicInfo);
	ctl.hcxt = topic_cache_context;
	topic_cache = hash_create("queue topics cache", 16, &ctl,
							  HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	topic_cache_valid = true;
	topic_cache_relid = queue_catalog_relid();
}

/*
 * Reads the topic name and its subscriptions into entry, filters compiled
 * in the cache's memory; false if there is no such topic.
 */
static bool
read_topic(const char *name, TopicInfo *entry)
{
	PlanArgs	args;
	uint64		rows;
	uint64		i;
	bool		isnull;
	MemoryContext old;

	queue_plan_begin(&args, PLAN_TOPIC_LOOKUP);
	queue_plan_set(&args, "name", CStringGetTextDatum(name));
	rows = queue_plan_run_latest(&args);
	if (rows == 0)
		return false;

	memset(entry, 0, sizeof(*entry));
	strlcpy(entry->name, name, sizeof(entry->name));
	entry->topic_id = DatumGetInt32(queue_row_value(SPI_tuptable, 0, "topic_id", &isnull));
	old = MemoryContextSwitchTo(topic_cache_context);
	entry->subscriptions = palloc0(sizeof(TopicSubscription) * rows);
	for (i = 0; i < rows; i++)
	{
		TopicSubscription *subscription = &entry->subscriptions[entry->subscription_count];
		Datum		queue_id = queue_row_value(SPI_tuptable, i, "queue_id", &isnull);
		Datum		filter;

		if (isnull)				/* a topic without subscriptions */
			continue;
		subscription->queue_id = DatumGetInt32(queue_id);
		strlcpy(subscription->queue,
				TextDatumGetCString(queue_row_value(SPI_tuptable, i, "queue", &isnull)),
				sizeof(subscription->queue));
		filter = queue_row_value(SPI_tuptable, i, "filter", &isnull);
		if (!isnull)
			subscription->filter = queue_filter_compile(DatumGetJsonbP(filter), name,
														subscription->queue);
		entry->subscription_count++;
	}
	MemoryContextSwitchTo(old);
	return true;
}

/* The cache's entry of topic name, read if need be; NULL if none. */
static const TopicInfo *
find_topic(const char *name)
{
	TopicInfo  *entry;
	TopicInfo	read;
	bool		found;

	if (!topic_cache_valid || topic_cache == NULL)
		reset_cache();
	entry = hash_search(topic_cache, name, HASH_FIND, NULL);
	if (entry != NULL)
		return entry;
	if (!read_topic(name, &read))
		return NULL;
	/* the reading may have taken an invalidation: then keep it out of the cache */
	if (!topic_cache_valid)
	{
		entry = MemoryContextAlloc(topic_cache_context, sizeof(TopicInfo));
		*entry = read;
		return entry;
	}
	entry = hash_search(topic_cache, read.name, HASH_ENTER, &found);
	*entry = read;
	return entry;
}

/* Raises 55000 on the storage of a version before topics. */
void
queue_require_topic_storage(void)
{
	queue_require_storage(queue_storage_has_topics(), "topics", "1.10");
}

/*
 * Looks a topic up and locks it for the rest of the transaction.  Raises
 * 42704 if it does not exist (or returns NULL if missing_ok), 42501 if the
 * caller holds none of the permissions (QUEUE_PERM_* bits; 0: no check).
 * If it was dropped (and perhaps created again) while the lock was waited
 * for, looks again.
 */
const TopicInfo *
queue_topic_open(const char *name, LOCKMODE lockmode, int permissions,
				 bool missing_ok)
{
	queue_require_topic_storage();
	for (;;)
	{
		const TopicInfo *topic = find_topic(name);
		int32		topic_id;

		if (topic == NULL && missing_ok)
			return NULL;
		if (topic == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("topic \"%s\" does not exist", name),
					 errhint("Create it with queue_topic_create().")));
		topic_id = topic->topic_id;

		LockDatabaseObject(queue_catalog_relid(), (Oid) topic_id, 0, lockmode);
		AcceptInvalidationMessages();

		topic = find_topic(name);
		if (topic != NULL && topic->topic_id == topic_id)
		{
			queue_require_topic_permission(topic_id, name, permissions);
			return topic;
		}
		UnlockDatabaseObject(queue_catalog_relid(), (Oid) topic_id, 0, lockmode);
	}
}
