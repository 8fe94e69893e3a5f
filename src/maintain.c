/*-------------------------------------------------------------------------
 *
 * maintain.c
 *		queue_maintain: one sweep of the database.
 *
 * Deletes expired messages and moves poison messages that no get has met,
 * in batches, skipping rows other transactions hold (SKIP LOCKED) and
 * queues that are being dropped, so a sweep never waits on a consumer.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "funcapi.h"

PG_FUNCTION_INFO_V1(queue_maintain);

/* How many messages one statement of the sweep deletes or moves at most. */
#define QUEUE_SWEEP_BATCH	1000

/* Deletes expired messages, counting them per queue; returns how many. */
static int64
sweep_expired(TimestampTz now)
{
	int64		total = 0;

	for (;;)
	{
		Datum		values[2];
		uint64		queues;
		int32	   *queue_ids;
		int64	   *expired;
		int64		batch_total = 0;
		uint64		i;

		values[0] = TimestampTzGetDatum(now);
		values[1] = Int32GetDatum(QUEUE_SWEEP_BATCH);
		queues = queue_plan_run(PLAN_EXPIRE, values, NULL);

		queue_ids = palloc(sizeof(int32) * (queues + 1));
		expired = palloc(sizeof(int64) * (queues + 1));
		for (i = 0; i < queues; i++)
		{
			bool		isnull;

			queue_ids[i] = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i],
													   SPI_tuptable->tupdesc, 1, &isnull));
			expired[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
													 SPI_tuptable->tupdesc, 2, &isnull));
		}
		SPI_freetuptable(SPI_tuptable);

		for (i = 0; i < queues; i++)
		{
			QueueCounts counts = {0};

			counts.expired = expired[i];
			queue_counters_add(queue_ids[i], &counts);
			batch_total += expired[i];
		}
		total += batch_total;

		if (batch_total < QUEUE_SWEEP_BATCH)
			break;
	}
	return total;
}

/* Moves the poison messages of one queue; returns how many. */
static int64
sweep_poison_of(const QueueInfo *queue, TimestampTz now)
{
	int64		total = 0;

	for (;;)
	{
		Datum		values[4];
		bool		isnull;
		Datum		ids;
		SPITupleTable *moved;

		values[0] = Int32GetDatum(queue->queue_id);
		values[1] = TimestampTzGetDatum(now);
		values[2] = Int32GetDatum(queue->max_dequeue_count);
		values[3] = Int32GetDatum(QUEUE_SWEEP_BATCH);
		queue_plan_run(PLAN_POISON_CANDIDATES, values, NULL);
		ids = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			break;

		moved = queue_move_to_poison(queue, ids, now);
		total += (int64) moved->numvals;
		if (moved->numvals < QUEUE_SWEEP_BATCH)
			break;
	}
	return total;
}

/* Moves the poison messages of every queue that routes them. */
static int64
sweep_poison(TimestampTz now)
{
	uint64		count = queue_plan_run(PLAN_QUEUE_POISONING, NULL, NULL);
	QueueInfo  *queues = palloc(sizeof(QueueInfo) * (count + 1));
	int64		total = 0;
	uint64		i;

	for (i = 0; i < count; i++)
		queue_info_from_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, &queues[i]);
	SPI_freetuptable(SPI_tuptable);

	for (i = 0; i < count; i++)
	{
		/* A queue being dropped is skipped: its messages go with it. */
		if (!queue_try_lock(queues[i].queue_id, AccessShareLock))
			continue;
		total += sweep_poison_of(&queues[i], now);
	}
	return total;
}

/* queue_maintain(): returns one row (expired, poisoned). */
Datum
queue_maintain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StorageSession session;
	TimestampTz now;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin(&session);
	now = GetCurrentTimestamp();

	values[0] = Int64GetDatum(sweep_expired(now));
	values[1] = Int64GetDatum(sweep_poison(now));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	queue_storage_end(&session);
	return (Datum) 0;
}
