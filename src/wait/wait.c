/*-------------------------------------------------------------------------
 *
 * wait.c
 *		queue_get's wait: sleeping until a message may have arrived.
 *
 * With shared_preload_libraries, a waiting getter registers its latch in
 * shared memory under its queue, and a transaction that made messages of
 * that queue visible (a put, a release, a redrive) wakes getters when it
 * commits: not before, so the getter finds the message when it looks.  It
 * wakes one getter per message and the others sleep on: a put into a queue
 * a thousand getters wait on wakes one of them, not a thousand that find
 * nothing.  It wakes those that began waiting last first: a backend that
 * ran a moment ago gets going again at once, while one that slept for
 * seconds among a thousand others is cold and can take milliseconds
 * (bench/experiments/process_wake/ measures it without PostgreSQL).  The
 * one that looks for what no commit announces (below) is woken last: if it
 * took the message and left, another getter would have to be woken to take
 * over its looking.  A getter picked for a wake that leaves without looking
 * again (its wait cut short by an error or a cancel) hands the wake to the
 * next getter.
 *
 * What no commit announces (a delay or a lease that runs out) is looked
 * for by one getter per queue, the one that began waiting last, every
 * QUEUE_WAKE_POLL_MS; the others sleep until they are woken or their wait
 * ends.  When that getter stops waiting, it wakes the one that began
 * waiting before it to take its place.  Without the preload every getter
 * looks every QUEUE_POLL_MS.  Either way the sleep ends on any interrupt
 * (cancel, statement timeout, termination) and never spins.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "wait/wait.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

/*
 * How often a getter looks again without being woken: without the preload
 * every getter, with it the one per queue that began waiting last.
 */
#define QUEUE_POLL_MS			10
#define QUEUE_WAKE_POLL_MS		100

/* How many queues one transaction remembers to wake; past that, all. */
#define QUEUE_WAKE_MAX			16

typedef struct Waiter
{
	Oid			dboid;
	int32		queue_id;		/* 0: not waiting */
	uint64		since;			/* when it began waiting, in waiters' order */
	bool		woken;			/* picked by a wake, has not looked since */
	Latch	   *latch;
} Waiter;

typedef struct Waiters
{
	LWLock	   *lock;
	int			nslots;
	pg_atomic_uint32 waiting;	/* slots in use: a commit with none skips the lock */
	uint64		next_since;
	Waiter		slots[FLEXIBLE_ARRAY_MEMBER];
} Waiters;

static Waiters *waiters = NULL;

/* A queue this transaction will wake at commit, for how many messages. */
typedef struct WakeQueue
{
	int32		queue_id;
	int64		messages;
} WakeQueue;

static WakeQueue wake_queues[QUEUE_WAKE_MAX];
static int	wake_count = 0;
static bool wake_all = false;
static bool callback_registered = false;
static bool waiting = false;
static int	wait_nest_level = 0;	/* the transaction nesting of my wait */

/*
 * The waiters wake_queue picks from, sorted; one per slot.  Allocated
 * before any wake can need it (never in a commit callback, where running
 * out of memory would be a PANIC).
 */
static Waiter **candidates = NULL;

static void
allocate_candidates(void)
{
	if (candidates == NULL && waiters != NULL)
		candidates = MemoryContextAlloc(TopMemoryContext,
										sizeof(Waiter *) * waiters->nslots);
}

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
		pg_atomic_init_u32(&waiters->waiting, 0);
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

/* qsort: the waiter that began waiting last first */
static int
by_since_newest_first(const void *a, const void *b)
{
	uint64		x = (*(Waiter *const *) a)->since;
	uint64		y = (*(Waiter *const *) b)->since;

	return x > y ? -1 : x < y;
}

/*
 * Wakes up to messages getters waiting on queue_id in this database (all of
 * them if messages < 0), passing over those a wake picked already: those
 * that began waiting last first, but the one that began waiting last of
 * all (the looker, see the top of this file) only when no other is left.
 * Holds the lock exclusively.
 */
static void
wake_queue(int32 queue_id, int64 messages)
{
	int			count = 0;
	uint64		looker_since = 0;
	int			i;

	for (i = 0; i < waiters->nslots; i++)
	{
		Waiter	   *slot = &waiters->slots[i];

		if (slot->queue_id != queue_id || slot->dboid != MyDatabaseId)
			continue;
		looker_since = Max(looker_since, slot->since);
		if (!slot->woken)
			candidates[count++] = slot;
	}
	if (messages >= 0 && messages < count)
	{
		qsort(candidates, count, sizeof(Waiter *), by_since_newest_first);
		if (candidates[0]->since == looker_since)
		{
			Waiter	   *looker = candidates[0];

			memmove(&candidates[0], &candidates[1], sizeof(Waiter *) * (count - 1));
			candidates[count - 1] = looker;
		}
	}
	else
		messages = count;
	for (i = 0; i < messages; i++)
	{
		candidates[i]->woken = true;
		SetLatch(candidates[i]->latch);
	}
}

