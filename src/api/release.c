/*-------------------------------------------------------------------------
 *
 * release.c
 *		queue_release and queue_release_batch: a consumer gives messages
 *		back as failed, visible again after the queue's retry delay for
 *		their delivery (rules.h), or moved to the poison queue at the
 *		dequeue limit.
 *
 * A release is an update whose visibility each message's retry delay
 * decides (update.c, by_receipt.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "api/update.h"
#include "messages/messages.h"

#include "utils/uuid.h"

PG_FUNCTION_INFO_V1(queue_release);
PG_FUNCTION_INFO_V1(queue_release_batch);

/*
 * queue_release(queue, message_id, pop_receipt): the consumer gives the
 * message back as failed.  It is visible again after the queue's retry
 * delay for its delivery (rules.h), or goes to the poison queue at the
 * dequeue limit (its receipt then has no pop_receipt).
 */
Datum
queue_release(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	MessageChange change = {0};

	queue_require_arg(fcinfo, 1, "message_id", name);
	queue_require_arg(fcinfo, 2, "pop_receipt", name);
	change.release = true;
	PG_RETURN_DATUM(queue_update_one(fcinfo, name, PG_GETARG_INT64(1), PG_GETARG_UUID_P(2),
									0, &change));
}

/*
 * queue_release_batch(queue, message_ids, pop_receipts): each entry taken
 * as queue_release would take it, its row's status released or poisoned
 * (queue_update_many).
 */
Datum
queue_release_batch(PG_FUNCTION_ARGS)
{
	char	   *name = queue_name_arg(fcinfo, 0);
	MessageChange change = {0};

	change.release = true;
	queue_update_many(fcinfo, name, 0, &change, false, "released");
	return (Datum) 0;
}
