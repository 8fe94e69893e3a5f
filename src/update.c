/*-------------------------------------------------------------------------
 *
 * update.c
 *		queue_update: extend, release or rewrite a message one holds.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "utils/array.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(queue_update);

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
	int64		message_id;
	pg_uuid_t  *receipt;
	int64		visibility_timeout;
	bool		has_body = !PG_ARGISNULL(4);
	bool		has_headers = !PG_ARGISNULL(5);
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	Datum		values[9];
	char		nulls[9] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	HeapTuple	row;
	TupleDesc	rowdesc;
	bool		isnull;
	int32		dequeue_count;
	Datum		result;

	queue_require_arg(fcinfo, 1, "message_id", name);
	message_id = PG_GETARG_INT64(1);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	receipt = PG_GETARG_UUID_P(2);
	visibility_timeout = queue_duration_arg(fcinfo, 3, "visibility_timeout", name);
	queue_check_duration(visibility_timeout, 0, true, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(3));
	if (has_headers)
		queue_check_headers(PG_GETARG_DATUM(5), name);

	queue_storage_begin_write(&session, "queue_update()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = queue_writer_now();

	values[0] = Int64GetDatum(message_id);
	values[1] = Int32GetDatum(queue.queue_id);
	values[2] = UUIDPGetDatum(receipt);
	values[3] = TimestampTzGetDatum(now + visibility_timeout);
	values[4] = UUIDPGetDatum(queue_new_receipts(1));
	values[5] = has_body ? PG_GETARG_DATUM(4) : (Datum) 0;
	values[6] = has_headers ? PG_GETARG_DATUM(5) : (Datum) 0;
	values[7] = TimestampTzGetDatum(now);
	values[8] = Int32GetDatum(queue.max_message_size);
	if (!has_body)
		nulls[5] = 'n';
	if (!has_headers)
		nulls[6] = 'n';

	if (queue_plan_run(PLAN_UPDATE, values, nulls) == 0)
		queue_report_refusal(&queue, message_id, receipt, now,
							 values[5], has_body, values[6], has_headers);

	row = SPI_tuptable->vals[0];
	rowdesc = SPI_tuptable->tupdesc;
	if (visibility_timeout == 0)
		queue_wake_at_commit(queue.queue_id);
	dequeue_count = DatumGetInt32(SPI_getbinval(row, rowdesc, 6, &isnull));

	if (visibility_timeout == 0 && queue_at_dequeue_limit(&queue, dequeue_count))
	{
		Datum		id = Int64GetDatum(message_id);
		SPITupleTable *moved;

		moved = queue_move_to_poison(&queue, queue_message_id_array(&id, 1), now);
		row = moved->vals[0];
		rowdesc = moved->tupdesc;
	}

	result = queue_receipt_result(fcinfo, row, rowdesc);
	queue_storage_end(&session);
	PG_RETURN_DATUM(result);
}
