/*-------------------------------------------------------------------------
 *
 * create.c
 *		queue_create.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(queue_create);

/*
 * queue_create(queue, visibility_timeout, message_ttl, max_dequeue_count,
 *				max_message_size, deduplication_window, retry_delay,
 *				retry_backoff, retry_delay_max, retention)
 */
Datum
queue_create(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	int64		visibility_timeout;
	bool		has_ttl = !PG_ARGISNULL(2);
	int32		max_dequeue_count = 0;
	int32		max_message_size;
	char		poison_name[QUEUE_NAME_MAX_LEN + sizeof(QUEUE_POISON_SUFFIX)];
	StorageSession session;
	TimestampTz now;
	int32		poison_id = 0;
	int32		queue_id;

	visibility_timeout = queue_duration_arg(fcinfo, 1, "visibility_timeout", name);
	queue_check_duration(visibility_timeout, 0, false, QUEUE_MAX_VISIBILITY,
						 "visibility_timeout", name, PG_GETARG_INTERVAL_P(1));

	if (has_ttl)
	{
		int64		ttl = queue_interval_usecs(PG_GETARG_INTERVAL_P(2),
											   "message_ttl", name);

		if (ttl <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("message_ttl \"%s\" is out of range for queue \"%s\"",
							DatumGetCString(DirectFunctionCall1(interval_out,
																PG_GETARG_DATUM(2))),
							name),
					 errdetail("It must be greater than 0."),
					 errhint("Use NULL for messages that never expire.")));
	}

	if (!PG_ARGISNULL(3))
	{
		max_dequeue_count = PG_GETARG_INT32(3);
		queue_check_count(max_dequeue_count, 1, PG_INT32_MAX,
						  "max_dequeue_count", name);
	}

	max_message_size = queue_count_arg(fcinfo, 4, "max_message_size", name,
									   1, QUEUE_MAX_MESSAGE_SIZE);

	if (max_dequeue_count > 0)
		queue_poison_name_of(name, poison_name, sizeof(poison_name));

	queue_storage_begin_write(&session, "queue_create()");
	queue_require_permission(0, "*", QUEUE_PERM_MANAGE);
	now = GetCurrentTimestamp();

	if (max_dequeue_count > 0)
		poison_id = queue_poison_queue_for(name, poison_name, PG_GETARG_DATUM(1),
									 max_message_size, now);

	queue_id = queue_insert_row(name, PG_GETARG_DATUM(1), PG_GETARG_DATUM(2), has_ttl,
								max_dequeue_count, max_message_size, poison_id, false,
								now);
	if (queue_id == 0)
		queue_report_exists(name);
	/* from 1.3 on */
	if (PG_NARGS() > 5)
		queue_set_deduplication_window(queue_id, fcinfo, 5, name);
	/* from 1.8 on */
	if (PG_NARGS() > 6)
		queue_set_retry_policy(queue_id, fcinfo, 6, name, true);
	/* from 1.9 on */
	if (PG_NARGS() > 9 && !PG_ARGISNULL(9))
		queue_set_retention(queue_id, fcinfo, 9, name);

	queue_catalog_changed();
	queue_storage_end(&session);
	PG_RETURN_VOID();
}
