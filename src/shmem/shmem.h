/*-------------------------------------------------------------------------
 *
 * shmem.h
 *		The extension's shared memory: its parts and who attaches them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_SHMEM_H
#define QUEUE_SHMEM_H

#include "queue.h"

#include "storage/lwlock.h"

/* claim_starts.c */
typedef struct ClaimTicket
{
	TimestampTz start;			/* scan from visible_at >= start */
	bool		from_bottom;	/* start is the bottom: nothing trusted */
	TimestampTz limit;			/* the start may not move past this */
} ClaimTicket;

extern Size queue_claim_starts_size(void);
extern void queue_claim_starts_attach(LWLock *lock);
extern TimestampTz queue_writer_now(void);
extern TimestampTz queue_claim_begin(int32 queue_id, ClaimTicket *ticket);
extern void queue_claim_end(int32 queue_id, const ClaimTicket *ticket,
							TimestampTz first_alive, TimestampTz now);

/* registry.c */
extern Size queue_registry_size(void);
extern void queue_registry_attach(LWLock *lock);

/* shmem.c */
extern void queue_shmem_install(void);
extern bool queue_registry_claim(Oid dboid);
extern pid_t queue_registry_worker(Oid dboid);
extern bool queue_registry_paused(Oid dboid);
extern void queue_registry_pause(Oid dboid, TimestampTz until);
extern void queue_registry_note_metrics_read(Oid dboid);
extern TimestampTz queue_registry_metrics_read_at(Oid dboid, bool *tracked);

#endif							/* QUEUE_SHMEM_H */
