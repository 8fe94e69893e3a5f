/*-------------------------------------------------------------------------
 *
 * deduplication.c
 *		A put's deduplication_id: one message per id and queue within the
 *		queue's deduplication window.
 *
 * A put with a deduplication_id first reserves it in
 * queue_storage.deduplication, with the receipt of the message it is about
 * to store.  The reservation is an INSERT ... ON CONFLICT: a put racing
 * another with the same id waits for it, and stores nothing if it
 * committed; a put that rolls back reserves nothing.  A reservation older
 * than the window is taken over (the sweep deletes them in the end).  A
 * put that finds the id reserved stores nothing and returns the first
 * put's receipt, its pop receipt only while that message is in its queue
 * and was never handed out.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "messages/messages.h"
#include "storage/storage.h"

/*
 * Reserves deduplication_id (a text Datum) in queue for the message
 * message_id about to be put at now, with its receipt (receipt: the five
 * columns of queue_receipt).  Returns true when the put goes on; false
 * when a put within the window has the id, and then receipt holds that
 * put's receipt.
 */
bool
queue_deduplication_reserve(const QueueInfo *queue, Datum deduplication_id,
							TimestampTz now, Datum *receipt, bool *receipt_nulls)
{
	PlanArgs	args;
	static const char *const columns[QUEUE_RECEIPT_NATTS] = {
		"message_id", "pop_receipt", "visible_at", "inserted_at", "expires_at",
		"group_id", "priority"
	};
	int			i;

	queue_plan_begin(&args, PLAN_DEDUP_RESERVE);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set(&args, "deduplication_id", deduplication_id);
	queue_plan_set(&args, "message_id", receipt[0]);
	queue_plan_set(&args, "visible_at", receipt[2]);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	if (receipt_nulls[4])
		queue_plan_set_null(&args, "expires_at");
	else
		queue_plan_set(&args, "expires_at", receipt[4]);
	if (receipt_nulls[5])
		queue_plan_set_null(&args, "group_id");
	else
		queue_plan_set(&args, "group_id", receipt[5]);
	queue_plan_set(&args, "priority", receipt[6]);
	queue_plan_set(&args, "forget_at",
				   TimestampTzGetDatum(queue_time_plus(now, queue->deduplication_window,
													   "deduplication_window",
													   queue->name)));
	if (queue_plan_run(&args) > 0)
		return true;

	queue_plan_begin(&args, PLAN_DEDUP_FIRST);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set(&args, "deduplication_id", deduplication_id);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	if (queue_plan_run(&args) != 1)
		elog(ERROR, "queue: deduplication_id of queue \"%s\" neither new nor found",
			 queue->name);
	for (i = 0; i < QUEUE_RECEIPT_NATTS; i++)
		receipt[i] = queue_row_value(SPI_tuptable, 0, columns[i], &receipt_nulls[i]);
	return false;
}

/* Forgets one batch of reservations past their window; returns how many. */
int64
queue_deduplication_forget(TimestampTz now, int batch_size)
{
	PlanArgs	args;
	bool		isnull;

	if (!queue_storage_has_ordering())
		return 0;
	queue_plan_begin(&args, PLAN_DEDUP_FORGET);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	queue_plan_run(&args);
	return DatumGetInt64(queue_row_value(SPI_tuptable, 0, "forgotten", &isnull));
}
