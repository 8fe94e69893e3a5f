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

/* sweep.c */
extern int64 queue_expire_batch(TimestampTz now, int batch_size);
extern int	queue_poisoning_queues(QueueInfo **queues, MemoryContext context);
extern int64 queue_release_orphans(TimestampTz now);
extern int64 queue_poison_batch(const QueueInfo *queue, TimestampTz now,
								int batch_size);

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
