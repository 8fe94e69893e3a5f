/*-------------------------------------------------------------------------
 *
 * publish.c
 *		queue_publish: one message into every subscribed queue whose filter
 *		the headers match.
 *
 * The messages are put as queue_put puts them (messages/insert.c), each by
 * its queue's settings: its delay and message_ttl where the call gives
 * none, its max_message_size, its deduplication window.  All of them are
 * in the caller's transaction: a rollback takes every one back.  The
 * publisher needs send on the topic only, as with SNS: a subscription is
 * made by whoever manages both the topic and the queue.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/put.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_publish);

/*
 * queue_publish(topic, body, headers, visibility_timeout, ttl, group_id,
 * deduplication_id, priority): a row (queue, message_id) per message put,
 * in the order of the queues' names; no row if no filter matched.
 */
Datum
queue_publish(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg_of(fcinfo, 0, "topic");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		has_headers = !PG_ARGISNULL(2);
	Datum		body;
	Datum		headers = (Datum) 0;
	bool		no_null = false;
	PutTiming	timing;
	PutOrdering ordering = {0};
	PutOne		one;
	StorageSession session;
	const TopicInfo *topic;
	Jsonb	   *header_object = NULL;
	int			i;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("body must not be null for topic \"%s\"", name)));
	body = PG_GETARG_DATUM(1);
	if (has_headers)
	{
		headers = PG_GETARG_DATUM(2);
		queue_check_headers_of(headers, "topic", name);
		header_object = DatumGetJsonbP(headers);
		headers = JsonbPGetDatum(header_object);
	}
	timing = queue_put_timing_args(fcinfo, 3, "topic", name);
	queue_put_one_args(fcinfo, 5, "topic", name, &one, &ordering);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_publish()");
	topic = queue_topic_open(name, AccessShareLock, QUEUE_PERM_SEND, false);

	for (i = 0; i < topic->subscription_count; i++)
	{
		const TopicSubscription *subscription = &topic->subscriptions[i];
		QueueInfo	queue;
		PutReceipt *receipt;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		/*
		 * A queue dropped since the topic was read (perhaps made again
		 * under its name) is no longer subscribed.
		 */
		if (!queue_filter_matches(subscription->filter, header_object) ||
			!queue_open_if_exists(subscription->queue, AccessShareLock, 0, &queue) ||
			queue.queue_id != subscription->queue_id)
			continue;
		queue_check_size(&queue, body, headers, has_headers, 0);
		receipt = queue_insert_messages(&queue, &timing, &body,
										has_headers ? &headers : NULL,
										&no_null, &ordering, 1);
		values[0] = CStringGetTextDatum(queue.name);
		values[1] = receipt->values[0];		/* message_id */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	queue_storage_end(&session);
	return (Datum) 0;
}
