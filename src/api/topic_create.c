/*-------------------------------------------------------------------------
 *
 * topic_create.c
 *		queue_topic_create.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_topic_create);

/* queue_topic_create(topic): needs manage on '*', as queue_create does. */
Datum
queue_topic_create(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg_of(fcinfo, 0, "topic");
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;

	queue_storage_begin_write(&session, "queue_topic_create()");
	queue_require_topic_storage();
	queue_require_permission(0, "*", QUEUE_PERM_MANAGE);

	queue_lock_namespace(true);
	if (queue_find(name, &queue))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("queue \"%s\" already exists", name),
				 errdetail("Queues and topics share one namespace.")));

	queue_plan_begin(&args, PLAN_TOPIC_INSERT);
	queue_plan_set(&args, "name", CStringGetTextDatum(name));
	queue_plan_set(&args, "created_at", TimestampTzGetDatum(GetCurrentTimestamp()));
	if (queue_plan_run(&args) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("topic \"%s\" already exists", name)));

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
