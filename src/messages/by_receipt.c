/*-------------------------------------------------------------------------
 *
 * by_receipt.c
 *		Acting on a message by its id and pop receipt: delete or update.
 *
 * What queue_delete, queue_update and their batches do to one message.  It
 * is found by id in the primary key and changed with the table access
 * method (table.c says why), as a DELETE or UPDATE ... WHERE message_id =
 * $1 AND pop_receipt = $2 would: if another transaction is changing it, the
 * call waits for that one to end; under READ COMMITTED it then looks at the
 * newest version again (a receipt that is no longer the newest is
 * refused), under REPEATABLE READ and SERIALIZABLE that is a serialization
 * failure.  The rules it asks (alive, receipt, size, poison limit) are
 * those of rules.h.  A delete of a queue with a retention keeps what it
 * deleted (retained.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "messages/rules.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/executor.h"

/* The columns an update may change: its own, and a move to poison's. */
static const int changed_columns[] = {
	MSG_QUEUE_ID, MSG_VISIBLE_AT, MSG_EXPIRES_AT, MSG_LAST_LEASE,
	MSG_POP_RECEIPT, MSG_SOURCE_QUEUE, MSG_HOLDER_PID, MSG_HOLDER_START,
	MSG_HEADERS, MSG_BODY
};

/* The status column of the batch functions, for each outcome. */
const char *const queue_held_status[] = {
	[HELD_DONE] = NULL,			/* the caller's word: deleted, updated */
	[HELD_NOT_FOUND] = "not_found",
	[HELD_RECEIPT_MISMATCH] = "pop_receipt_mismatch",
	[HELD_TOO_LARGE] = NULL		/* batches change no body */
};

/*
 * Opens the messages table and its primary key for deleting (cmd
 * CMD_DELETE) or updating (CMD_UPDATE) messages of queue at now.
 */
void
queue_held_begin(HeldMessages *held, const QueueInfo *queue, CmdType cmd,
				 TimestampTz now)
{
	Assert(cmd == CMD_DELETE || cmd == CMD_UPDATE);
	if (cmd == CMD_DELETE)
		queue_messages_open(&held->table, cmd, NULL, 0);
	else
		queue_messages_open(&held->table, cmd, changed_columns,
							lengthof(changed_columns));
	held->index = queue_messages_index(MESSAGES_PKEY);
	held->slot = table_slot_create(held->table.rel, NULL);
	held->new_version = cmd == CMD_UPDATE ?
		MakeSingleTupleTableSlot(RelationGetDescr(held->table.rel), &TTSOpsVirtual) :
		NULL;
	held->scan = queue_index_beginscan(held->table.rel, held->index,
									   held->table.snapshot, 1);
	held->queue = queue;
	held->now = now;
	held->size = 0;
	memset(&held->left, 0, sizeof(held->left));
	memset(&held->retained, 0, sizeof(held->retained));
}

void
queue_held_end(HeldMessages *held)
{
	index_endscan(held->scan);
	index_close(held->index, NoLock);
	if (held->new_version != NULL)
		ExecDropSingleTupleTableSlot(held->new_version);
	ExecDropSingleTupleTableSlot(held->slot);
	queue_retained_close(&held->retained);
	queue_messages_close(&held->table);
	/* a message deleted or moved to poison: the next of its group's turn */
	queue_groups_advance(held->queue->queue_id, &held->left, held->now);
}

/* May the version in held->slot be acted on with receipt? */
static HeldOutcome
check_held(HeldMessages *held, const pg_uuid_t *receipt)
{
	if (!queue_message_alive_in(held->slot, held->queue->queue_id, held->now))
		return HELD_NOT_FOUND;
	if (!queue_receipt_matches(held->slot, receipt))
		return HELD_RECEIPT_MISMATCH;
	return HELD_DONE;
}

/*
 * What a delete or update that met result on the version at tid does next:
 * HELD_DONE to look at the newest version again (now in held->slot), or
 * the outcome.
 */
