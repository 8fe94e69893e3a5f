/*-------------------------------------------------------------------------
 *
 * topic_drop.c
 *		queue_topic_drop.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

PG_FUNCTION_INFO_V1(queue_topic_drop);

/*
 * queue_topic_drop(topic): the topic, its subscriptions and its grants.
 * It waits for the transactions publishing to it; the messages they put
 * stay in their queues.
 */
Datum
queue_topic_drop(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg_of(fcinfo, 0, "topic");
	StorageSession session;
	Datum		topic_id;

	queue_storage_begin_write(&session, "queue_topic_drop()");
	topic_id = Int32GetDatum(queue_topic_open(name, AccessExclusiveLock,
											  QUEUE_PERM_MANAGE, false)->topic_id);
	queue_plan_run1(PLAN_GRANTS_DELETE_QUEUE, "queue_id", topic_id);
	queue_plan_run1(PLAN_TOPIC_DELETE, "topic_id", topic_id);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
