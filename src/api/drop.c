/*-------------------------------------------------------------------------
 *
 * drop.c
 *		queue_drop.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "queue_storage/queue_storage.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_drop);

/*
 * queue_drop(queue): the queue, its messages (those it retained too), its
 * counters, its subscriptions to topics and its schedules.  Its poison
 * queue stays.  A queue cannot be dropped while another uses it as its poison queue.
 */
Datum
queue_drop(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		queue_id;

	queue_storage_begin_write(&session, "queue_drop()");
	queue_open(name, AccessExclusiveLock, QUEUE_PERM_MANAGE, &queue);
	queue_id = Int32GetDatum(queue.queue_id);

	if (queue_plan_run1(PLAN_QUEUE_PARENT, "poison_queue_id", queue_id) > 0)
	{
		bool		isnull;
		char	   *parent = TextDatumGetCString(queue_row_value(SPI_tuptable, 0,
																 "name", &isnull));

		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot drop queue \"%s\" because queue \"%s\" uses it as its poison queue",
						name, parent),
				 errhint("Drop queue \"%s\" first, or empty this one with queue_clear().",
						 parent)));
	}

	queue_plan_run1(PLAN_MESSAGES_DELETE_ALL, "queue_id", queue_id);
	queue_plan_run1(PLAN_COUNTERS_DELETE, "queue_id", queue_id);
	queue_counters_forget(queue.queue_id);
	queue_plan_run1(PLAN_GRANTS_DELETE_QUEUE, "queue_id", queue_id);
	if (queue_storage_has_ordering())
		queue_plan_run1(PLAN_DEDUP_DELETE_QUEUE, "queue_id", queue_id);
	if (queue_storage_has_retention())
		queue_plan_run1(PLAN_RETAINED_DELETE_QUEUE, "queue_id", queue_id);
	if (queue_storage_has_topics())
		queue_plan_run1(PLAN_SUBSCRIPTIONS_DELETE_QUEUE, "queue_id", queue_id);
	if (queue_storage_has_schedules())
		queue_plan_run1(PLAN_SCHEDULES_DELETE_QUEUE, "queue_id", queue_id);
	queue_plan_run1(PLAN_QUEUE_DELETE, "queue_id", queue_id);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
