/*-------------------------------------------------------------------------
 *
 * subscribe.c
 *		queue_subscribe and queue_unsubscribe: a queue's subscription to a
 *		topic, with its filter.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(queue_subscribe);
PG_FUNCTION_INFO_V1(queue_unsubscribe);

/*
 * queue_subscribe(topic, queue, filter): needs manage on the topic and on
 * the queue, since a subscription lets whoever may publish to the topic
 * put into the queue.  The filter is checked here, before anything is
 * looked up; subscribing again replaces it.
 */
Datum
queue_subscribe(PG_FUNCTION_ARGS)
{
	char	   *topic_name = queue_name_arg_of(fcinfo, 0, "topic");
	char	   *queue_name = queue_name_arg(fcinfo, 1);
	StorageSession session;
	const TopicInfo *topic;
	QueueInfo	queue;
	PlanArgs	args;

	if (!PG_ARGISNULL(2))
		(void) queue_filter_compile(PG_GETARG_JSONB_P(2), topic_name, queue_name);

	queue_storage_begin_write(&session, "queue_subscribe()");
	topic = queue_topic_open(topic_name, AccessShareLock, QUEUE_PERM_MANAGE, false);
	queue_plan_begin(&args, PLAN_SUBSCRIPTION_SET);
	queue_plan_set(&args, "topic_id", Int32GetDatum(topic->topic_id));
	queue_open(queue_name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set_arg(&args, "filter", fcinfo, 2);
	queue_plan_set(&args, "created_at", TimestampTzGetDatum(GetCurrentTimestamp()));
	queue_plan_run(&args);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}

/*
 * queue_unsubscribe(topic, queue): needs manage on the topic or on the
 * queue.  No error if the queue was not subscribed.
 */
Datum
queue_unsubscribe(PG_FUNCTION_ARGS)
{
	char	   *topic_name = queue_name_arg_of(fcinfo, 0, "topic");
	char	   *queue_name = queue_name_arg(fcinfo, 1);
	StorageSession session;
	int32		topic_id;
	QueueInfo	queue;
	PlanArgs	args;

	queue_storage_begin_write(&session, "queue_unsubscribe()");
	topic_id = queue_topic_open(topic_name, AccessShareLock, 0, false)->topic_id;
	queue_open(queue_name, AccessShareLock, 0, &queue);
	if (!queue_holds_permission(queue.queue_id, QUEUE_PERM_MANAGE))
		queue_require_topic_permission(topic_id, topic_name, QUEUE_PERM_MANAGE);

	queue_plan_begin(&args, PLAN_SUBSCRIPTION_DELETE);
	queue_plan_set(&args, "topic_id", Int32GetDatum(topic_id));
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	if (queue_plan_run(&args) > 0)
		queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
