/*-------------------------------------------------------------------------
 *
 * pause.c
 *		queue_pause and queue_resume.
 *
 * A paused queue hands nothing out: every get of it finds nothing (get.c
 * asks), and a get that waits waits on.  Everything else goes on: puts,
 * peeks, updates, releases, deletes, expiry and poison routing.  The pause
 * is a setting of the queue, so it is seen by every session once it
 * commits, and kept by pg_dump and across restarts and failovers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

PG_FUNCTION_INFO_V1(queue_pause);
PG_FUNCTION_INFO_V1(queue_resume);

/* Sets whether queue name is paused; needs manage. */
static void
set_paused(FunctionCallInfo fcinfo, bool paused)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;

	queue_storage_begin_write(&session, paused ? "queue_pause()" : "queue_resume()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
	queue_plan_begin(&args, PLAN_QUEUE_SET_PAUSED);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set(&args, "paused", BoolGetDatum(paused));
	if (queue_plan_run(&args) > 0)
	{
		queue_catalog_changed();
		/* the getters waiting on it look again, and find it resumed */
		if (!paused)
			queue_wake_at_commit(queue.queue_id, QUEUE_WAKE_EVERY);
	}
	queue_storage_end(&session);
}

/* queue_pause(queue) */
Datum
queue_pause(PG_FUNCTION_ARGS)
{
	set_paused(fcinfo, true);
	PG_RETURN_VOID();
}

/* queue_resume(queue) */
Datum
queue_resume(PG_FUNCTION_ARGS)
{
	set_paused(fcinfo, false);
	PG_RETURN_VOID();
}
