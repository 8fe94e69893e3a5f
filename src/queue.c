/*-------------------------------------------------------------------------
 *
 * queue.c
 *		Entry point of the queue extension: what loading the library sets up.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "shmem/shmem.h"
#include "queue_storage/queue_storage.h"
#include "worker/worker.h"

#include "miscadmin.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Runs in every backend that loads the library.  Settings come first, so
 * that they exist with or without the preload; the settings cache must
 * hear of changes made by other sessions in any case.  Shared memory, the
 * launcher and the utility hook need shared_preload_libraries.
 */
void
_PG_init(void)
{
	queue_settings_define();

	queue_catalog_init();
	queue_schema_init();
	queue_storage_init();

	if (!process_shared_preload_libraries_in_progress)
		return;

	queue_shmem_install();
	queue_utility_hook_install();
	queue_launcher_register();
}