static HeldOutcome
after_conflict(HeldMessages *held, ItemPointer tid, TM_Result result)
{
	TM_FailureData tmfd;

	switch (result)
	{
		case TM_SelfModified:
			/* changed earlier in this very call */
			return HELD_NOT_FOUND;
		case TM_Deleted:
			if (IsolationUsesXactSnapshot())
				queue_messages_serialization_failure();
			return HELD_NOT_FOUND;
		case TM_Updated:
			if (IsolationUsesXactSnapshot())
				queue_messages_serialization_failure();
			/* changed meanwhile: lock its newest version and look again */
			if (table_tuple_lock(held->table.rel, tid, held->table.snapshot,
								 held->slot, held->table.cid,
								 LockTupleExclusive, LockWaitBlock,
								 TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
								 &tmfd) != TM_Ok)
				return HELD_NOT_FOUND;
			return HELD_DONE;
		default:
			elog(ERROR, "queue: unexpected result %d changing a message",
				 (int) result);
	}
	return HELD_NOT_FOUND;
}

/*
 * The updated version of the message in held->slot, into held->new_version:
 * visible at change->visible_at or, released as failed, after its retry
 * delay (never past its expiry), the new receipt, the new body and headers
 * if given.  Released (visible now, or as failed) at the poison limit, it
 * goes to the poison queue instead.  Returns HELD_TOO_LARGE when
 * a new body or headers do not fit (held->size says how large).
 */
static HeldOutcome
updated_version(HeldMessages *held, const MessageChange *change, bool *poisoned)
{
	TupleTableSlot *slot = held->new_version;
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;
	int32		dequeue_count;
	TimestampTz visible_at;

	queue_messages_copy_version(slot, held->slot);

	if (change->has_body)
		values[MSG_INDEX(MSG_BODY)] = change->body;
	if (change->has_headers)
	{
		values[MSG_INDEX(MSG_HEADERS)] = change->headers;
		isnull[MSG_INDEX(MSG_HEADERS)] = false;
	}
	if (change->has_body || change->has_headers)
	{
		held->size = queue_message_size(values[MSG_INDEX(MSG_BODY)],
										values[MSG_INDEX(MSG_HEADERS)],
										!isnull[MSG_INDEX(MSG_HEADERS)]);
		if (queue_too_large(held->queue, held->size))
			return HELD_TOO_LARGE;
	}

	dequeue_count = DatumGetInt32(values[MSG_INDEX(MSG_DEQUEUE_COUNT)]);
	visible_at = change->release ?
		held->now + queue_retry_delay(held->queue, dequeue_count) : change->visible_at;
	*poisoned = (change->release || visible_at <= held->now) &&
		queue_at_dequeue_limit(held->queue, dequeue_count);
	if (*poisoned)
		queue_poison_version(values, isnull, held->queue, held->now);
	else
	{
		/* a message waiting for its group's turn keeps waiting */
		if (!queue_message_waiting(held->slot))
		{
			if (isnull[MSG_INDEX(MSG_EXPIRES_AT)] ||
				DatumGetTimestampTz(values[MSG_INDEX(MSG_EXPIRES_AT)]) > visible_at)
				values[MSG_INDEX(MSG_VISIBLE_AT)] = TimestampTzGetDatum(visible_at);
			else
				values[MSG_INDEX(MSG_VISIBLE_AT)] = values[MSG_INDEX(MSG_EXPIRES_AT)];
		}
		values[MSG_INDEX(MSG_POP_RECEIPT)] = UUIDPGetDatum(change->receipt);
		isnull[MSG_INDEX(MSG_POP_RECEIPT)] = false;
		/* given back, it is no longer held: its session's end must not end its delay */
		if (change->release)
		{
			isnull[MSG_INDEX(MSG_HOLDER_PID)] = true;
			isnull[MSG_INDEX(MSG_HOLDER_START)] = true;
		}
	}
	ExecStoreVirtualTuple(slot);
	return HELD_DONE;
}

/*
 * Deletes message_id (change NULL) or updates it as change says, if
 * receipt (NULL: none given) is its newest and it is alive in the queue;
 * otherwise says why not.  *poisoned says whether an update sent it to the
 * poison queue.
 */
