/*-------------------------------------------------------------------------
 *
 * update.c
 *		queue_update and queue_update_batch: extend, release or rewrite a
 *		message one holds, or the leases of many at once (as SQS's
 *		ChangeMessageVisibilityBatch); the changing of one message or of a
 *		batch that queue_release shares (update.h).
 *
 * All of them update through by_receipt.c.  A bad entry of a batch raises
 * nothing: its row says not_found or pop_receipt_mismatch, and the others
 * go through.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/update.h"
#include "durability.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_update);
PG_FUNCTION_INFO_V1(queue_update_batch);

/* The visibility_timeout argument (3) of both functions, checked. */
static int64
visibility_timeout_arg(FunctionCallInfo fcinfo, const char *name)
{
	int64		timeout = queue_duration_arg(fcinfo, 3, "visibility_timeout", name);

	queue_check_duration(timeout, 0, true, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(3));
	return timeout;
}

/*
 * Changes message_id of queue name as change says, if receipt is its
 * newest, and returns its receipt (queue_receipt); raises QU404 or QU409
 * otherwise.  change->visible_at is set here from visibility_timeout,
 * unless change->release.  A message that became visible wakes a getter.
 */
Datum
queue_update_one(FunctionCallInfo fcinfo, const char *name, int64 message_id,
				 const pg_uuid_t *receipt, int64 visibility_timeout, MessageChange *change)
{
	/* a new body or headers is a write of the caller's: durable */
	bool		lease_only = !change->has_body && !change->has_headers;
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	HeldMessages held;
	HeldOutcome outcome;
	bool		poisoned;
	bool		isnull;
	Datum		result;

	if (lease_only)
		queue_durability_begin();
	queue_storage_begin_write(&session, change->release ? "queue_release()" :
							  "queue_update()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = queue_writer_now();
	change->visible_at = now + visibility_timeout;
	change->receipt = queue_new_receipts(1);

	queue_held_begin(&held, &queue, CMD_UPDATE, now);
	outcome = queue_held_update(&held, message_id, receipt, change, &poisoned);
	if (outcome != HELD_DONE)
		queue_held_report(&held, message_id, outcome);
	result = queue_receipt_of(fcinfo, held.new_version);
	if (!poisoned &&
		DatumGetTimestampTz(slot_getattr(held.new_version, MSG_ATTNUM(MSG_VISIBLE_AT),
										 &isnull)) <= now)
		queue_wake_at_commit(queue.queue_id, 1);
	queue_held_end(&held);

	if (poisoned)
		queue_count_poisoned(&queue, 1);

	queue_storage_end(&session);
	if (lease_only)
		queue_durability_end();
	return result;
}

/*
 * queue_update(queue, message_id, pop_receipt, visibility_timeout, body,
 *				headers)
 *
 * Sets visible_at to now + visibility_timeout (never past the message's
 * expiry), replaces body and headers when given, and issues a new receipt;
 * dequeue_count stays.  A message released (timeout 0) after its last
 * allowed delivery goes to the poison queue at once: the receipt returned
 * then has no pop_receipt, as nothing is held any more.
 */
Datum
queue_update(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		visibility_timeout;
	MessageChange change = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	visibility_timeout = visibility_timeout_arg(fcinfo, name);
	change.has_body = !PG_ARGISNULL(4);
	if (change.has_body)
		change.body = PG_GETARG_DATUM(4);
	change.has_headers = !PG_ARGISNULL(5);
	if (change.has_headers)
	{
		change.headers = PG_GETARG_DATUM(5);
		queue_check_headers(change.headers, name);
	}
	PG_RETURN_DATUM(queue_update_one(fcinfo, name, PG_GETARG_INT64(1), PG_GETARG_UUID_P(2),
									visibility_timeout, &change));
}

/*
 * Changes the messages of the batch at arguments 1 and 2 of fcinfo as
 * change says, each on the first entry of its id only (a later entry of
 * the same id is not_found), and returns one row per entry, in input
 * order: (message_id, pop_receipt, visible_at, status), status done_status,
 * "poisoned" (release only: moved to the poison queue, no receipt),
 * not_found or pop_receipt_mismatch.  With keep_receipts, each message
 * keeps the receipt it was given.
 */
void
queue_update_many(FunctionCallInfo fcinfo, const char *name, int64 visibility_timeout,
				  MessageChange *change, bool keep_receipts, const char *done_status)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	QueueBatch	batch;
	HeldMessages held;
	pg_uuid_t  *receipts;
	Datum	   *rows;
	bool	   *row_nulls;
	int			poisoned_count = 0;
	int			visible_count = 0;
	int			i;

	queue_batch_arg(fcinfo, name, 1, &batch);
	rows = palloc(sizeof(Datum) * 4 * batch.count);
	row_nulls = palloc(sizeof(bool) * 4 * batch.count);
	for (i = 0; i < batch.count; i++)
	{
		rows[4 * i] = batch.ids[i];
		row_nulls[4 * i] = batch.id_nulls[i];
		row_nulls[4 * i + 1] = row_nulls[4 * i + 2] = true;
		rows[4 * i + 3] = CStringGetTextDatum(queue_held_status[HELD_NOT_FOUND]);
		row_nulls[4 * i + 3] = false;
	}

	InitMaterializedSRF(fcinfo, 0);
	queue_durability_begin();
	queue_storage_begin_write(&session, change->release ? "queue_release_batch()" :
							  "queue_update_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = queue_writer_now();
	change->visible_at = now + visibility_timeout;
	receipts = queue_new_receipts(batch.entry_count);

	queue_held_begin(&held, &queue, CMD_UPDATE, now);
	for (i = 0; i < batch.entry_count; i++)
	{
		int			at = batch.entries[i].position;
		HeldOutcome outcome;
		bool		poisoned;
		Datum	   *row = &rows[4 * at];
		bool	   *nulls = &row_nulls[4 * at];

		CHECK_FOR_INTERRUPTS();
		if (i > 0 && batch.entries[i - 1].message_id == batch.entries[i].message_id)
			continue;			/* not the first entry of its id */
		if (keep_receipts && queue_batch_receipt(&batch, at) != NULL)
			receipts[i] = *queue_batch_receipt(&batch, at);
		change->receipt = &receipts[i];
		outcome = queue_held_update(&held, batch.entries[i].message_id,
									queue_batch_receipt(&batch, at), change,
									&poisoned);
		if (outcome != HELD_DONE)
		{
			row[3] = CStringGetTextDatum(queue_held_status[outcome]);
			continue;
		}
		/* moved to poison: nothing is held any more */
		nulls[1] = poisoned;
		row[1] = UUIDPGetDatum(&receipts[i]);
		row[2] = slot_getattr(held.new_version, MSG_ATTNUM(MSG_VISIBLE_AT), &nulls[2]);
		row[3] = CStringGetTextDatum(poisoned && change->release ? "poisoned" : done_status);
		if (poisoned)
			poisoned_count++;
		else if (DatumGetTimestampTz(row[2]) <= now)
			visible_count++;
	}
	queue_held_end(&held);

	if (visible_count > 0)
		queue_wake_at_commit(queue.queue_id, visible_count);
	if (poisoned_count > 0)
		queue_count_poisoned(&queue, poisoned_count);

	for (i = 0; i < batch.count; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
							 &rows[4 * i], &row_nulls[4 * i]);

	queue_storage_end(&session);
	queue_durability_end();
}

/*
 * queue_update_batch(queue, message_ids, pop_receipts, visibility_timeout,
 * keep_pop_receipts): each entry taken as queue_update would take it, its
 * row's status updated (queue_update_many).  As with queue_update, a message
 * released (0) after its last allowed delivery goes to the poison queue
 * and its row holds no receipt.  With keep_pop_receipts, each message
 * keeps the receipt it was given, as SQS's ChangeMessageVisibility leaves
 * a receipt handle valid.
 */
Datum
queue_update_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		visibility_timeout = visibility_timeout_arg(fcinfo, name);
	MessageChange change = {0};

	/* from 1.6 on: SQS's visibility change */
	queue_update_many(fcinfo, name, visibility_timeout, &change,
					  PG_NARGS() > 4 && !PG_ARGISNULL(4) && PG_GETARG_BOOL(4), "updated");
	return (Datum) 0;
}
