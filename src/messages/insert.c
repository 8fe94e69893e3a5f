/*-------------------------------------------------------------------------
 *
 * insert.c
 *		New messages into the messages table: what queue_put and
 *		queue_put_batch store.
 *
 * The rows go on the table directly (table.c says why), message ids drawn
 * in input order: a single put is a batch of one.  A put runs in phases:
 * its expiry checked, its groups locked, its receipts drawn, each message
 * placed (behind its group, or not stored as a repeat of a deduplication
 * id), and the rows written.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "messages/rules.h"
#include "wait/wait.h"

#include "access/tableam.h"
#include "executor/tuptable.h"

/*
 * A batch's rows go to the table several at a time, in one heap
 * multi-insert: it writes one WAL record per page for the rows it put
 * there, where an insert per row writes a record of its own (record header
 * and block reference) for each row, so a batch writes less WAL per
 * message (bench/reports/history.md, "The journal of full runs", its second
 * run of bench/run.sh).  Each row waiting in a slot is a copy of the
 * message, so they go in once PUT_ROWS_AT_ONCE of them or PUT_BYTES_AT_ONCE
 * of bodies wait (large bodies gain little anyway: their toasted pieces are
 * inserted one by one).
 */
#define PUT_ROWS_AT_ONCE	100
#define PUT_BYTES_AT_ONCE	(1024 * 1024)

/* A put on its way into the table. */
typedef struct NewMessages
{
	const QueueInfo *queue;
	const PutOrdering *ordering;
	int			count;
	TimestampTz now;
	bool		expires;		/* false: the messages never expire */
	TimestampTz expires_at;
	bool		grouped;		/* some message has a group */
	PutReceipt *result;			/* per message: its receipt */
	bool	   *stored;			/* per message: false for a repeat */
} NewMessages;

/*
 * When the messages expire, after the ttl given or the queue's
 * message_ttl: not before they become visible.
 */
static void
set_expiry(NewMessages *put, const PutTiming *timing)
{
	int64		ttl = timing->ttl_given ? timing->ttl : put->queue->message_ttl;

	put->expires = ttl >= 0;
	put->expires_at = 0;
	if (!put->expires)
		return;
	if (ttl <= timing->delay)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ttl must be greater than visibility_timeout for queue \"%s\"",
						put->queue->name),
				 errdetail(timing->ttl_given ?
						   "The message would expire before it becomes visible." :
						   "The message would expire (after the queue's message_ttl) before it becomes visible.")));
	put->expires_at = queue_time_plus(put->now, ttl, "ttl", put->queue->name);
}

/* Whether some message of the put has a group. */
static bool
has_group(const NewMessages *put)
{
	int			i;

	for (i = 0; i < put->count && put->ordering->group_ids != NULL; i++)
		if (!put->ordering->group_nulls[i])
			return true;
	return false;
}

/*
 * The locks of the put's groups, taken before the ids are drawn so that
 * put order is commit order.
 */
static void
lock_groups(const NewMessages *put, const PutTiming *timing)
{
	const PutOrdering *ordering = put->ordering;

	/* a group goes out in put order: its messages wait for their turn */
	if (timing->delay > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a message with a group_id cannot be delayed in queue \"%s\"",
						put->queue->name),
				 errdetail("Messages of a group become visible in put order, each when the one before it has left the queue."),
				 errhint("Put it with visibility_timeout 0, or without group_id.")));
	queue_id_locks_take(put->queue->queue_id, QUEUE_LOCK_GROUP, ordering->group_ids,
						ordering->group_nulls, put->count);
}

/* The receipts, message ids drawn in input order; every message stored. */
static void
draw_receipts(NewMessages *put, const PutTiming *timing)
{
	const PutOrdering *ordering = put->ordering;
	pg_uuid_t  *receipts = queue_new_receipts(put->count);
	int			i;

	put->result = palloc(sizeof(PutReceipt) * put->count);
	put->stored = palloc(sizeof(bool) * put->count);
	for (i = 0; i < put->count; i++)
	{
		PutReceipt *receipt = &put->result[i];

		receipt->values[0] = Int64GetDatum(queue_messages_next_id());
		receipt->values[1] = UUIDPGetDatum(&receipts[i]);
		receipt->values[2] = TimestampTzGetDatum(put->now + timing->delay);
		receipt->values[3] = TimestampTzGetDatum(put->now);
		receipt->values[4] = TimestampTzGetDatum(put->expires_at);
		memset(receipt->nulls, false, sizeof(receipt->nulls));
		receipt->nulls[4] = !put->expires;
		receipt->nulls[5] = !put->grouped || ordering->group_nulls[i];
		if (!receipt->nulls[5])
			receipt->values[5] = ordering->group_ids[i];
		receipt->values[6] =
			Int32GetDatum(ordering->priorities != NULL ? ordering->priorities[i] : 0);
		put->stored[i] = true;
	}
}

