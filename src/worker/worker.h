/*-------------------------------------------------------------------------
 *
 * worker.h
 *		The background worker and what it runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_WORKER_H
#define QUEUE_WORKER_H

#include "queue.h"

#include "storage/lwlock.h"

/* registry.c: which database has a running worker */
extern Size queue_registry_size(void);
extern void queue_registry_attach(LWLock *lock);
extern bool queue_registry_claim(Oid dboid);
extern pid_t queue_registry_worker(Oid dboid);
extern bool queue_registry_paused(Oid dboid);
extern void queue_registry_pause(Oid dboid, TimestampTz until);
extern void queue_registry_note_metrics_read(Oid dboid);
extern TimestampTz queue_registry_metrics_read_at(Oid dboid, bool *tracked);

/* sweep.c */

/*
 * The messages a sweep passes over, left where they are for a later sweep:
 * a transaction holds the lock of their group.  The sweep's next batches do
 * not look at them again.  ids lives in context, which outlasts the
 * batches' transactions.
 */
typedef struct SweepPassedOver
{
	MemoryContext context;
	Datum	   *ids;			/* int8 message ids */
	int			count;
	int			size;
	int			batch_start;	/* count when the last batch began */
} SweepPassedOver;

extern void queue_sweep_passed_over_init(SweepPassedOver *passed_over,
										 MemoryContext context);
extern bool queue_sweep_batch_full(const SweepPassedOver *passed_over, int64 done,
								   int batch_size);
extern int64 queue_expire_batch(TimestampTz now, int batch_size,
								SweepPassedOver *passed_over);
extern int	queue_poisoning_queues(QueueInfo **queues, MemoryContext context);
extern int64 queue_release_orphans(TimestampTz now);
extern int64 queue_retained_remove(TimestampTz now, int batch_size);
extern int64 queue_poison_batch(const QueueInfo *queue, TimestampTz now,
								int batch_size, SweepPassedOver *passed_over);

/* census.c */
extern bool queue_storage_has_census(void);
extern bool queue_census_wanted(void);
extern bool queue_census_due(void);
extern void queue_census_take(void);

/* vacuum.c */
extern int64 queue_vacuum_if_due(void);

/* launcher.c, worker.c, utility.c */
extern void queue_bgworker_sleep(long timeout_ms);
extern void queue_launcher_register(void);
extern void queue_utility_hook_install(void);

#endif							/* QUEUE_WORKER_H */
