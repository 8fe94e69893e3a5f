/*-------------------------------------------------------------------------
 *
 * delete.c
 *		queue_delete: the consumer is done with a message; and deleting
 *		messages by id and receipt, one or many per call (queue_delete_batch).
 *
 * A message is found by id in the primary key and deleted with the table
 * access method (messages_table.c says why), as a DELETE ... WHERE
 * message_id = $1 AND pop_receipt = $2 would: if another transaction is
 * changing it, the delete waits for that one to end; under READ COMMITTED
 * it then looks at the newest version again (a receipt that is no longer
 * the newest is refused), under REPEATABLE READ and SERIALIZABLE it is a
 * serialization failure.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "access/genam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "utils/fmgroids.h"

PG_FUNCTION_INFO_V1(queue_delete);

/* The newest pop receipt of the message in slot is receipt (NULL: none). */
static bool
receipt_matches(TupleTableSlot *slot, const pg_uuid_t *receipt)
{
	bool		isnull;
	Datum		current = slot_getattr(slot, MSG_POP_RECEIPT, &isnull);

	return !isnull && receipt != NULL &&
		memcmp(DatumGetUUIDP(current), receipt, sizeof(pg_uuid_t)) == 0;
}

/*
 * Opens the messages table and its primary key for deleting messages of
 * queue_id that have not expired at now.
 */
void
queue_deleter_begin(MessageDeleter *deleter, int32 queue_id, TimestampTz now)
{
	queue_messages_open(&deleter->table, CMD_DELETE, NULL, 0);
	deleter->index = queue_messages_index(MESSAGES_PKEY);
	deleter->slot = table_slot_create(deleter->table.rel, NULL);
	deleter->scan = queue_index_beginscan(deleter->table.rel, deleter->index,
										  deleter->table.snapshot, 1);
	deleter->queue_id = queue_id;
	deleter->now = now;
}

/*
 * Deletes message_id if receipt (NULL: none given) is its newest and it is
 * alive in the queue; otherwise says why not.  Deleting the same message
 * twice in one call finds it gone the second time.
 */
DeleteOutcome
queue_deleter_delete(MessageDeleter *deleter, int64 message_id,
					 const pg_uuid_t *receipt)
{
	MessagesTable *table = &deleter->table;
	TupleTableSlot *slot = deleter->slot;
	ScanKeyData key;
	ItemPointerData tid;

	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(message_id));
	index_rescan(deleter->scan, &key, 1, NULL, 0);
	if (!index_getnext_slot(deleter->scan, ForwardScanDirection, slot))
		return DELETE_NOT_FOUND;
	tid = slot->tts_tid;

	for (;;)
	{
		TM_FailureData tmfd;
		TM_Result	result;

		if (!queue_message_alive_in(slot, deleter->queue_id, deleter->now))
			return DELETE_NOT_FOUND;
		if (!receipt_matches(slot, receipt))
			return DELETE_RECEIPT_MISMATCH;

		result = queue_table_tuple_delete(table->rel, &tid, table->cid,
										  table->snapshot, &tmfd);
		switch (result)
		{
			case TM_Ok:
				return DELETE_DONE;
			case TM_SelfModified:
				/* deleted earlier in this very call */
				return DELETE_NOT_FOUND;
			case TM_Deleted:
				if (IsolationUsesXactSnapshot())
					queue_messages_serialization_failure();
				return DELETE_NOT_FOUND;
			case TM_Updated:
				if (IsolationUsesXactSnapshot())
					queue_messages_serialization_failure();
				/* updated meanwhile: lock its newest version and look again */
				if (table_tuple_lock(table->rel, &tid, table->snapshot, slot,
									 table->cid, LockTupleExclusive,
									 LockWaitBlock,
									 TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
									 &tmfd) != TM_Ok)
					return DELETE_NOT_FOUND;
				break;
			default:
				elog(ERROR, "queue: unexpected result %d deleting a message",
					 (int) result);
		}
	}
}

void
queue_deleter_end(MessageDeleter *deleter)
{
	index_endscan(deleter->scan);
	index_close(deleter->index, NoLock);
	ExecDropSingleTupleTableSlot(deleter->slot);
	queue_messages_close(&deleter->table);
}

/*
 * queue_delete(queue, message_id, pop_receipt): deletes the message if the
 * receipt is its newest and it has not expired; otherwise QU404 or QU409.
 */
Datum
queue_delete(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		message_id;
	pg_uuid_t  *receipt;
	StorageSession session;
	QueueInfo	queue;
	TimestampTz now;
	MessageDeleter deleter;
	DeleteOutcome outcome;
	QueueCounts counts = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	message_id = PG_GETARG_INT64(1);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	receipt = PG_GETARG_UUID_P(2);

	queue_storage_begin_write(&session, "queue_delete()");
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = GetCurrentTimestamp();

	queue_deleter_begin(&deleter, queue.queue_id, now);
	outcome = queue_deleter_delete(&deleter, message_id, receipt);
	queue_deleter_end(&deleter);
	if (outcome != DELETE_DONE)
		queue_report_refusal(&queue, message_id, receipt, now,
							 (Datum) 0, false, (Datum) 0, false);

	counts.deletes = 1;
	queue_counters_add(queue.queue_id, &counts);

	queue_storage_end(&session);
	PG_RETURN_VOID();
}