/*
 * A message of a batch that repeats a deduplication id: when the first put
 * of the id is an earlier message of the same batch, not in the table yet,
 * the repeat's receipt is that message's, pop receipt included (the
 * reservation holds all but the pop receipt).
 */
static void
take_receipt_in_batch(NewMessages *put, int repeat)
{
	int64		first = DatumGetInt64(put->result[repeat].values[0]);
	int			j;

	for (j = 0; j < repeat; j++)
		if (put->stored[j] && DatumGetInt64(put->result[j].values[0]) == first)
		{
			put->result[repeat] = put->result[j];
			return;
		}
}

/*
 * Which messages wait behind their group (first_of: per message, its
 * group's first in the batch, or -1; occupied: per group, whether it has
 * messages in the queue), and which repeat a put within the deduplication
 * window: those are not stored, and take the first put's receipt.
 * Deduplication runs statements: the messages table must not be open.
 */
static void
place(NewMessages *put, const int *first_of, const bool *occupied)
{
	const PutOrdering *ordering = put->ordering;
	bool	   *taken = put->grouped ? palloc0(sizeof(bool) * put->count) : NULL;
	int			i;

	if (ordering->deduplication_ids != NULL)
		queue_deduplication_lock_batch(put->queue, ordering->deduplication_ids,
									   ordering->deduplication_nulls, put->count);
	for (i = 0; i < put->count; i++)
	{
		int			group = put->grouped ? first_of[i] : -1;

		if (group >= 0 && (occupied[group] || taken[group]))
			put->result[i].values[2] = TimestampTzGetDatum(QUEUE_WAITING_AT);
		if (ordering->deduplication_ids != NULL && !ordering->deduplication_nulls[i])
		{
			put->stored[i] = queue_deduplication_reserve(put->queue,
														 ordering->deduplication_ids[i],
														 put->now, put->result[i].values,
														 put->result[i].nulls);
			if (!put->stored[i])
				take_receipt_in_batch(put, i);
		}
		if (group >= 0 && put->stored[i])
			taken[group] = true;
	}
}

/*
 * Inserts the rows of the first count slots (none if count is 0), then
 * their index entries: the insert sets each slot's tts_tid.
 */
static void
insert_rows(MessagesTable *table, TupleTableSlot **slots, int count)
{
	int			i;

	if (count == 1)
		table_tuple_insert(table->rel, slots[0], table->cid, 0, NULL);
	else if (count > 1)
		table_multi_insert(table->rel, slots, count, table->cid, 0, NULL);
	for (i = 0; i < count; i++)
		queue_messages_add_index_entries(table, slots[i], false, false);
}

/* The row of a new message, from its receipt, body and headers. */
static void
fill_row(TupleTableSlot *slot, const MessagesTable *table, int32 queue_id,
		 const PutReceipt *receipt, Datum body, const Datum *headers)
{
	Datum	   *values = slot->tts_values;
	bool	   *nulls = slot->tts_isnull;

	ExecClearTuple(slot);
	memset(nulls, false, sizeof(bool) * slot->tts_tupleDescriptor->natts);
	values[MSG_INDEX(MSG_MESSAGE_ID)] = receipt->values[0];
	values[MSG_INDEX(MSG_QUEUE_ID)] = Int32GetDatum(queue_id);
	values[MSG_INDEX(MSG_VISIBLE_AT)] = receipt->values[2];
	values[MSG_INDEX(MSG_EXPIRES_AT)] = receipt->values[4];
	nulls[MSG_INDEX(MSG_EXPIRES_AT)] = receipt->nulls[4];
	values[MSG_INDEX(MSG_DEQUEUE_COUNT)] = Int32GetDatum(0);
	values[MSG_INDEX(MSG_LAST_LEASE)] = BoolGetDatum(false);
	values[MSG_INDEX(MSG_POP_RECEIPT)] = receipt->values[1];
	values[MSG_INDEX(MSG_INSERTED_AT)] = receipt->values[3];
	/* a new message has no source queue and no holder */
	nulls[MSG_INDEX(MSG_SOURCE_QUEUE)] = true;
	nulls[MSG_INDEX(MSG_HOLDER_PID)] = nulls[MSG_INDEX(MSG_HOLDER_START)] = true;
	nulls[MSG_INDEX(MSG_HEADERS)] = headers == NULL;
	if (headers != NULL)
		values[MSG_INDEX(MSG_HEADERS)] = *headers;
	values[MSG_INDEX(MSG_BODY)] = body;
	if (MSG_HAS(MSG_PRIORITY))
	{
		values[MSG_INDEX(MSG_PRIORITY)] =
			Int16GetDatum((int16) DatumGetInt32(receipt->values[6]));
		nulls[MSG_INDEX(MSG_GROUP_ID)] = receipt->nulls[5];
		values[MSG_INDEX(MSG_GROUP_ID)] = receipt->values[5];
	}
	/* never handed out yet */
	if (MSG_HAS(MSG_FIRST_DEQUEUED_AT))
		nulls[MSG_INDEX(MSG_FIRST_DEQUEUED_AT)] = true;
	ExecStoreVirtualTuple(slot);
}

