/*-------------------------------------------------------------------------
 *
 * get.c
 *		queue_get: handing messages out.
 *
 * A get locks the oldest visible messages of its queue with FOR UPDATE
 * SKIP LOCKED and claims them as it locks them (claim.c), so concurrent
 * getters never wait for each other nor take the same message.  Claimed:
 * dequeue_count + 1, a fresh pop receipt, and invisible until the lease
 * ends.  Candidates that were already handed out max_dequeue_count times
 * go to the poison queue on the way; this file counts them, and waits for
 * messages when asked to.
 *
 * A get that waits holds no lock while it sleeps: each look runs in a
 * subtransaction, rolled back (its locks let go) when it found nothing, so
 * that DDL on the storage, ALTER EXTENSION UPDATE among it, never waits
 * for a long poll to time out, nor makes every other call wait behind it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/get.h"
#include "counters/counters.h"
#include "durability.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "access/xact.h"
#include "catalog/pg_type_d.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_get);

/*
 * Claims up to want visible messages of queue (claim.c) and adds them to
 * the result, counting them and the poison messages moved on the way.
 * Returns how many it claimed; *poisoned is how many it moved.
 */
static int
claim_messages(FunctionCallInfo fcinfo, bool status_column, const QueueInfo *queue,
			   int want, int64 visibility_timeout, bool release_on_disconnect,
			   int *poisoned_out)
{
	QueueCounts counts = {0};
	int			poisoned;
	int			claimed;

	claimed = queue_claim(fcinfo, status_column, queue, want, visibility_timeout,
						  release_on_disconnect, &poisoned);
	*poisoned_out = poisoned;
	if (poisoned > 0)
		queue_count_poisoned(queue, poisoned);
	if (release_on_disconnect && claimed > 0)
		queue_session_leases_taken();
	counts.gets = claimed;
	queue_counters_add(queue->queue_id, &counts);
	return claimed;
}

/*
 * One look at the queue: opens it (by name, each time: a waiting get holds
 * no lock on it between looks) and claims up to want messages.  Returns how
 * many it claimed, *queue_id the queue's id, *poisoned (if not NULL) how
 * many messages it moved to the poison queue.  visibility_timeout -1: the
 * queue's.
 */
static int
look(FunctionCallInfo fcinfo, bool status_column, const char *name, int want,
	 int64 visibility_timeout, bool release_on_disconnect, int32 *queue_id,
	 int *poisoned)
{
	QueueInfo	queue;
	int			moved;
	int			claimed;

	queue_open(name, AccessShareLock, QUEUE_PERM_PROCESS, &queue);
	*queue_id = queue.queue_id;
	if (poisoned != NULL)
		*poisoned = 0;
	/* a paused queue hands nothing out (pause.c) */
	if (queue.paused && queue_still_paused(queue.queue_id))
		return 0;
	claimed = claim_messages(fcinfo, status_column, &queue, want,
							 visibility_timeout < 0 ? queue.visibility_timeout :
							 visibility_timeout,
							 release_on_disconnect, &moved);
	if (poisoned != NULL)
		*poisoned = moved;
	return claimed;
}

/*
 * A look in a subtransaction of its own, rolled back when it claimed and
 * moved nothing, so that the get holds no lock and keeps no memory while
 * it sleeps.  An error rolls the subtransaction back before it goes on up,
 * as a PL/pgSQL exception block does: the caller's transaction, and any
 * subtransaction around the call, are left as they were.
 */
static int
look_letting_go(FunctionCallInfo fcinfo, bool status_column, const char *name,
				int want, int64 visibility_timeout, bool release_on_disconnect,
				int32 *queue_id, int *poisoned_out)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	MemoryContext look_context = AllocSetContextCreate(context, "queue_get look",
													   ALLOCSET_DEFAULT_SIZES);
	int			claimed = 0;
	int			poisoned = 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(look_context);
	PG_TRY();
	{
		claimed = look(fcinfo, status_column, name, want, visibility_timeout,
					   release_on_disconnect, queue_id, &poisoned);
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(context);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(context);
		CurrentResourceOwner = owner;
		ReThrowError(error);
	}
	PG_END_TRY();

	if (claimed > 0 || poisoned > 0)
		ReleaseCurrentSubTransaction();
	else
		RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	/* what a look that found nothing allocated goes with it */
	if (claimed == 0)
		MemoryContextDelete(look_context);
	*poisoned_out = poisoned;
	return claimed;
}

