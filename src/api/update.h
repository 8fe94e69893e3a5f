/*-------------------------------------------------------------------------
 *
 * update.h
 *		What queue_update shares with queue_release (update.c): changing
 *		one message by id and pop receipt, and a batch of them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_API_UPDATE_H
#define QUEUE_API_UPDATE_H

#include "queue.h"
#include "messages/messages.h"

#include "fmgr.h"

extern Datum queue_update_one(FunctionCallInfo fcinfo, const char *name, int64 message_id,
							  const pg_uuid_t *receipt, int64 visibility_timeout,
							  MessageChange *change);
extern void queue_update_many(FunctionCallInfo fcinfo, const char *name,
							  int64 visibility_timeout, MessageChange *change,
							  bool keep_receipts, const char *done_status);

#endif							/* QUEUE_API_UPDATE_H */
