/*-------------------------------------------------------------------------
 *
 * get.h
 *		What queue_get shares with queue_delete_and_get: its arguments and
 *		its loop of looks and waits (get.c), and a batch of deletes by id
 *		and pop receipt (delete.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_API_GET_H
#define QUEUE_API_GET_H

#include "queue.h"
#include "messages/messages.h"

#include "fmgr.h"

/* max_messages, visibility_timeout, wait, release_on_disconnect */
typedef struct GetArguments
{
	int32		max_messages;
	int64		visibility_timeout;	/* -1: the queue's */
	int64		wait;
	bool		release_on_disconnect;
} GetArguments;

extern void queue_get_args(FunctionCallInfo fcinfo, int first, const char *name,
						   GetArguments *args);
extern void queue_get_messages(FunctionCallInfo fcinfo, bool status_column,
							   const char *name, const GetArguments *args);
extern int	queue_delete_entries(const QueueInfo *queue, const QueueBatch *batch,
								 HeldOutcome *outcomes);
extern Datum queue_delete_status(HeldOutcome outcome);

#endif							/* QUEUE_API_GET_H */
