/*-------------------------------------------------------------------------
 *
 * maintain.c
 *		queue_maintain: one sweep now, in the caller's transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "schedules/schedules.h"
#include "worker/worker.h"

#include "funcapi.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_maintain);

/* queue_maintain(): one sweep in the caller's transaction; one row. */
Datum
queue_maintain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	StorageSession session;
	TimestampTz now;
	QueueInfo  *queues;
	int			count;
	int			i;
	int64		batch;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	int64		expired = 0;
	int64		poisoned = 0;
	SweepPassedOver passed_over;

	InitMaterializedSRF(fcinfo, 0);
	queue_storage_begin_write(&session, "queue_maintain()");
	queue_require_permission(0, "*", QUEUE_PERM_MANAGE);
	now = queue_writer_now();

	while (queue_put_due(now, queue_maintenance_batch_size) == queue_maintenance_batch_size)
		;

	queue_sweep_passed_over_init(&passed_over, CurrentMemoryContext);
	do
	{
		batch = queue_expire_batch(now, queue_maintenance_batch_size, &passed_over);
		expired += batch;
	} while (queue_sweep_batch_full(&passed_over, batch, queue_maintenance_batch_size));

	while (queue_deduplication_forget(now, queue_maintenance_batch_size) ==
		   queue_maintenance_batch_size)
		;
	while (queue_retained_remove(now, queue_maintenance_batch_size) ==
		   queue_maintenance_batch_size)
		;
	(void) queue_release_orphans(now);

	count = queue_poisoning_queues(&queues, CurrentMemoryContext);
	for (i = 0; i < count; i++)
	{
		queue_sweep_passed_over_init(&passed_over, CurrentMemoryContext);
		do
		{
			batch = queue_poison_batch(&queues[i], now, queue_maintenance_batch_size,
									   &passed_over);
			if (batch > 0)
				poisoned += batch;
		} while (queue_sweep_batch_full(&passed_over, batch, queue_maintenance_batch_size));
	}

	queue_counters_sweep();
	if (queue_census_wanted())
		queue_census_take();

	values[0] = Int64GetDatum(expired);
	values[1] = Int64GetDatum(poisoned);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);

	queue_storage_end(&session);
	return (Datum) 0;
}