/*
 * Reads queue_get's arguments max_messages, visibility_timeout, wait and
 * release_on_disconnect, the first of them at position first.
 */
void
queue_get_args(FunctionCallInfo fcinfo, int first, const char *name,
			   GetArguments *args)
{
	args->max_messages = queue_count_arg(fcinfo, first, "max_messages", name, 1,
										 QUEUE_MAX_MESSAGES);

	args->visibility_timeout = -1;	/* the queue's */
	if (!PG_ARGISNULL(first + 1))
	{
		args->visibility_timeout =
			queue_interval_usecs(PG_GETARG_INTERVAL_P(first + 1),
								 "visibility_timeout", name);
		queue_check_duration(args->visibility_timeout, 0, false, QUEUE_MAX_VISIBILITY,
							 "visibility_timeout", name,
							 PG_GETARG_INTERVAL_P(first + 1));
	}

	args->wait = queue_duration_arg(fcinfo, first + 2, "wait", name);
	queue_check_duration(args->wait, 0, true, QUEUE_MAX_WAIT, "wait", name,
						 PG_GETARG_INTERVAL_P(first + 2));

	queue_require_arg(fcinfo, first + 3, "release_on_disconnect", name);
	args->release_on_disconnect = PG_GETARG_BOOL(first + 3);
}

/*
 * Claims messages into the result of fcinfo (set up with
 * InitMaterializedSRF), after a status column when status_column, looking
 * again whenever woken until args->wait runs out.  Must run inside a
 * StorageSession.
 */
void
queue_get_messages(FunctionCallInfo fcinfo, bool status_column, const char *name,
				   const GetArguments *args)
{
	int32		queue_id;
	TimestampTz deadline;
	bool		release_snapshot = false;
	bool		waiting = false;

	deadline = GetCurrentTimestamp() + args->wait;
	/*
	 * The session's settings are pinned outside the looks' subtransactions,
	 * whose rollback would undo them.
	 */
	if (args->wait > 0)
		queue_storage_prepare_sql();
	for (;;)
	{
		int			claimed;
		int			poisoned = 0;

		/* reset before looking: a wake after the look ends the sleep */
		ResetLatch(MyLatch);
		queue_wait_looking();
		if (args->wait > 0)
			claimed = look_letting_go(fcinfo, status_column, name, args->max_messages,
									  args->visibility_timeout,
									  args->release_on_disconnect, &queue_id, &poisoned);
		else
			claimed = look(fcinfo, status_column, name, args->max_messages,
						   args->visibility_timeout, args->release_on_disconnect,
						   &queue_id, NULL);
		/*
		 * A look that only moved messages to the poison queue ends the wait:
		 * sleeping on would keep the move uncommitted, and its rows locked,
		 * for the rest of the wait.
		 */
		if (claimed > 0 || poisoned > 0 || GetCurrentTimestamp() >= deadline)
			break;
		if (!waiting)
		{
			/*
			 * Now that the queue is known: wakes from here on are seen, so
			 * look again before the first sleep, for a put that committed
			 * since the look.
			 */
			queue_wait_begin(queue_id);
			release_snapshot = queue_snapshot_can_release(fcinfo);
			waiting = true;
			continue;
		}
		if (release_snapshot)
			queue_snapshot_release();
		queue_wait_for_messages(deadline);
	}
	if (waiting)
		queue_wait_end();
}

/*
 * queue_get(queue, max_messages, visibility_timeout, wait,
 *			 release_on_disconnect)
 */
Datum
queue_get(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	GetArguments args;
	StorageSession session;

	queue_get_args(fcinfo, 1, name, &args);

	InitMaterializedSRF(fcinfo, 0);
	queue_durability_begin();
	queue_storage_begin_write(&session, "queue_get()");
	queue_get_messages(fcinfo, false, name, &args);
	queue_storage_end(&session);
	queue_durability_end();
	return (Datum) 0;
}
