/*-------------------------------------------------------------------------
 *
 * session_leases.c
 *		Ending a session's release_on_disconnect leases at DISCARD ALL.
 *
 * A lease taken with release_on_disconnect names its holder, the session
 * (pid and start time); when that session ends, the worker makes the
 * message visible again (worker/sweep.c).  A connection pooler in session mode
 * never ends the session: when its client leaves it runs DISCARD ALL and
 * hands the same connection to the next client.  So DISCARD ALL ends this
 * session's leases as the end of the session would (utility.c calls
 * here), and the next client starts with none.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "miscadmin.h"

/* This session may hold leases that end with it (a get took some). */
static bool may_hold_leases = false;

/* A get of this session took leases with release_on_disconnect. */
void
queue_session_leases_taken(void)
{
	may_hold_leases = true;
}

/*
 * Makes this session's release_on_disconnect leases visible again and wakes
 * the getters waiting on their queues, in the current transaction.  Where
 * nothing may be written (a read-only transaction or a standby) they are
 * left to run out, as they would if the release could not run.
 */
void
queue_session_leases_release(void)
{
	StorageSession session;
	PlanArgs	args;

	if (!may_hold_leases || RecoveryInProgress() || XactReadOnly)
		return;
	may_hold_leases = false;
	if (!OidIsValid(get_extension_oid("queue", true)))
		return;

	queue_storage_begin(&session);
	queue_plan_begin(&args, PLAN_RELEASE_SESSION);
	queue_plan_set(&args, "pid", Int32GetDatum(MyProcPid));
	queue_plan_set(&args, "start", TimestampTzGetDatum(MyStartTimestamp));
	queue_plan_set(&args, "now", TimestampTzGetDatum(queue_writer_now()));
	queue_plan_run(&args);
	queue_wake_returned_queues();
	queue_storage_end(&session);
}
