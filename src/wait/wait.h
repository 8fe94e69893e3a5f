/*-------------------------------------------------------------------------
 *
 * wait.h
 *		queue_get's wait for messages, woken when a put commits.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_WAIT_H
#define QUEUE_WAIT_H

#include "queue.h"

#include "storage/lwlock.h"

/* wait.c */
extern Size queue_waiters_size(void);
extern void queue_waiters_attach(LWLock *lock);
/* queue_wake_at_commit's messages for "wake every getter of the queue" */
#define QUEUE_WAKE_EVERY	(-1)

extern void queue_wake_at_commit(int32 queue_id, int64 messages);
extern void queue_wake_returned_queues(void);
extern void queue_wait_begin(int32 queue_id);
extern void queue_wait_end(void);
extern void queue_wait_looking(void);
extern void queue_wait_for_messages(TimestampTz deadline);

/* snapshot.c */
extern bool queue_snapshot_can_release(FunctionCallInfo fcinfo);
extern void queue_snapshot_release(void);

#endif							/* QUEUE_WAIT_H */
