/*-------------------------------------------------------------------------
 *
 * delete.c
 *		queue_delete: the consumer is done with a message.
 *
 * The message is found by id in the primary key and deleted with the table
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

/*
 * The message in slot may be deleted with this receipt now: in the queue,
 * the receipt its newest, not expired.
 */
static bool
deletable(TupleTableSlot *slot, int32 queue_id, const pg_uuid_t *receipt,
		  TimestampTz now)
{
	bool		isnull;
	Datum		current;

	if (!queue_message_alive_in(slot, queue_id, now))
		return false;
	current = slot_getattr(slot, MSG_POP_RECEIPT, &isnull);
	return !isnull &&
		memcmp(DatumGetUUIDP(current), receipt, sizeof(pg_uuid_t)) == 0;
}

/* Deletes the message if it is deletable; says whether it did. */
static bool
delete_message(const QueueInfo *queue, int64 message_id,
			   const pg_uuid_t *receipt, TimestampTz now)
{
	MessagesTable table;
	Relation	index;
	IndexScanDesc scan;
	ScanKeyData key;
	TupleTableSlot *slot;
	bool		deleted = false;

	queue_messages_open(&table, CMD_DELETE, NULL, 0);
	index = queue_messages_index(MESSAGES_PKEY);
	slot = table_slot_create(table.rel, NULL);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(message_id));
	scan = index_beginscan(table.rel, index, table.snapshot, 1, 0);
	index_rescan(scan, &key, 1, NULL, 0);

	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		ItemPointerData tid = slot->tts_tid;

		while (deletable(slot, queue->queue_id, receipt, now))
		{
			TM_FailureData tmfd;
			TM_Result	result;

			result = table_tuple_delete(table.rel, &tid, table.cid,
										table.snapshot, InvalidSnapshot,
										true, &tmfd, false);
			if (result == TM_Ok)
			{
				deleted = true;
				break;
			}
			if (result != TM_Updated && result != TM_Deleted)
				break;			/* changed by this very call: cannot happen */
			if (IsolationUsesXactSnapshot())
				queue_messages_serialization_failure();
			if (result == TM_Deleted)
				break;

			/* updated meanwhile: lock its newest version and look again */
			if (table_tuple_lock(table.rel, &tid, table.snapshot, slot,
								 table.cid, LockTupleExclusive, LockWaitBlock,
								 TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
								 &tmfd) != TM_Ok)
				break;
		}
	}

	index_endscan(scan);
	index_close(index, NoLock);
	ExecDropSingleTupleTableSlot(slot);
	queue_messages_close(&table);
	return deleted;
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
	QueueCounts counts = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	message_id = PG_GETARG_INT64(1);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	receipt = PG_GETARG_UUID_P(2);

	queue_storage_begin(&session);
	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	now = GetCurrentTimestamp();

	if (!delete_message(&queue, message_id, receipt, now))
		queue_report_refusal(&queue, message_id, receipt, now,
							 (Datum) 0, false, (Datum) 0, false);

	counts.deletes = 1;
	queue_counters_add(queue.queue_id, &counts);

	queue_storage_end(&session);
	PG_RETURN_VOID();
}
