/*-------------------------------------------------------------------------
 *
 * sweep.c
 *		The sweep: deleting expired messages, moving poison messages,
 *		removing retained messages past their retention.
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
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"
#include "worker/worker.h"

#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/backend_status.h"
#include "utils/tuplestore.h"

/* Starts an empty list of the messages a sweep passes over. */
void
queue_sweep_passed_over_init(SweepPassedOver *passed_over, MemoryContext context)
{
	memset(passed_over, 0, sizeof(*passed_over));
	passed_over->context = context;
}

/*
 * Did the last batch, which did done (-1: the queue is being dropped), come
 * full?  The messages it passed over count as looked at: a batch that
 * comes short was the last.
 */
bool
queue_sweep_batch_full(const SweepPassedOver *passed_over, int64 done, int batch_size)
{
	return done >= 0 &&
		done + passed_over->count - passed_over->batch_start == batch_size;
}

/* Adds message_id to the messages the sweep passes over. */
static void
pass_over(SweepPassedOver *passed_over, int64 message_id)
{
	if (passed_over->count == passed_over->size)
	{
		passed_over->size = Max(16, passed_over->size * 2);
		passed_over->ids = passed_over->ids == NULL ?
			MemoryContextAlloc(passed_over->context, sizeof(Datum) * passed_over->size) :
			repalloc(passed_over->ids, sizeof(Datum) * passed_over->size);
	}
	passed_over->ids[passed_over->count++] = Int64GetDatum(message_id);
}

/* The statement's parameter passed_over: the messages not to look at. */
static void
set_passed_over(PlanArgs *args, const SweepPassedOver *passed_over)
{
	queue_plan_set(args, "passed_over",
				   queue_message_id_array(passed_over->ids, passed_over->count));
}

/*
 * The groups of the messages whose counts per queue the statement just run
 * returned (queue_id, expired and, from 1.3 on, group_ids): each group's
 * next message gets its turn, and the counts are added.  Returns how many
 * expired.
 */
static int64
count_expired(uint64 queues, TimestampTz now)
{
	int32	   *queue_ids = palloc(sizeof(int32) * (queues + 1));
	int64	   *expired = palloc(sizeof(int64) * (queues + 1));
	GroupsLeft *left = palloc0(sizeof(GroupsLeft) * (queues + 1));
	int64		total = 0;
	uint64		i;

	/* Copy the counts out: counting runs statements of its own. */
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

/*
 * Deletes one batch of expired messages, oldest expiry first, and counts
 * them per queue.  A message whose group's lock a transaction holds (a put
 * into the group in progress) is passed over: the hand-on of its group's
 * turn would have to wait for that transaction, for as long as it stays
 * open.  Returns how many it deleted (queue_sweep_batch_full says whether
 * the batch came full).
 */
int64
queue_expire_batch(TimestampTz now, int batch_size, SweepPassedOver *passed_over)
{
	PlanArgs	args;
	uint64		found;
	Datum	   *ids;
	int			kept = 0;
	uint64		i;

	passed_over->batch_start = passed_over->count;
	if (!queue_storage_has_ordering())
	{
		queue_plan_begin(&args, PLAN_EXPIRE);
		queue_plan_set(&args, "now", TimestampTzGetDatum(now));
		queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
		return count_expired(queue_plan_run(&args), now);
	}

	queue_plan_begin(&args, PLAN_EXPIRE_CANDIDATES);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	set_passed_over(&args, passed_over);
	found = queue_plan_run(&args);
	ids = palloc(sizeof(Datum) * (found + 1));
	for (i = 0; i < found; i++)
	{
		bool		isnull;
		Datum		id = queue_row_value(SPI_tuptable, i, "message_id", &isnull);
		Datum		queue_id = queue_row_value(SPI_tuptable, i, "queue_id", &isnull);
		Datum		group_id = queue_row_value(SPI_tuptable, i, "group_id", &isnull);

		/* held until the transaction ends: the advance takes it again */
		if (!isnull && !queue_id_lock_try(DatumGetInt32(queue_id), QUEUE_LOCK_GROUP,
										  group_id))
			pass_over(passed_over, DatumGetInt64(id));
		else
			ids[kept++] = id;
	}
	SPI_freetuptable(SPI_tuptable);
	if (kept == 0)
		return 0;

	queue_plan_begin(&args, PLAN_EXPIRE_ORDERING);
	queue_plan_set(&args, "message_ids", queue_message_id_array(ids, kept));
	return count_expired(queue_plan_run(&args), now);
}

/*
 * Removes one batch of the retained messages kept past their queue's
 * retention (1.9), each queue's oldest first; returns how many.
 */
int64
queue_retained_remove(TimestampTz now, int batch_size)
{
	PlanArgs	args;
	bool		isnull;

	if (!queue_storage_has_retention())
		return 0;
	queue_plan_begin(&args, PLAN_RETAINED_REMOVE);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	queue_plan_run(&args);
	return DatumGetInt64(queue_row_value(SPI_tuptable, 0, "removed", &isnull));
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
 * Moves one batch of the poison messages of one queue, passing over those
 * whose group's lock a transaction holds (as queue_expire_batch does).
 * Returns how many it moved, or -1 if the queue is being dropped (its
 * messages go with it).
 */
int64
queue_poison_batch(const QueueInfo *queue, TimestampTz now, int batch_size,
				   SweepPassedOver *passed_over)
{
	PlanArgs	args;
	int32		limit = queue_dequeue_limit(queue);
	int64	   *ids;
	bool	   *group_busy;
	int64		moved;
	uint64		count;
	uint64		i;

	passed_over->batch_start = passed_over->count;
	if (limit == 0)
		return 0;				/* it routes no poison (any more) */
	if (!queue_try_lock(queue->queue_id, AccessShareLock))
		return -1;

	queue_plan_begin(&args, PLAN_POISON_CANDIDATES);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue->queue_id));
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "dequeue_limit", Int32GetDatum(limit));
	queue_plan_set(&args, "max_messages", Int32GetDatum(batch_size));
	set_passed_over(&args, passed_over);
	count = queue_plan_run(&args);
	ids = palloc(sizeof(int64) * (count + 1));
	for (i = 0; i < count; i++)
	{
		bool		isnull;

		ids[i] = DatumGetInt64(queue_row_value(SPI_tuptable, i, "message_id", &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	group_busy = palloc0(sizeof(bool) * (count + 1));
	moved = queue_move_to_poison(queue, ids, (int) count, now, group_busy);
	for (i = 0; i < count; i++)
		if (group_busy[i])
			pass_over(passed_over, ids[i]);
	return moved;
}
