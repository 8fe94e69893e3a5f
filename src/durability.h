/*-------------------------------------------------------------------------
 *
 * durability.h
 *		queue.durability = at_least_once: a transaction that only leased or
 *		acknowledged messages commits without waiting for its WAL flush
 *		(durability.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_DURABILITY_H
#define QUEUE_DURABILITY_H

typedef enum QueueDurability
{
	QUEUE_DURABILITY_FULL,
	QUEUE_DURABILITY_AT_LEAST_ONCE
} QueueDurability;

extern int	queue_durability;

/* Around work that leases or acknowledges messages and writes nothing else. */
extern void queue_durability_begin(void);
extern void queue_durability_end(void);

#endif							/* QUEUE_DURABILITY_H */
