/*-------------------------------------------------------------------------
 *
 * census.c
 *		The census: each queue's messages counted by state, for
 *		queue_metrics.
 *
 * A scrape that counted the messages itself would read every message of
 * every queue each time it runs.  Instead the background worker counts
 * them every queue.metrics_interval into queue_storage.census, and only
 * while someone reads queue_metrics (within the last 10 minutes, noted in
 * shared memory): a database nobody watches pays nothing.  queue_maintain
 * takes one too, when one is wanted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "worker/worker.h"

#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/timestamp.h"

/* A census is wanted while queue_metrics was read this recently. */
#define CENSUS_READ_WINDOW_MS	(10 * 60 * 1000)

/*
 * field4 of the advisory lock a census holds until its transaction ends:
 * a second census meanwhile (the worker's, a queue_maintain) is skipped
 * rather than waiting, or writing counts older than the first one's.
 */
#define CENSUS_LOCK_SPACE		0x5144

/* When this worker last took a census. */
static TimestampTz last_census = 0;

/* Has this storage the census table (version 1.4 on)? */
bool
queue_storage_has_census(void)
{
	return OidIsValid(queue_storage_relid("census"));
}

/*
 * Does anyone read queue_metrics in this database?  Yes if it was read
 * within the window; and always without the preload, where nothing keeps
 * track and queue_maintain is the only one to take censuses.
 */
bool
queue_census_wanted(void)
{
	bool		tracked;
	TimestampTz read_at = queue_registry_metrics_read_at(MyDatabaseId, &tracked);
	long		window_ms = Max(CENSUS_READ_WINDOW_MS, 10L * queue_metrics_interval * 1000);

	if (!tracked)
		return true;
	return read_at != 0 &&
		!TimestampDifferenceExceeds(read_at, GetCurrentTimestamp(), window_ms);
}

/*
 * Is a census due in the worker's database?  Yes once queue.metrics_interval
 * has passed since the last one, if one is wanted.
 */
bool
queue_census_due(void)
{
	if (queue_metrics_interval <= 0 || !queue_census_wanted())
		return false;
	return last_census == 0 ||
		TimestampDifferenceExceeds(last_census, GetCurrentTimestamp(),
								   queue_metrics_interval * 1000);
}

/*
 * Counts every queue's messages now and writes the counts that changed
 * (the caller runs it in a transaction with storage access); nothing if a
 * census of another transaction is still running or uncommitted.
 */
void
queue_census_take(void)
{
	LOCKTAG		tag;
	PlanArgs	args;

	if (!queue_storage_has_census())
		return;
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, 0, CENSUS_LOCK_SPACE);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		return;
	last_census = GetCurrentTimestamp();
	queue_plan_begin(&args, PLAN_CENSUS);
	queue_plan_set(&args, "now", TimestampTzGetDatum(last_census));
	queue_plan_run(&args);
}
