/*-------------------------------------------------------------------------
 *
 * delete_and_get.c
 *		queue_delete_and_get: a consumer's loop at one transaction per
 *		batch.  It deletes the messages the consumer finished, by id and
 *		pop receipt, and claims the next ones in the same call.
 *
 * The result has a row for each message given, in input order, with the
 * status queue_delete_batch would give it (deleted, not_found,
 * pop_receipt_mismatch) and the rest NULL.  One row per claimed message
 * follows, with status claimed and the columns of queue_message.
 *
 * A call that was given messages to delete never waits.  When nothing is
 * visible it returns at once, so its deletes commit instead of staying
 * locked and uncounted for the whole wait.  The next call, with nothing
 * to delete, waits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/get.h"
#include "durability.h"
#include "queue_storage/queue_storage.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_delete_and_get);

/* Adds a row per entry of batch, with its outcome, to the result. */
static void
store_outcomes(FunctionCallInfo fcinfo, const QueueBatch *batch,
			   const HeldOutcome *outcomes)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			natts = rsinfo->setDesc->natts;
	Datum	   *row = palloc0(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	int			i;

	for (i = 0; i < batch->count; i++)
	{
		memset(nulls, true, sizeof(bool) * natts);
		row[0] = queue_delete_status(outcomes[i]);
		nulls[0] = false;
		row[1] = batch->ids[i];
		nulls[1] = batch->id_nulls[i];
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}
}

/*
 * queue_delete_and_get(queue, message_ids, pop_receipts, max_messages,
 *						visibility_timeout, wait, release_on_disconnect)
 * message_ids and pop_receipts may both be NULL or empty: a plain get.
 */
Datum
queue_delete_and_get(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	QueueBatch	batch = {0};
	GetArguments args;
	StorageSession session;

	if (!PG_ARGISNULL(1) || !PG_ARGISNULL(2))
		queue_batch_arg(fcinfo, name, 0, &batch);
	queue_get_args(fcinfo, 3, name, &args);
	if (batch.count > 0)
		args.wait = 0;

	InitMaterializedSRF(fcinfo, 0);
	queue_durability_begin();
	queue_storage_begin_write(&session, "queue_delete_and_get()");
	if (batch.count > 0)
	{
		QueueInfo	queue;
		HeldOutcome *outcomes = palloc(sizeof(HeldOutcome) * batch.count);

		queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
		queue_delete_entries(&queue, &batch, outcomes);
		store_outcomes(fcinfo, &batch, outcomes);
	}
	queue_get_messages(fcinfo, true, name, &args);
	queue_storage_end(&session);
	queue_durability_end();
	return (Datum) 0;
}