static HeldOutcome
change_held(HeldMessages *held, int64 message_id, const pg_uuid_t *receipt,
			const MessageChange *change, bool *poisoned)
{
	ItemPointerData tid;

	*poisoned = false;
	if (!queue_messages_find(held->scan, message_id, held->slot))
		return HELD_NOT_FOUND;
	tid = held->slot->tts_tid;

	for (;;)
	{
		TM_FailureData tmfd;
		TM_Result	result;
		LockTupleMode lockmode;
		QueueIndexUpdate update_indexes;
		HeldOutcome outcome = check_held(held, receipt);

		if (outcome == HELD_DONE && change != NULL)
			outcome = updated_version(held, change, poisoned);
		if (outcome != HELD_DONE)
			return outcome;
		if (change == NULL)
			result = queue_table_tuple_delete(held->table.rel, &tid, held->table.cid,
											  held->table.snapshot, &tmfd);
		else
			result = queue_table_tuple_update(held->table.rel, &tid, held->new_version,
											  held->table.cid, held->table.snapshot,
											  &tmfd, &lockmode, &update_indexes);
		if (result == TM_Ok)
		{
			if (change == NULL && held->queue->retention > 0)
				queue_retained_keep(&held->retained, held->slot, held->now,
									held->table.cid);
			if (change == NULL || *poisoned)
				queue_groups_note_leaving(&held->left, held->slot);
			if (change != NULL && QUEUE_NEEDS_INDEX_ENTRIES(update_indexes))
				queue_messages_add_index_entries(&held->table, held->new_version, true,
												 QUEUE_ONLY_SUMMARIZING(update_indexes));
			return HELD_DONE;
		}
		outcome = after_conflict(held, &tid, result);
		if (outcome != HELD_DONE)
			return outcome;
	}
}

/*
 * Deletes message_id if receipt (NULL: none given) is its newest and it is
 * alive in the queue; otherwise says why not.  Deleting the same message
 * twice in one call finds it gone the second time.
 */
HeldOutcome
queue_held_delete(HeldMessages *held, int64 message_id, const pg_uuid_t *receipt)
{
	bool		poisoned;

	return change_held(held, message_id, receipt, NULL, &poisoned);
}

/*
 * Updates message_id as change says if receipt is its newest and it is
 * alive in the queue; otherwise says why not.  Done, held->new_version
 * holds the new version and *poisoned says whether it went to the poison
 * queue.  dequeue_count and the lease's holder stay as they were.
 */
HeldOutcome
queue_held_update(HeldMessages *held, int64 message_id, const pg_uuid_t *receipt,
				  const MessageChange *change, bool *poisoned)
{
	return change_held(held, message_id, receipt, change, poisoned);
}

/*
 * Raises the error of an outcome other than HELD_DONE for message_id:
 * QU404 when the message is not in the queue (never was, deleted, expired,
 * moved to the poison queue), QU409 when the receipt is not its newest,
 * 54000 when a new body or headers would not fit.
 */
void
queue_held_report(const HeldMessages *held, int64 message_id, HeldOutcome outcome)
{
	const QueueInfo *queue = held->queue;

	switch (outcome)
	{
		case HELD_NOT_FOUND:
			ereport(ERROR,
					(errcode(ERRCODE_QUEUE_MESSAGE_NOT_FOUND),
					 errmsg("message %lld not found in queue \"%s\"",
							(long long) message_id, queue->name),
					 errdetail("It was deleted, it expired, it was moved to the poison queue, or it never existed.")));
			break;
		case HELD_RECEIPT_MISMATCH:
			ereport(ERROR,
					(errcode(ERRCODE_QUEUE_RECEIPT_MISMATCH),
					 errmsg("pop receipt does not match for message %lld in queue \"%s\"",
							(long long) message_id, queue->name),
					 errhint("The message was got or updated again since this receipt was issued; only the newest pop receipt works.")));
			break;
		case HELD_TOO_LARGE:
			queue_report_too_large(queue, held->size, 0);
			break;
		case HELD_DONE:
			break;
	}
	elog(ERROR, "queue: no error to report for message %lld", (long long) message_id);
}
