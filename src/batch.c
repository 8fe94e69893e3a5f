/*-------------------------------------------------------------------------
 *
 * batch.c
 *		queue_delete_batch and queue_update_batch: acknowledging many
 *		messages at once, as SQS's DeleteMessageBatch and
 *		ChangeMessageVisibilityBatch do.
 *
 * A delete batch deletes one message after another as queue_delete does
 * (delete.c); an update batch is one statement (PLAN_UPDATE_BATCH).  A bad
 * entry raises nothing: its row says not_found or pop_receipt_mismatch, and
 * the others go through.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "miscadmin.h"
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

/* A message id and where it stands in the batch. */
typedef struct BatchEntry
{
	int64		message_id;
	int			position;
} BatchEntry;

/* Orders entries by message id, then by position. */
static int
compare_entries(const void *a, const void *b)
{
	const BatchEntry *x = (const BatchEntry *) a;
	const BatchEntry *y = (const BatchEntry *) b;

	if (x->message_id != y->message_id)
		return x->message_id < y->message_id ? -1 : 1;
	return x->position - y->position;
}

/*
 * queue_delete_batch(queue, message_ids, pop_receipts): one row per entry,
 * in input order, (message_id, status) with status deleted, not_found or
 * pop_receipt_mismatch.  Each entry is taken as queue_delete would take it;
 * a NULL id is not_found, a NULL receipt never matches, and an id given
 * again after its message was deleted is not_found.
 *
 * The messages are deleted in the order of their ids, as a DELETE through
 * the primary key would: two batches that must wait for each other's
 * messages then wait in the same order and cannot deadlock.
 */
Datum
queue_delete_batch(PG_FUNCTION_ARGS)
{
	static const char *const status_names[] = {
		[DELETE_DONE] = "deleted",
		[DELETE_NOT_FOUND] = "not_found",
		[DELETE_RECEIPT_MISMATCH] = "pop_receipt_mismatch"
	};
	char	   *name = queue_name_arg(fcinfo, 0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StorageSession session;
	QueueInfo	queue;
	MessageDeleter deleter;
	Datum		statuses[lengthof(status_names)];
	Datum	   *ids;
	bool	   *id_nulls;
	Datum	   *receipts;
	bool	   *receipt_nulls;
	int			count;
	BatchEntry *entries;
	int			entry_count = 0;
	DeleteOutcome *outcomes;
	QueueCounts counts = {0};
	int			i;

	count = batch_arrays(fcinfo, name);
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(1), INT8OID, sizeof(int64),
					  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &ids, &id_nulls, &count);
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), UUIDOID, UUID_LEN,
					  false, TYPALIGN_CHAR, &receipts, &receipt_nulls, &count);

	entries = palloc(sizeof(BatchEntry) * count);
	outcomes = palloc(sizeof(DeleteOutcome) * count);
	for (i = 0; i < count; i++)
	{
		outcomes[i] = DELETE_NOT_FOUND;
		if (id_nulls[i])
			continue;
		entries[entry_count].message_id = DatumGetInt64(ids[i]);
		entries[entry_count].position = i;
		entry_count++;
	}
	qsort(entries, entry_count, sizeof(BatchEntry), compare_entries);

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_delete_batch()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);

	queue_deleter_begin(&deleter, queue.queue_id, GetCurrentTimestamp());
	for (i = 0; i < entry_count; i++)
	{
		int			at = entries[i].position;

		CHECK_FOR_INTERRUPTS();
		outcomes[at] = queue_deleter_delete(&deleter, entries[i].message_id,
											receipt_nulls[at] ? NULL :
											DatumGetUUIDP(receipts[at]));
		if (outcomes[at] == DELETE_DONE)
			counts.deletes++;
	}
	queue_deleter_end(&deleter);
	queue_counters_add(queue.queue_id, &counts);

	for (i = 0; i < lengthof(status_names); i++)
		statuses[i] = CStringGetTextDatum(status_names[i]);
	for (i = 0; i < count; i++)
	{
		Datum		row[2] = {ids[i], statuses[outcomes[i]]};
		bool		nulls[2] = {id_nulls[i], false};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row, nulls);
	}

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
	queue_storage_begin_write(&session, "queue_update_batch()");
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
