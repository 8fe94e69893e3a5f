/*-------------------------------------------------------------------------
 *
 * wait.c
 *		queue_get's wait: sleeping until a message may have arrived.
 *
 * With shared_preload_libraries, a waiting getter registers its latch in
 * shared memory under its queue, and a transaction that made a message of
 * that queue visible (a put, a release, a redrive) sets those latches when
 * it commits: not before, so the getter finds the message when it looks.
 * The getter looks again at least every QUEUE_WAKE_POLL_MS for what no
 * commit announces (a delay or a lease that runs out).  Without the
 * preload it polls every QUEUE_POLL_MS.  Either way the sleep ends on any
 * interrupt (cancel, statement timeout, termination) and never spins.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "storage/storage.h"
#include "wait/wait.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

/* How often a getter looks again without being woken. */
#define QUEUE_POLL_MS			10
#define QUEUE_WAKE_POLL_MS		100

/* How many queues one transaction remembers to wake; past that, all. */
#define QUEUE_WAKE_MAX			16

typedef struct Waiter
{
	Oid			dboid;
	int32		queue_id;		/* 0: not waiting */
	Latch	   *latch;
} Waiter;

typedef struct Waiters
{
	LWLock	   *lock;
	int			nslots;
	Waiter		slots[FLEXIBLE_ARRAY_MEMBER];
} Waiters;

static Waiters *waiters = NULL;

/* The queues this transaction will wake at commit. */
static int32 wake_queues[QUEUE_WAKE_MAX];
static int	wake_count = 0;
static bool wake_all = false;
static bool callback_registered = false;
static bool waiting = false;

Size
queue_waiters_size(void)
{
	return add_size(offsetof(Waiters, slots), mul_size(MaxBackends, sizeof(Waiter)));
}

void
queue_waiters_attach(LWLock *lock)
{
	bool		found;

	waiters = ShmemInitStruct("queue waiters", queue_waiters_size(), &found);
	if (!found)
	{
		memset(waiters, 0, queue_waiters_size());
		waiters->lock = lock;
		waiters->nslots = MaxBackends;
	}
}

static Waiter *
my_slot(void)
{
	int			slot = queue_backend_slot();

	if (waiters == NULL || slot < 1 || slot > waiters->nslots)
		return NULL;
	return &waiters->slots[slot - 1];
}

static void
set_my_slot(int32 queue_id)
{
	Waiter	   *slot = my_slot();

	if (slot == NULL)
		return;
	LWLockAcquire(waiters->lock, LW_EXCLUSIVE);
	slot->dboid = MyDatabaseId;
	slot->latch = &MyProc->procLatch;
	slot->queue_id = queue_id;
	LWLockRelease(waiters->lock);
	waiting = queue_id != 0;
}

/* Sets the latches of the getters waiting on the queues remembered. */
static void
wake_waiters(void)
{
	int			i;
	int			j;

	if (waiters == NULL)
		return;
	LWLockAcquire(waiters->lock, LW_SHARED);
	for (i = 0; i < waiters->nslots; i++)
	{
		Waiter	   *slot = &waiters->slots[i];

		if (slot->queue_id == 0 || slot->dboid != MyDatabaseId)
			continue;
		for (j = 0; j < wake_count && !wake_all; j++)
			if (wake_queues[j] == slot->queue_id)
				break;
		if (wake_all || j < wake_count)
			SetLatch(slot->latch);
	}
	LWLockRelease(waiters->lock);
}

static void
wait_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
			if (wake_count > 0 || wake_all)
				wake_waiters();
			break;
		case XACT_EVENT_ABORT:
			if (waiting)
				set_my_slot(0);	/* a wait cut short by an error */
			break;
		default:
			return;
	}
	wake_count = 0;
	wake_all = false;
}

/* The commit callback, registered once per backend when first needed. */
static void
register_callback(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(wait_xact_callback, NULL);
		callback_registered = true;
	}
}

/*
 * queue_wake_at_commit for each queue id the last statement returned, in
 * its column queue_id (SPI_tuptable): the statements that make leased messages
 * visible again return the queue of each.
 */
void
queue_wake_returned_queues(void)
{
	uint64		i;

	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		queue_wake_at_commit(DatumGetInt32(queue_row_value(SPI_tuptable, i,
														   "queue_id", &isnull)));
	}
}

/*
 * Remembers to wake, when this transaction commits, the getters waiting on
 * queue_id: the transaction made a message of it visible.
 */
void
queue_wake_at_commit(int32 queue_id)
{
	int			i;

	if (waiters == NULL || wake_all)
		return;
	register_callback();
	for (i = 0; i < wake_count; i++)
		if (wake_queues[i] == queue_id)
			return;
	if (wake_count == QUEUE_WAKE_MAX)
		wake_all = true;
	else
		wake_queues[wake_count++] = queue_id;
}

/* A getter starts or stops waiting on queue_id. */
void
queue_wait_begin(int32 queue_id)
{
	if (waiters != NULL)
		register_callback();
	set_my_slot(queue_id);
}

void
queue_wait_end(void)
{
	if (waiting)
		set_my_slot(0);
}

/*
 * Sleeps until woken, the next look is due, or the deadline.  The caller
 * resets the latch before it looks at the queue, so a wake that comes
 * between its look and this sleep is not lost.
 */
void
queue_wait_for_messages(TimestampTz deadline)
{
	static uint32 wait_event = 0;
	long		ms;
	long		poll = waiters != NULL ? QUEUE_WAKE_POLL_MS : QUEUE_POLL_MS;

	if (wait_event == 0)
		wait_event = queue_wait_event("QueueGetWait");

	ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
	if (ms > poll)
		ms = poll;
	if (ms < 1)
		ms = 1;

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, wait_event);
	CHECK_FOR_INTERRUPTS();
}
