/*-------------------------------------------------------------------------
 *
 * replay.c
 *		queue_replay: messages a queue retained after their delete, back
 *		into it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_replay);

/*
 * queue_replay(queue, since, until, message_ids, max_messages): puts the
 * messages the queue retained back into it, visible at once, dequeue_count
 * 0, expiring after the queue's message_ttl from now: those deleted at or
 * after since and before until (NULL: unbounded), only those of
 * message_ids if given, oldest deletion first, at most max_messages (NULL:
 * all).  A message of a group comes back at the end of its group.  Needs
 * manage.  Returns how many came back.
 */
Datum
queue_replay(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	StorageSession session;
	QueueInfo	queue;
	PlanArgs	args;
	TimestampTz now;
	bool		isnull;
	int64		replayed;
	Datum		group_ids;

	queue_check_max_messages_arg(fcinfo, 4, name);
	if (!PG_ARGISNULL(1) && !PG_ARGISNULL(2) &&
		PG_GETARG_TIMESTAMPTZ(1) >= PG_GETARG_TIMESTAMPTZ(2))
	{
		/* timestamptz_to_str writes into one static buffer */
		char	   *since = pstrdup(timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(1)));
		char	   *until = pstrdup(timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(2)));

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("since must be before until for queue \"%s\"", name),
				 errdetail("since is %s, until is %s.", since, until)));
	}

	queue_storage_begin_write(&session, "queue_replay()");
	queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);

	now = queue_writer_now();
	/* the statement may put back messages of any priority (claim_starts.c) */
	queue_levels_written(queue.queue_id);
	queue_plan_begin(&args, PLAN_REPLAY);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue.queue_id));
	queue_plan_set_arg(&args, "since", fcinfo, 1);
	queue_plan_set_arg(&args, "until", fcinfo, 2);
	queue_plan_set_arg(&args, "message_ids", fcinfo, 3);
	queue_plan_set_arg(&args, "max_messages", fcinfo, 4);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set_new_expiry(&args, "expires_at", &queue, now);
	queue_plan_run(&args);
	replayed = DatumGetInt64(queue_row_value(SPI_tuptable, 0, "replayed", &isnull));
	group_ids = queue_row_value(SPI_tuptable, 0, "group_ids", &isnull);
	if (!isnull)
	{
		/* messages of a group came back waiting: whose turn is it now? */
		GroupsLeft	left = {0};

		queue_groups_note_array(&left, group_ids);
		queue_groups_advance(queue.queue_id, &left, now);
	}
	if (replayed > 0)
		queue_wake_at_commit(queue.queue_id, replayed);

	queue_storage_end(&session);
	PG_RETURN_INT64(replayed);
}
