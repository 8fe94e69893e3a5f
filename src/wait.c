/*-------------------------------------------------------------------------
 *
 * wait.c
 *		Sleeping while queue_get waits for a message to arrive.
 *
 * For now queue_get polls: it looks again after each short sleep on its
 * latch.  The sleep ends early on any interrupt (cancel, statement timeout,
 * termination), so a waiting get is always interruptible, and it never
 * spins a core.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/wait_event.h"

/* How long to sleep between two looks at the queue. */
#define QUEUE_POLL_INTERVAL_MS	10

/* Sleeps until the next look is due, or the deadline, whichever is first. */
void
queue_wait_for_messages(TimestampTz deadline)
{
	long		ms;

	ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
	if (ms > QUEUE_POLL_INTERVAL_MS)
		ms = QUEUE_POLL_INTERVAL_MS;
	if (ms < 1)
		ms = 1;

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}
