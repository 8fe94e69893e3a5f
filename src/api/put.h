/*-------------------------------------------------------------------------
 *
 * put.h
 *		What queue_put shares with queue_publish: checking the arguments of
 *		a message (put.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_API_PUT_H
#define QUEUE_API_PUT_H

#include "queue.h"
#include "messages/messages.h"

#include "fmgr.h"

extern PutTiming queue_put_timing_args(FunctionCallInfo fcinfo, int argno,
									   const char *kind, const char *name);

/* One message's group_id, deduplication_id and priority, checked. */
typedef struct PutOne
{
	Datum		group_id;
	bool		group_null;
	Datum		deduplication_id;
	bool		deduplication_null;
	int16		priority;
} PutOne;

extern void queue_put_one_args(FunctionCallInfo fcinfo, int argno, const char *kind,
							   const char *name, PutOne *one, PutOrdering *ordering);

#endif							/* QUEUE_API_PUT_H */
