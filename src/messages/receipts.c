/*-------------------------------------------------------------------------
 *
 * receipts.c
 *		Pop receipts: making them, and the queue_receipt results that show them.
 *
 * A pop receipt is 128 bits from pg_strong_random(), new on every put, get
 * and update.  Only the newest one of a message works.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/builtins.h"

/*
 * Random bytes drawn ahead: each call of pg_strong_random() costs the same
 * whatever it draws (OpenSSL's per-call work), a noticeable share of a put;
 * drawn 64 receipts at a time, a receipt costs a fraction of that
 * (bench/reports/history.md, "Where the cycle's gap was").  Each byte is
 * handed out once.
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

/*
 * The function's queue_receipt result from its columns (message_id,
 * pop_receipt, visible_at, inserted_at, expires_at, group_id, priority),
 * copied out of SPI's memory.  The type of versions before 1.3 has only
 * the first five.
 */
Datum
queue_receipt_datum(FunctionCallInfo fcinfo, const Datum *values,
					const bool *nulls)
{
	TupleDesc	resultdesc;

	if (get_call_result_type(fcinfo, NULL, &resultdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "queue: function must return queue_receipt");
	Assert(resultdesc->natts == QUEUE_RECEIPT_NATTS || resultdesc->natts == 5);

	return PointerGetDatum(SPI_returntuple(heap_form_tuple(resultdesc,
														   (Datum *) values,
														   (bool *) nulls),
										   resultdesc));
}

/* The same, for the message version in slot. */
Datum
queue_receipt_of(FunctionCallInfo fcinfo, TupleTableSlot *slot)
{
	static const int columns[QUEUE_RECEIPT_NATTS] = {
		MSG_MESSAGE_ID, MSG_POP_RECEIPT, MSG_VISIBLE_AT, MSG_INSERTED_AT,
		MSG_EXPIRES_AT, MSG_GROUP_ID, MSG_PRIORITY
	};
	Datum		values[QUEUE_RECEIPT_NATTS];
	bool		nulls[QUEUE_RECEIPT_NATTS];
	int			i;

	for (i = 0; i < QUEUE_RECEIPT_NATTS; i++)
	{
		nulls[i] = true;
		if (MSG_HAS(columns[i]))
			values[i] = slot_getattr(slot, MSG_ATTNUM(columns[i]), &nulls[i]);
	}
	/* priority is a smallint in the table, an integer in the type */
	if (!nulls[6])
		values[6] = Int32GetDatum(DatumGetInt16(values[6]));
	return queue_receipt_datum(fcinfo, values, nulls);
}