/*
 * The getter that began waiting last on queue_id in this database, other
 * than me; NULL if none.  Under the lock.
 */
static Waiter *
newest_waiter(int32 queue_id, Waiter *me)
{
	Waiter	   *newest = NULL;
	int			i;

	for (i = 0; i < waiters->nslots; i++)
	{
		Waiter	   *slot = &waiters->slots[i];

		if (slot != me && slot->queue_id == queue_id && slot->dboid == MyDatabaseId &&
			(newest == NULL || slot->since > newest->since))
			newest = slot;
	}
	return newest;
}

/*
 * My slot leaves its queue, under the lock held exclusively.  A getter that
 * stops while picked by a wake hands it on; the one that looked for
 * unannounced messages hands that on to the newest getter left.
 */
static void
leave_queue(Waiter *slot)
{
	int32		left = slot->queue_id;
	bool		was_woken = slot->woken;
	Waiter	   *newest = newest_waiter(left, slot);

	slot->queue_id = 0;
	slot->woken = false;
	pg_atomic_fetch_sub_u32(&waiters->waiting, 1);
	if (was_woken)
		wake_queue(left, 1);
	if (newest != NULL && newest->since < slot->since)
		SetLatch(newest->latch);
}

/*
 * Starts (queue_id) or stops (0) my wait.  A wait that begins while my slot
 * still holds an earlier one ends that one first, handing on what it held.
 */
static void
set_my_slot(int32 queue_id)
{
	Waiter	   *slot = my_slot();

	if (slot == NULL)
		return;
	LWLockAcquire(waiters->lock, LW_EXCLUSIVE);
	if (slot->queue_id != 0)
		leave_queue(slot);
	if (queue_id != 0)
	{
		pg_atomic_fetch_add_u32(&waiters->waiting, 1);
		slot->dboid = MyDatabaseId;
		slot->latch = &MyProc->procLatch;
		slot->since = ++waiters->next_since;
		slot->woken = false;
		slot->queue_id = queue_id;
	}
	LWLockRelease(waiters->lock);
	waiting = queue_id != 0;
}

/* Wakes the getters waiting on the queues remembered. */
static void
wake_waiters(void)
{
	int			i;

	if (waiters == NULL)
		return;
	/*
	 * No getter waiting anywhere: nothing to take the lock for.  A getter
	 * that registers after this read looks at the queue after registering,
	 * and this transaction's messages are visible by then.
	 */
	pg_memory_barrier();
	if (pg_atomic_read_u32(&waiters->waiting) == 0)
		return;
	LWLockAcquire(waiters->lock, LW_EXCLUSIVE);
	if (wake_all)
	{
		for (i = 0; i < waiters->nslots; i++)
		{
			Waiter	   *slot = &waiters->slots[i];

			if (slot->queue_id != 0 && slot->dboid == MyDatabaseId)
			{
				slot->woken = true;
				SetLatch(slot->latch);
			}
		}
	}
	else
		for (i = 0; i < wake_count; i++)
			wake_queue(wake_queues[i].queue_id, wake_queues[i].messages);
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
			/* never left registered past its transaction */
			if (waiting)
				set_my_slot(0);
			break;
		case XACT_EVENT_PREPARE:
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

/*
 * A wait cut short by an error that a savepoint or an exception block
 * caught ends when that subtransaction rolls back (at once: the error
 * aborts it), not when the transaction ends: while the session sat idle in
 * its transaction, its slot would keep the looking for delayed messages
 * from the queue's other getters, and absorb a wake.  The looks' own
 * subtransactions, one level deeper than the wait, do not end it.
 */
static void
wait_subxact_callback(SubXactEvent event, SubTransactionId subid,
					  SubTransactionId parent, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB && waiting &&
		GetCurrentTransactionNestLevel() <= wait_nest_level)
		set_my_slot(0);
}

/* The callbacks, registered once per backend when first needed. */
static void
register_callback(void)
{
	if (!callback_registered)
	{
		RegisterXactCallback(wait_xact_callback, NULL);
		RegisterSubXactCallback(wait_subxact_callback, NULL);
		callback_registered = true;
	}
}

