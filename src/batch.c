/*-------------------------------------------------------------------------
 *
 * batch.c
 *		queue_delete_batch and queue_update_batch: acknowledging many
 *		messages at once, as SQS's DeleteMessageBatch and
 *		ChangeMessageVisibilityBatch do.
 *
 * One statement each (PLAN_DELETE_BATCH, PLAN_UPDATE_BATCH).  A bad entry
 * raises nothing: its row says not_found or pop_receipt_mismatch, and the
 * others go through.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_delete_batch);
PG_FUNCTION_INFO_V1(queue_update_batch);

/*
 * The array argument argno, starting at subscript 1 (the batch statements
 * pair a message id with the receipt at the same subscript).
 */
static Datum
one_based(FunctionCallInfo fcinfo, int argno)
{
	ArrayType  *array = PG_GETARG_ARRAYTYPE_P(argno);

	if (ARR_NDIM(array) == 1 && ARR_LBOUND(array)[0] != 1)
	{
		array = PG_GETARG_ARRAYTYPE_P_COPY(argno);
		ARR_LBOUND(array)[0] = 1;
	}
	return PointerGetDatum(array);
}

/*
 * Arguments 1 (message_ids) and 2 (pop_receipts): not NULL, one-dimensional,
 * as long as each other, 1 to 1000 entries.  Returns the number of entries.
 */
static int
batch_arrays(FunctionCallInfo fcinfo, const char *name)
{
	ArrayType  *ids;
	ArrayType  *receipts;
	int			id_count;
	int			receipt_count;

	queue_require_arg(fcinfo, 1, "message_ids", name);
	queue_require_arg(fcinfo, 2, "pop_receipts", name);
	ids = PG_GETARG_ARRAYTYPE_P(1);
	receipts = PG_GETARG_ARRAYTYPE_P(2);
	if (ARR_NDIM(ids) > 1 || ARR_NDIM(receipts) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("message_ids and pop_receipts must be one-dimensional arrays for queue \"%s\"",
						name)));
	id_count = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
	receipt_count = ArrayGetNItems(ARR_NDIM(receipts), ARR_DIMS(receipts));
	if (id_count != receipt_count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d message ids and %d pop receipts given for queue \"%s\"",
						id_count, receipt_count, name),
				 errdetail("Each message id needs the pop receipt at the same position.")));
	queue_check_count(id_count, 1, QUEUE_MAX_BATCH, "number of messages", name);
	return id_count;
}

/*
 * queue_delete_batch(queue, message_ids, pop_receipts): one row per entry,
 * (message_id, status) with status deleted, not_found or
 * pop_receipt_mismatch.
 */
Datum
queue_delete_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	Datum		values[4];
	SPITupleTable *rows;
	QueueCounts counts = {0};
	uint64		i;

	batch_arrays(fcinfo, name);
	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);

	values[0] = one_based(fcinfo, 1);
	values[1] = one_based(fcinfo, 2);
	values[2] = Int32GetDatum(queue.queue_id);
	values[3] = TimestampTzGetDatum(GetCurrentTimestamp());
	queue_plan_run(PLAN_DELETE_BATCH, values, NULL);
	rows = SPI_tuptable;
	queue_store_rows(fcinfo, rows);

	for (i = 0; i < rows->numvals; i++)
	{
		bool		isnull;
		text	   *status = DatumGetTextPP(SPI_getbinval(rows->vals[i], rows->tupdesc, 2, &isnull));

		if (strcmp(text_to_cstring(status), "deleted") == 0)
			counts.deletes++;
	}
	queue_counters_add(queue.queue_id, &counts);

	queue_storage_end(&session);
	return (Datum) 0;
}

/*
 * queue_update_batch(queue, message_ids, pop_receipts, visibility_timeout):
 * one row per entry, (message_id, pop_receipt, visible_at, status) with
 * status updated, not_found or pop_receipt_mismatch.  As with queue_update,
 * a message released (0) after its last allowed delivery goes to the
 * poison queue and its row holds no receipt.
 */
Datum
queue_update_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			count;
	int64		visibility_timeout;
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	Datum		values[6];
	SPITupleTable *rows;
	Datum	   *poison;
	int			poison_count = 0;
	uint64		i;
	int			j;

	count = batch_arrays(fcinfo, name);
	visibility_timeout = queue_duration_arg(fcinfo, 3, "visibility_timeout", name);
	queue_check_duration(visibility_timeout, 0, true, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(3));

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = queue_writer_now();

	values[0] = one_based(fcinfo, 1);
	values[1] = one_based(fcinfo, 2);
	values[2] = queue_new_receipt_array(count);
	values[3] = Int32GetDatum(queue.queue_id);
	values[4] = TimestampTzGetDatum(now + visibility_timeout);
	values[5] = TimestampTzGetDatum(now);
	queue_plan_run(PLAN_UPDATE_BATCH, values, NULL);
	rows = SPI_tuptable;

	if (visibility_timeout == 0)
		queue_wake_at_commit(queue.queue_id);
	poison = palloc(sizeof(Datum) * (rows->numvals + 1));
	for (i = 0; i < rows->numvals; i++)
	{
		Datum		row[5];
		bool		nulls[5];

		for (j = 0; j < 5; j++)
			row[j] = SPI_getbinval(rows->vals[i], rows->tupdesc, j + 1, &nulls[j]);
		/* released at the limit: to the poison queue, as a get would */
		if (visibility_timeout == 0 && !nulls[4] &&
			queue_at_dequeue_limit(&queue, DatumGetInt32(row[4])))
		{
			poison[poison_count++] = row[0];
			nulls[1] = true;	/* moved: nothing is held any more */
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}

	if (poison_count > 0)
		queue_move_to_poison(&queue, queue_message_id_array(poison, poison_count), now);

	queue_storage_end(&session);
	return (Datum) 0;
}
