/*-------------------------------------------------------------------------
 *
 * delete.c
 *		queue_delete and queue_delete_batch: the consumer is done with a
 *		message, or with many at once (as SQS's DeleteMessageBatch).
 *
 * Both delete through by_receipt.c.  A bad entry of a batch raises
 * nothing: its row says not_found or pop_receipt_mismatch, and the others
 * go through.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/get.h"
#include "counters/counters.h"
#include "durability.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_delete);
PG_FUNCTION_INFO_V1(queue_delete_batch);

/*
 * queue_delete(queue, message_id, pop_receipt): deletes the message if the
 * receipt is its newest and it has not expired; otherwise QU404 or QU409.
 */
Datum
queue_delete(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		message_id;
	pg_uuid_t  *receipt;
	StorageSession session;
	QueueInfo	queue;
	HeldMessages held;
	HeldOutcome outcome;
	QueueCounts counts = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	message_id = PG_GETARG_INT64(1);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	receipt = PG_GETARG_UUID_P(2);

	queue_durability_begin();
	queue_storage_begin_write(&session, "queue_delete()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);

	queue_held_begin(&held, &queue, CMD_DELETE, GetCurrentTimestamp());
	outcome = queue_held_delete(&held, message_id, receipt);
	if (outcome != HELD_DONE)
		queue_held_report(&held, message_id, outcome);
	queue_held_end(&held);

	counts.deletes = 1;
	queue_counters_add(queue.queue_id, &counts);

	queue_storage_end(&session);
	queue_durability_end();
	PG_RETURN_VOID();
}

/* A delete's outcome as the batch functions report it, as text. */
Datum
queue_delete_status(HeldOutcome outcome)
{
	return CStringGetTextDatum(outcome == HELD_DONE ? "deleted" :
							   queue_held_status[outcome]);
}

/*
 * Deletes the entries of batch from queue, each as queue_delete would:
 * outcomes[position] is each one's outcome, HELD_NOT_FOUND for a NULL id.
 * Counts the deletes; returns how many there were.
 */
int
queue_delete_entries(const QueueInfo *queue, const QueueBatch *batch,
					 HeldOutcome *outcomes)
{
	HeldMessages held;
	QueueCounts counts = {0};
	int			i;

	for (i = 0; i < batch->count; i++)
		outcomes[i] = HELD_NOT_FOUND;
	queue_held_begin(&held, queue, CMD_DELETE, GetCurrentTimestamp());
	for (i = 0; i < batch->entry_count; i++)
	{
		int			at = batch->entries[i].position;

		CHECK_FOR_INTERRUPTS();
		outcomes[at] = queue_held_delete(&held, batch->entries[i].message_id,
										 queue_batch_receipt(batch, at));
		if (outcomes[at] == HELD_DONE)
			counts.deletes++;
	}
	queue_held_end(&held);
	queue_counters_add(queue->queue_id, &counts);
	return counts.deletes;
}

/*
 * queue_delete_batch(queue, message_ids, pop_receipts): one row per entry,
 * in input order, (message_id, status) with status deleted, not_found or
 * pop_receipt_mismatch.  Each entry is taken as queue_delete would take it;
 * a NULL id is not_found, a NULL receipt never matches, and an id given
 * again after its message was deleted is not_found.
 */
Datum
queue_delete_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StorageSession session;
	QueueInfo	queue;
	QueueBatch	batch;
	HeldOutcome *outcomes;
	int			i;

	queue_batch_arg(fcinfo, name, 1, &batch);
	outcomes = palloc(sizeof(HeldOutcome) * batch.count);

	InitMaterializedSRF(fcinfo, 0);
	queue_durability_begin();
	queue_storage_begin_write(&session, "queue_delete_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	queue_delete_entries(&queue, &batch, outcomes);

	for (i = 0; i < batch.count; i++)
	{
		Datum		row[2];
		bool		nulls[2] = {batch.id_nulls[i], false};

		row[0] = batch.ids[i];
		row[1] = queue_delete_status(outcomes[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}

	queue_storage_end(&session);
	queue_durability_end();
	return (Datum) 0;
}
