/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		The extension's shared memory: asked for and attached in one place.
 *
 * Four structures live there, each in the file that uses it: the
 * registry of workers (worker/registry.c), the waiting getters (wait.c), the
 * counters of queue_stats (counters/shared.c) and where claims start
 * (messages/claim_starts.c).  All need shared_preload_libraries; without it none
 * exists and the code that uses them does without (no worker; polling
 * waits; counters written in each transaction; claims walking from the
 * bottom of the claim index).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "messages/messages.h"
#include "shmem/shmem.h"
#include "worker/worker.h"
#include "wait/wait.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
queue_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(add_size(queue_registry_size(), queue_waiters_size()),
								   add_size(queue_shared_counters_size(),
											queue_claim_starts_size())));
	RequestNamedLWLockTranche("queue", 4);
}

static void
queue_shmem_startup(void)
{
	LWLockPadded *locks;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	locks = GetNamedLWLockTranche("queue");
	queue_registry_attach(&locks[0].lock);
	queue_waiters_attach(&locks[1].lock);
	queue_shared_counters_attach(&locks[2].lock);
	queue_claim_starts_attach(&locks[3].lock);
	LWLockRelease(AddinShmemInitLock);
}

/* Called from _PG_init when preloaded. */
void
queue_shmem_install(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = queue_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = queue_shmem_startup;
}
