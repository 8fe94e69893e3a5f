/*-------------------------------------------------------------------------
 *
 * receipts.c
 *		Pop receipts: making them, and explaining why one was refused.
 *
 * A pop receipt is 128 bits from pg_strong_random(), new on every put, get
 * and update.  Only the newest one of a message works.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/builtins.h"

/*
 * Random bytes drawn ahead: each call of pg_strong_random() costs about
 * 8,500 instructions whatever it draws (OpenSSL's per-call work), as much
 * as a tenth of a put; drawn 64 receipts at a time, a receipt costs a
 * fraction of that.  Each byte is handed out once.
 */
#define RECEIPTS_AHEAD 64
static pg_uuid_t receipts_ahead[RECEIPTS_AHEAD];
static int	receipts_left = 0;

static void
draw_random(void *buffer, size_t size)
{
	if (!pg_strong_random(buffer, size))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate a random pop receipt")));
}

/* count fresh receipts, in the current memory context. */
pg_uuid_t *
queue_new_receipts(int count)
{
	pg_uuid_t  *receipts = palloc(sizeof(pg_uuid_t) * count);
	int			i;

	if (count > RECEIPTS_AHEAD)
	{
		draw_random(receipts, sizeof(pg_uuid_t) * count);
		return receipts;
	}
	for (i = 0; i < count; i++)
	{
		if (receipts_left == 0)
		{
			draw_random(receipts_ahead, sizeof(receipts_ahead));
			receipts_left = RECEIPTS_AHEAD;
		}
		receipts_left--;
		receipts[i] = receipts_ahead[receipts_left];
		memset(&receipts_ahead[receipts_left], 0, sizeof(pg_uuid_t));
	}
	return receipts;
}

/* A uuid[] of count fresh receipts, as the statements take them. */
Datum
queue_new_receipt_array(int count)
{
	pg_uuid_t  *receipts = queue_new_receipts(count);
	Datum	   *datums = palloc(sizeof(Datum) * count);
	int			i;

	for (i = 0; i < count; i++)
		datums[i] = UUIDPGetDatum(&receipts[i]);
	return PointerGetDatum(construct_array(datums, count, UUIDOID, UUID_LEN,
										   false, TYPALIGN_CHAR));
}

/*
 * An update or delete matched no row: find out why and raise the error the
 * contract names.  QU404 when the message is not in the queue (never was,
 * deleted, expired, moved to the poison queue), QU409 when its receipt is
 * not the newest, 54000 when a new body or headers would not fit.
 */
void
queue_report_refusal(const QueueInfo *queue, int64 message_id,
					 pg_uuid_t *receipt, TimestampTz now,
					 Datum new_body, bool has_body,
					 Datum new_headers, bool has_headers)
{
	Datum		values[5];
	char		nulls[5] = {' ', ' ', ' ', ' ', ' '};
	HeapTuple	row = NULL;
	TupleDesc	desc = NULL;
	bool		isnull;
	pg_uuid_t  *current;
	bool		alive;
	int64		size;

	values[0] = Int64GetDatum(message_id);
	values[1] = Int32GetDatum(queue->queue_id);
	values[2] = TimestampTzGetDatum(now);
	values[3] = new_body;
	values[4] = new_headers;
	if (!has_body)
		nulls[3] = 'n';
	if (!has_headers)
		nulls[4] = 'n';

	if (queue_plan_run(PLAN_DIAGNOSE, values, nulls) == 0)
		alive = false;
	else
	{
		row = SPI_tuptable->vals[0];
		desc = SPI_tuptable->tupdesc;
		alive = DatumGetBool(SPI_getbinval(row, desc, 2, &isnull));
	}

	if (!alive)
		ereport(ERROR,
				(errcode(ERRCODE_QUEUE_MESSAGE_NOT_FOUND),
				 errmsg("message %lld not found in queue \"%s\"",
						(long long) message_id, queue->name),
				 errdetail("It was deleted, it expired, it was moved to the poison queue, or it never existed.")));

	current = DatumGetUUIDP(SPI_getbinval(row, desc, 1, &isnull));
	if (isnull || memcmp(current, receipt, sizeof(pg_uuid_t)) != 0 ||
		(!has_body && !has_headers))
		ereport(ERROR,
				(errcode(ERRCODE_QUEUE_RECEIPT_MISMATCH),
				 errmsg("pop receipt does not match for message %lld in queue \"%s\"",
						(long long) message_id, queue->name),
				 errhint("The message was got or updated again since this receipt was issued; only the newest pop receipt works.")));

	size = DatumGetInt64(SPI_getbinval(row, desc, 3, &isnull));
	queue_report_too_large(queue, size, 0);
}

/*
 * The function's queue_receipt result from its five columns (message_id,
 * pop_receipt, visible_at, inserted_at, expires_at), copied out of SPI's
 * memory.
 */
Datum
queue_receipt_datum(FunctionCallInfo fcinfo, const Datum *values,
					const bool *nulls)
{
	TupleDesc	resultdesc;

	if (get_call_result_type(fcinfo, NULL, &resultdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "queue: function must return queue_receipt");
	Assert(resultdesc->natts == QUEUE_RECEIPT_NATTS);

	return PointerGetDatum(SPI_returntuple(heap_form_tuple(resultdesc,
														   (Datum *) values,
														   (bool *) nulls),
										   resultdesc));
}

/* The same, from the first five columns of a row (RECEIPT_COLUMNS of plans.c). */
Datum
queue_receipt_result(FunctionCallInfo fcinfo, HeapTuple row, TupleDesc rowdesc)
{
	Datum		values[QUEUE_RECEIPT_NATTS];
	bool		nulls[QUEUE_RECEIPT_NATTS];
	int			i;

	for (i = 0; i < QUEUE_RECEIPT_NATTS; i++)
		values[i] = SPI_getbinval(row, rowdesc, i + 1, &nulls[i]);
	return queue_receipt_datum(fcinfo, values, nulls);
}
