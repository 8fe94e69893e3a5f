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

/* shmem.c */
extern void queue_shmem_install(void);

#endif							/* QUEUE_SHMEM_H */
