/*-------------------------------------------------------------------------
 *
 * sweep.c
 *		The sweep: deleting expired messages, moving poison messages.
 *
 * The work is cut into batches of queue.maintenance_batch_size messages,
 * each one statement that skips rows other transactions hold (SKIP
 * LOCKED), so a sweep never waits on a consumer.  queue_maintain() runs all
 * batches in the caller's transaction; the background worker (worker.c)
 * runs each batch in a transaction of its own, so that no backlog ever
 * makes one long transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "storage/storage.h"
#include "wait/wait.h"
#include "worker/worker.h"

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/tuplestore.h"

/*
 * Deletes one batch of expired messages, oldest expiry first, and counts
 * them per queue.  Returns how many it deleted.
 */
int64
queue_expire_batch(TimestampTz now, int batch_size)
{
	PlanArgs	args;
	uint64		queues;
	int32	   *queue_ids;
	int64	   *expired;
	GroupsLeft *left;
	int64		total = 0;
	uint64		i;

	queue_plan_begin(&args, queue_storage_has_ordering() ?
					 PLAN_EXPIRE_ORDERING : PLAN_EXPIRE);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	queues = queue_plan_run(&args);

	/* Copy the counts out: counting runs statements of its own. */
	queue_ids = palloc(sizeof(int32) * (queues + 1));
	expired = palloc(sizeof(int64) * (queues + 1));
	left = palloc0(sizeof(GroupsLeft) * (queues + 1));
	for (i = 0; i < queues; i++)
	{
		bool		isnull;
		Datum		group_ids;

		queue_ids[i] = DatumGetInt32(queue_row_value(SPI_tuptable, i, "queue_id", &isnull));
		expired[i] = DatumGetInt64(queue_row_value(SPI_tuptable, i, "expired", &isnull));
		if (queue_storage_has_ordering())
		{
			group_ids = queue_row_value(SPI_tuptable, i, "group_ids", &isnull);
			if (!isnull)
				queue_groups_note_array(&left[i], group_ids);
		}
	}
	SPI_freetuptable(SPI_tuptable);

	/* the next message of a group whose first one expired: its turn */
	for (i = 0; i < queues; i++)
		queue_groups_advance(queue_ids[i], &left[i], now);

	for (i = 0; i < queues; i++)
	{
		QueueCounts counts = {0};

		counts.expired = expired[i];
		queue_counters_add(queue_ids[i], &counts);
		total += expired[i];
	}
	return total;
}

/* Is the session (pid, start) still there? */
static bool
session_alive(int pid, TimestampTz start)
{
	int			count = pgstat_fetch_stat_numbackends();
	int			i;

	for (i = 1; i <= count; i++)
	{
		LocalPgBackendStatus *entry = queue_local_beentry(i);

		if (entry != NULL && entry->backendStatus.st_procpid == pid &&
			entry->backendStatus.st_proc_start_timestamp == start)
			return true;
	}
	return false;
}

/*
 * Makes visible again the messages leased with release_on_disconnect whose
 * holder's session has ended (dequeue_count stays), and wakes getters
 * waiting on their queues.  Returns how many.  Takes no lock on a lease
 * whose session is alive.
 */
int64
queue_release_orphans(TimestampTz now)
{
	int64		after = 0;
	int64		released = 0;
	uint64		held;

	pgstat_clear_backend_activity_snapshot();
	do
	{
		PlanArgs	args;
		Datum	   *ids;
		Datum	   *pids;
		Datum	   *starts;
		int			dead = 0;
		uint64		i;

		queue_plan_begin(&args, PLAN_HELD_LEASES);
		queue_plan_set(&args, "now", TimestampTzGetDatum(now));
		queue_plan_set(&args, "after_id", Int64GetDatum(after));
		queue_plan_set(&args, "max_messages", Int32GetDatum(queue_maintenance_batch_size));
		held = queue_plan_run(&args);

		ids = palloc(sizeof(Datum) * (held + 1));
		pids = palloc(sizeof(Datum) * (held + 1));
		starts = palloc(sizeof(Datum) * (held + 1));
		for (i = 0; i < held; i++)
		{
			bool		isnull;
			Datum		id = queue_row_value(SPI_tuptable, i, "message_id", &isnull);
			Datum		pid = queue_row_value(SPI_tuptable, i, "holder_pid", &isnull);
			Datum		start = queue_row_value(SPI_tuptable, i, "holder_start", &isnull);

			after = DatumGetInt64(id);
			if (session_alive(DatumGetInt32(pid), DatumGetTimestampTz(start)))
				continue;
			ids[dead] = id;
			pids[dead] = pid;
			starts[dead] = start;
			dead++;
		}
		SPI_freetuptable(SPI_tuptable);
		if (dead == 0)
			continue;

		queue_plan_begin(&args, PLAN_RELEASE_ORPHANS);
		queue_plan_set(&args, "message_ids", queue_message_id_array(ids, dead));
		queue_plan_set(&args, "pids",
					   PointerGetDatum(construct_array(pids, dead, INT4OID, sizeof(int32),
													   true, TYPALIGN_INT)));
		queue_plan_set(&args, "starts",
					   PointerGetDatum(construct_array(starts, dead, TIMESTAMPTZOID,
													   sizeof(TimestampTz), FLOAT8PASSBYVAL,
													   TYPALIGN_DOUBLE)));
		queue_plan_set(&args, "now", TimestampTzGetDatum(now));
		released += (int64) queue_plan_run(&args);
		queue_wake_returned_queues();
		SPI_freetuptable(SPI_tuptable);
	} while (held == (uint64) queue_maintenance_batch_size);

	return released;
}

/*
 * The queues that route poison messages, as an array allocated in context;
 * returns how many.  (The context is the caller's to name: after a
 * statement, SPI leaves CurrentMemoryContext at its own procedure context,
 * which the end of the storage session frees.  The worker's list, which it
 * reads after the session ended, was once allocated there.)
 */
int
queue_poisoning_queues(QueueInfo **queues, MemoryContext context)
{
	PlanArgs	args;
	uint64		count;
	uint64		i;

	queue_plan_begin(&args, PLAN_QUEUE_POISONING);
	count = queue_plan_run(&args);
	*queues = MemoryContextAlloc(context, sizeof(QueueInfo) * (count + 1));
	for (i = 0; i < count; i++)
		queue_info_from_row(SPI_tuptable, i, &(*queues)[i]);
	SPI_freetuptable(SPI_tuptable);
	return (int) count;
}

/*
 * Moves one batch of the poison messages of one queue.  Returns how many it
 * moved, or -1 if the queue is being dropped (its messages go with it).
 */
int64
queue_poison_batch(const QueueInfo *queue, TimestampTz now, int batch_size)
{
	PlanArgs	args;
	int32		limit = queue_dequeue_limit(queue);
	int64	   *ids;
	uint64		count;
	uint64		i;

	if (limit == 0)
		return 0;				/* it routes no poison (any more) */
	if (!queue_try_lock(queue->queue_id, AccessShareLock))
		return -1;

	queue_plan_begin(&args, PLAN_POISON_CANDIDATES);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "dequeue_limit", Int32GetDatum(limit));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	count = queue_plan_run(&args);
	ids = palloc(sizeof(int64) * (count + 1));
	for (i = 0; i < count; i++)
	{
		bool		isnull;

		ids[i] = DatumGetInt64(queue_row_value(SPI_tuptable, i, "message_id", &isnull));
	}
	return queue_move_to_poison(queue, ids, (int) count, now);
}
