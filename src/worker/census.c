/*-------------------------------------------------------------------------
 *
 * census.c
 *		The census: each queue's messages counted by state, for
 *		queue_metrics.
 *
 * A scrape that counted the messages itself would read every message of
 * every queue each time it runs.  Instead the background worker counts
 * them every queue.metrics_interval into queue_storage.census, and only
 * while someone reads queue_metrics (within the last few intervals, noted
 * in shared memory): a database nobody watches pays nothing.  queue_maintain
 * takes one too.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "shmem/shmem.h"
#include "storage/storage.h"
#include "worker/worker.h"

#include "miscadmin.h"
#include "utils/timestamp.h"

/* A census is due while queue_metrics was read this recently. */
#define CENSUS_READ_WINDOW_MS	(10 * 60 * 1000)

/* When this worker last took a census. */
static TimestampTz last_census = 0;

/* Has this storage the census table (version 1.4 on)? */
bool
queue_storage_has_census(void)
{
	return OidIsValid(queue_storage_relid("census"));
}

/*
 * Is a census due in this database?  Yes once queue.metrics_interval has
 * passed since the last one, if queue_metrics was read in the window.
 */
bool
queue_census_due(void)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz read_at = queue_registry_metrics_read_at(MyDatabaseId);
	long		window_ms = Max(CENSUS_READ_WINDOW_MS, 10L * queue_metrics_interval * 1000);

	if (queue_metrics_interval <= 0 || read_at == 0)
		return false;
	if (TimestampDifferenceExceeds(read_at, now, window_ms))
		return false;
	return last_census == 0 ||
		TimestampDifferenceExceeds(last_census, now, queue_metrics_interval * 1000);
}

/*
 * Counts every queue's messages now and writes the counts that changed
 * (the caller runs it in a transaction with storage access).
 */
void
queue_census_take(void)
{
	PlanArgs	args;

	if (!queue_storage_has_census())
		return;
	last_census = GetCurrentTimestamp();
	queue_plan_begin(&args, PLAN_CENSUS);
	queue_plan_set(&args, "now", TimestampTzGetDatum(last_census));
	queue_plan_run(&args);
}