/* Writes the rows of the stored messages; returns how many. */
static int64
write_rows(const NewMessages *put, MessagesTable *table, const Datum *bodies,
		   const Datum *headers, const bool *header_nulls)
{
	int			nslots = Min(put->count, PUT_ROWS_AT_ONCE);
	TupleTableSlot **slots = palloc(sizeof(TupleTableSlot *) * nslots);
	int			filled = 0;		/* slots holding rows not inserted yet */
	Size		waiting_bytes = 0;	/* their bodies' size */
	int64		written = 0;
	int			i;

	for (i = 0; i < nslots; i++)
		slots[i] = MakeSingleTupleTableSlot(RelationGetDescr(table->rel),
											table_slot_callbacks(table->rel));
	for (i = 0; i < put->count; i++)
	{
		if (!put->stored[i])
			continue;
		fill_row(slots[filled], table, put->queue->queue_id, &put->result[i], bodies[i],
				 headers == NULL || header_nulls[i] ? NULL : &headers[i]);
		written++;
		waiting_bytes += VARSIZE_ANY(DatumGetPointer(bodies[i]));
		if (++filled == PUT_ROWS_AT_ONCE || waiting_bytes >= PUT_BYTES_AT_ONCE)
		{
			insert_rows(table, slots, filled);
			filled = 0;
			waiting_bytes = 0;
		}
	}
	insert_rows(table, slots, filled);
	for (i = 0; i < nslots; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	return written;
}

/*
 * Inserts count messages into an opened queue, with their bodies and their
 * headers (headers NULL: none; header_nulls[i]: none for message i), and
 * returns their receipts in input order.  A message whose
 * deduplication_id a put within the window has already is not stored: its
 * receipt is the first put's.  A put that names no delay takes the queue's,
 * unless one of its messages has a group: a group's messages become
 * visible at their turn.
 */
PutReceipt *
queue_insert_messages(const QueueInfo *queue, const PutTiming *given_timing,
					  const Datum *bodies, const Datum *headers,
					  const bool *header_nulls, const PutOrdering *ordering, int count)
{
	NewMessages put = {queue, ordering, count, queue_writer_now()};
	PutTiming	timing = *given_timing;
	MessagesTable table;
	bool		table_open = false;
	int		   *first_of = NULL;
	bool	   *occupied = NULL;
	QueueCounts counts = {0};

	put.grouped = has_group(&put);
	if (!timing.delay_given && !put.grouped)
		timing.delay = queue->delay;
	set_expiry(&put, &timing);
	if (put.grouped)
		lock_groups(&put, &timing);
	draw_receipts(&put, &timing);
	if (put.grouped)
	{
		queue_messages_open(&table, CMD_INSERT, NULL, 0);
		table_open = true;
		first_of = palloc(sizeof(int) * count);
		occupied = queue_groups_occupied(&table, queue->queue_id,
										 ordering->group_ids, ordering->group_nulls,
										 count, put.now, first_of);
	}
	if (table_open && ordering->deduplication_ids != NULL)
	{
		queue_messages_close(&table);
		table_open = false;
	}
	place(&put, first_of, occupied);
	if (!table_open)
		queue_messages_open(&table, CMD_INSERT, NULL, 0);
	counts.puts = write_rows(&put, &table, bodies, headers, header_nulls);
	queue_messages_close(&table);

	queue_counters_add(queue->queue_id, &counts);
	if (timing.delay == 0 && counts.puts > 0)
		queue_wake_at_commit(queue->queue_id, counts.puts);
	return put.result;
}
