/*-------------------------------------------------------------------------
 *
 * counters.h
 *		The per-queue counters shown by queue_stats.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_COUNTERS_H
#define QUEUE_COUNTERS_H

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "storage/lwlock.h"

/* counters/transaction.c */
typedef struct QueueCounts
{
	int64		puts;
	int64		gets;
	int64		deletes;
	int64		poisoned;
	int64		expired;
} QueueCounts;

extern bool queue_counts_zero(const QueueCounts *counts);
extern void queue_counts_add(QueueCounts *to, const QueueCounts *counts);
extern void queue_counts_args(PlanArgs *args, QueuePlanId id, int32 queue_id,
							  int32 shard, const QueueCounts *counts);
extern void queue_counters_add(int32 queue_id, const QueueCounts *counts);
extern void queue_counters_pending(int32 queue_id, QueueCounts *counts);
extern void queue_counters_unwritten(int32 queue_id, QueueCounts *counts);
extern void queue_counters_forget(int32 queue_id);
extern void queue_counters_sweep(void);

/*
 * counters/shared.c.  The sweep adds what shared memory counted to the
 * counters row of shard QUEUE_SHARED_SHARD; prepared transactions count in
 * rows of their own, below it (counters/transaction.c).
 */
#define QUEUE_SHARED_SHARD	(-1)

extern Size queue_shared_counters_size(void);
extern void queue_shared_counters_attach(LWLock *lock);
extern bool queue_shared_counters_enabled(void);
extern bool queue_shared_counters_exist(Oid catalog, int32 queue_id);
extern bool queue_shared_counters_reserve(Oid catalog, int32 queue_id);
extern void queue_shared_counters_add(Oid catalog, int32 queue_id,
									  const QueueCounts *counts);
extern void queue_shared_counters_read_begin(void);
extern void queue_shared_counters_read(int32 queue_id, QueueCounts *counts);
extern void queue_shared_counters_read_end(void);
extern void queue_shared_counters_forget(int32 queue_id);
extern int	queue_shared_counters_write(void);

#endif							/* QUEUE_COUNTERS_H */