/*
 * queue_wake_at_commit for each row the last statement returned, by its
 * column queue_id (SPI_tuptable): the statements that make leased messages
 * visible again return one row per message.
 */
void
queue_wake_returned_queues(void)
{
	uint64		i;

	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;

		queue_wake_at_commit(DatumGetInt32(queue_row_value(SPI_tuptable, i,
														   "queue_id", &isnull)), 1);
	}
}

/*
 * Remembers to wake, when this transaction commits, a getter waiting on
 * queue_id for each of the messages of it the transaction made visible
 * (every getter waiting on it if messages is QUEUE_WAKE_EVERY).
 */
void
queue_wake_at_commit(int32 queue_id, int64 messages)
{
	int			i;

	if (waiters == NULL || wake_all)
		return;
	register_callback();
	allocate_candidates();
	for (i = 0; i < wake_count; i++)
		if (wake_queues[i].queue_id == queue_id)
			break;
	if (i == wake_count)
	{
		if (wake_count == QUEUE_WAKE_MAX)
		{
			wake_all = true;
			return;
		}
		wake_queues[wake_count].queue_id = queue_id;
		wake_queues[wake_count].messages = 0;
		wake_count++;
	}
	if (messages < 0 || wake_queues[i].messages < 0)
		wake_queues[i].messages = QUEUE_WAKE_EVERY;
	else
		wake_queues[i].messages += messages;
}

/* A getter starts or stops waiting on queue_id. */
void
queue_wait_begin(int32 queue_id)
{
	if (waiters != NULL)
		register_callback();
	allocate_candidates();
	wait_nest_level = GetCurrentTransactionNestLevel();
	set_my_slot(queue_id);
}

void
queue_wait_end(void)
{
	if (waiting)
		set_my_slot(0);
}

/*
 * A waiting getter is about to look at its queue (its latch reset): a wake
 * that picked it is served by this look, and the next wake may pick it
 * again.
 */
void
queue_wait_looking(void)
{
	Waiter	   *slot = my_slot();

	if (!waiting || slot == NULL || !slot->woken)
		return;
	LWLockAcquire(waiters->lock, LW_EXCLUSIVE);
	slot->woken = false;
	LWLockRelease(waiters->lock);
}

/* Am I the getter of my queue that began waiting last? */
static bool
newest_of_my_queue(void)
{
	Waiter	   *slot = my_slot();
	Waiter	   *other;
	bool		newest;

	if (!waiting || slot == NULL)
		return true;
	LWLockAcquire(waiters->lock, LW_SHARED);
	other = newest_waiter(slot->queue_id, slot);
	newest = other == NULL || other->since < slot->since;
	LWLockRelease(waiters->lock);
	return newest;
}

/* Was I picked by a wake since I last looked? */
static bool
picked_by_wake(void)
{
	Waiter	   *slot = my_slot();

	return slot != NULL && slot->woken;
}

/*
 * Sleeps until woken, the next look is due, or the deadline.  The caller
 * resets the latch before it looks at the queue, so a wake that comes
 * between its look and this sleep is not lost.
 *
 * A latch is set for more than wakes.  With the preload, a getter that is
 * neither picked by a wake nor the one that looks sleeps on after any
 * other: PostgreSQL's timer signal sets it too, for instance the one it
 * arms when a backend goes idle, to flush the backend's statistics up to
 * 10 s later, which runs on into the next statement (disabling that
 * timeout does not stop the signal); a getter sent its next get at once
 * would otherwise look at its queue for nothing each time, which adds up
 * with many getters (bench/reports/history.md, "Figures once kept in code
 * comments").
 */
void
queue_wait_for_messages(TimestampTz deadline)
{
	static uint32 wait_event = 0;

	if (wait_event == 0)
		wait_event = queue_wait_event("QueueGetWait");

	for (;;)
	{
		long		ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
														 deadline);
		int			events;

		if (waiters == NULL && ms > QUEUE_POLL_MS)
			ms = QUEUE_POLL_MS;
		else if (waiters != NULL && ms > QUEUE_WAKE_POLL_MS && newest_of_my_queue())
			ms = QUEUE_WAKE_POLL_MS;
		if (ms < 1)
			ms = 1;

		/* an interrupt that came during the look, its latch set reset since */
		CHECK_FOR_INTERRUPTS();
		events = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						   ms, wait_event);
		/*
		 * Reset before the interrupts are checked and the wake asked for:
		 * an interrupt or a wake from here on sets it again.
		 */
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (waiters == NULL || !waiting || !(events & WL_LATCH_SET))
			return;
		if (picked_by_wake() || newest_of_my_queue() ||
			GetCurrentTimestamp() >= deadline)
			return;
	}
}
