/*-------------------------------------------------------------------------
 *
 * counters.c
 *		The per-queue counters that queue_stats reports.
 *
 * Counts are added in the same transaction as the work they count, so a
 * rolled-back put was never counted.  Each backend writes its own row of
 * queue_storage.counters (its backend id is the shard): two sessions never
 * wait on each other to count.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "miscadmin.h"
#include "storage/backendid.h"

static int32
counter_shard(void)
{
#if PG_VERSION_NUM >= 170000
	return (int32) MyProcNumber;
#else
	return (int32) MyBackendId;
#endif
}

void
queue_counters_add(int32 queue_id, const QueueCounts *counts)
{
	Datum		values[7];

	if (counts->puts == 0 && counts->gets == 0 && counts->deletes == 0 &&
		counts->poisoned == 0 && counts->expired == 0)
		return;

	values[0] = Int32GetDatum(queue_id);
	values[1] = Int32GetDatum(counter_shard());
	values[2] = Int64GetDatum(counts->puts);
	values[3] = Int64GetDatum(counts->gets);
	values[4] = Int64GetDatum(counts->deletes);
	values[5] = Int64GetDatum(counts->poisoned);
	values[6] = Int64GetDatum(counts->expired);
	queue_plan_run(PLAN_COUNTERS_ADD, values, NULL);
}
