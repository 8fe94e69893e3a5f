/*-------------------------------------------------------------------------
 *
 * topics.c
 *		queue_topics: the topics the caller may see, with their
 *		subscriptions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_topics);

/*
 * queue_topics(): one row per subscription, a row with queue NULL for a
 * topic without any; only the topics the caller holds some permission on.
 */
Datum
queue_topics(PG_FUNCTION_ARGS)
{
	StorageSession session;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_require_topic_storage();
	queue_store_shown_rows(fcinfo, PLAN_TOPIC_LIST);
	queue_storage_end(&session);
	return (Datum) 0;
}
