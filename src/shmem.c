/*-------------------------------------------------------------------------
 *
 * shmem.c
 *		The extension's shared memory: asked for and attached in one place.
 *
 * Two structures live there, each in the file that uses it: the registry
 * of workers (registry.c) and the waiting getters (wait.c).  Both need
 * shared_preload_libraries; without it neither exists and the code that
 * uses them does without (no worker; polling waits).
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

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
	RequestAddinShmemSpace(add_size(queue_registry_size(), queue_waiters_size()));
	RequestNamedLWLockTranche("queue", 2);
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
