/*-------------------------------------------------------------------------
 *
 * queue.c
 *		Entry point of the queue extension.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Runs in every backend that loads the library, preloaded or not: the
 * queue settings cache must hear of changes made by other sessions.
 */
void
_PG_init(void)
{
	queue_catalog_init();
}
