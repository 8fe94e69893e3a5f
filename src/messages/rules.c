/*-------------------------------------------------------------------------
 *
 * rules.c
 *		The rules of a message, as the row-at-a-time paths ask them.
 *
 * rules.h says what each rule is, and holds the SQL form of those that
 * statements also decide.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"

#include "access/detoast.h"
#include "common/pg_prng.h"
#include "utils/jsonb.h"

bool
queue_message_alive_in(TupleTableSlot *slot, int32 queue_id, TimestampTz now)
{
	bool		isnull;
	Datum		expires_at;

	if (DatumGetInt32(slot_getattr(slot, MSG_ATTNUM(MSG_QUEUE_ID), &isnull)) != queue_id)
		return false;
	expires_at = slot_getattr(slot, MSG_ATTNUM(MSG_EXPIRES_AT), &isnull);
	return isnull || DatumGetTimestampTz(expires_at) > now;
}

bool
queue_message_visible(TupleTableSlot *slot, TimestampTz now)
{
	bool		isnull;

	return DatumGetTimestampTz(slot_getattr(slot, MSG_ATTNUM(MSG_VISIBLE_AT), &isnull)) <= now;
}

bool
queue_message_waiting(TupleTableSlot *slot)
{
	bool		isnull;

	return DatumGetTimestampTz(slot_getattr(slot, MSG_ATTNUM(MSG_VISIBLE_AT), &isnull)) ==
		QUEUE_WAITING_AT;
}

/*
 * before returns the alive messages of the group put before the message,
 * after those put after it in put order; each NULL after the last.
 */
bool
queue_group_turn(QueueGroupNext before, QueueGroupNext after, void *walk,
				 TimestampTz now)
{
	TupleTableSlot *member;

	/* the first alive message of its group */
	if (before(walk) != NULL)
		return false;
	/* and, up to the first waiting one, none after it in flight */
	while ((member = after(walk)) != NULL && !queue_message_waiting(member))
		if (!queue_message_visible(member, now))
			return false;
	return true;
}

bool
queue_receipt_matches(TupleTableSlot *slot, const pg_uuid_t *receipt)
{
	bool		isnull;
	Datum		current = slot_getattr(slot, MSG_ATTNUM(MSG_POP_RECEIPT), &isnull);

	return !isnull && receipt != NULL &&
		memcmp(DatumGetUUIDP(current), receipt, sizeof(pg_uuid_t)) == 0;
}

int64
queue_message_size(Datum body, Datum headers, bool has_headers)
{
	int64		size = (int64) toast_raw_datum_size(body) - VARHDRSZ;

	if (has_headers)
	{
		Jsonb	   *jsonb = DatumGetJsonbP(headers);
		char	   *text = JsonbToCString(NULL, &jsonb->root, VARSIZE(jsonb));

		size += strlen(text);
		pfree(text);
	}
	return size;
}

void
queue_check_size(const QueueInfo *queue, Datum body, Datum headers,
				 bool has_headers, int position)
{
	int64		size = queue_message_size(body, headers, has_headers);

	if (queue_too_large(queue, size))
		queue_report_too_large(queue, size, position);
}

bool
queue_too_large(const QueueInfo *queue, int64 size)
{
	return size > queue->max_message_size;
}

void
queue_report_too_large(const QueueInfo *queue, int64 size, int position)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 position == 0 ?
			 errmsg("message of %lld bytes is too large for queue \"%s\"",
					(long long) size, queue->name) :
			 errmsg("message %d of the batch, of %lld bytes, is too large for queue \"%s\"",
					position, (long long) size, queue->name),
			 errdetail("The queue's max_message_size is %d bytes; the size counts the body and the headers.",
					   queue->max_message_size)));
}

void
queue_check_headers(Datum headers, const char *queue)
{
	queue_check_headers_of(headers, "queue", queue);
}

void
queue_check_headers_of(Datum headers, const char *kind, const char *name)
{
	Jsonb	   *jsonb = DatumGetJsonbP(headers);

	if (!JB_ROOT_IS_OBJECT(jsonb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("headers must be a JSON object for %s \"%s\"", kind, name),
				 errhint("Write headers as {\"name\": value, ...}, or pass NULL.")));
}

int32
queue_dequeue_limit(const QueueInfo *queue)
{
	return queue->poison_queue_id != 0 ? queue->max_dequeue_count : 0;
}

bool
queue_at_dequeue_limit(const QueueInfo *queue, int32 dequeue_count)
{
	int32		limit = queue_dequeue_limit(queue);

	return limit > 0 && dequeue_count >= limit;
}

int64
queue_retry_delay(const QueueInfo *queue, int32 dequeue_count)
{
	int64		cap = queue->retry_delay_max >= 0 ?
		Min(queue->retry_delay_max, QUEUE_MAX_VISIBILITY) : QUEUE_MAX_VISIBILITY;
	double		delay = (double) queue->retry_delay;

	if (queue->retry_backoff && delay > 0)
	{
		int32		n;

		/* doubling on changes nothing once even the least jitter leaves it capped */
		for (n = 1; n < dequeue_count && 0.9 * delay < cap; n++)
			delay *= 2;
		delay *= 0.9 + 0.2 * pg_prng_double(&pg_global_prng_state);
	}
	return (int64) Min(delay, (double) cap);
}
