/*-------------------------------------------------------------------------
 *
 * claim_starts.c
 *		Where a queue's claims may start walking the claim index, and
 *		whether they need to walk the priority levels other than 0.
 *
 * A claim walks the claim index of its queue from the oldest visible_at
 * up.  Each claimed or deleted message leaves an index entry behind there
 * that only VACUUM removes; until it does, every claim walks over the
 * entries of every message claimed since, many index pages a get in a
 * busy queue, and that walk stood out in a CPU profile of the batch
 * (bench/reports/history.md, "Each queue remembers where its claims
 * start").
 *
 * So each queue has a start in shared memory: a visible_at below which its
 * claim index holds nothing a claim could ever take.  A claim scans from
 * there; when every entry it passed before its first live message was dead
 * to every transaction (the index scan tells: it marks such entries
 * killed), it moves the start up to that message's visible_at.
 *
 * What keeps the start honest is new entries below it.  Every entry is
 * written with visible_at >= the writer's now (a delay or a visibility
 * timeout only adds to it), and every writer takes its now here,
 * queue_writer_now, which also records it in the backend's slot until the
 * transaction ends.  A claim that reads the clock after a writer registered
 * sees that writer's now and never moves the start past it (the entries
 * may not be in the index yet when the scan passes).  A writer that
 * registers after the claim read the clock reads a later time, so its
 * entries land at or above anything the claim moves the start to.  All
 * of it happens under one lock, so "before" and "after" are well defined.
 *
 * Entries written some other way (COPY into the table, a restore, logical
 * replication) do not register; and the wall clock can step back.  To
 * bound what either could hide, a claim starts from the bottom again once
 * its queue's start is more than a second older than its last walk from
 * the bottom: such a message is claimed at most about a second late, never
 * lost.  Without shared_preload_libraries there is no shared memory and
 * every claim starts from the bottom.
 *
 * The same slot says when the queue was last found holding no message at
 * a priority other than 0 (none in messages_priority): for a second after,
 * its claims skip the walk of that index, which almost every queue leaves
 * empty.  Every transaction that brings such a message into a queue (a
 * put, a move to poison, a redrive: queue_message_arrives in table.c)
 * registers here before it commits (queue_levels_written); an update
 * leaves a message in its queue at its level.  A registration clears the
 * queue's mark, counts itself in level_writes and stays marked in its
 * writer slot until its transaction ends.  A claim marks the queue only
 * when, at its beginning, no such writer of the database was under way;
 * then looking with a snapshot taken after that finds no message of the
 * queue in the index; and then level_writes has not moved.  A writer
 * either committed before that snapshot (it would be found), or registered
 * after the claim began (the count moved), or registers after the mark
 * (and clears it).  The second bounds the rest as above: a prepared
 * transaction, which gives its slot back at PREPARE, and rows written some
 * other way.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

/* Queues whose start is kept; a queue without a slot starts at the bottom. */
#define CLAIM_START_SLOTS	256

/* How long a start is trusted after the walk from the bottom that set it. */
#define CLAIM_START_TRUST	USECS_PER_SEC

typedef struct ClaimStartSlot
{
	Oid			dboid;			/* InvalidOid: free */
	int32		queue_id;
	TimestampTz start;
	TimestampTz walked_at;		/* the last walk from the bottom */
	TimestampTz levels_empty_at;	/* found with no message at a priority
									 * other than 0; DT_NOBEGIN: not since */
} ClaimStartSlot;

typedef struct WriterSlot
{
	Oid			dboid;			/* InvalidOid: not writing */
	TimestampTz now;
	bool		writes_levels;	/* wrote a message at a priority other than 0 */
} WriterSlot;

typedef struct ClaimStarts
{
	LWLock	   *lock;
	uint64		level_writes;	/* registrations of queue_levels_written */
	ClaimStartSlot queues[CLAIM_START_SLOTS];
	WriterSlot	writers[FLEXIBLE_ARRAY_MEMBER];	/* by queue_backend_slot(), 1..MaxBackends */
} ClaimStarts;

static ClaimStarts *starts = NULL;
static bool registered_callbacks = false;
static bool writing = false;

/* The queue this transaction last registered a write of levels for; 0: none. */
static int32 levels_queue = 0;

/* The size in shared memory (shmem.c asks for it). */
Size
queue_claim_starts_size(void)
{
	return add_size(offsetof(ClaimStarts, writers),
					mul_size(MaxBackends + 1, sizeof(WriterSlot)));
}

/* Attaches to the starts, setting them up if this is the first time. */
void
queue_claim_starts_attach(LWLock *lock)
{
	bool		found;

	starts = ShmemInitStruct("queue claim starts", queue_claim_starts_size(), &found);
	if (!found)
	{
		memset(starts, 0, queue_claim_starts_size());
		starts->lock = lock;
	}
}

/* The backend's writer slot is given back when its transaction ends. */
static void
writer_done(void)
{
	if (!writing || starts == NULL)
		return;
	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	starts->writers[queue_backend_slot()].dboid = InvalidOid;
	starts->writers[queue_backend_slot()].writes_levels = false;
	LWLockRelease(starts->lock);
	writing = false;
	levels_queue = 0;
}

static void
writer_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		writer_done();
}

static void
writer_exit_callback(int code, Datum arg)
{
	writer_done();
}

/* Under the lock: records this backend as a writer whose entries are >= now. */
static void
register_writer(TimestampTz now)
{
	if (!registered_callbacks)
	{
		RegisterXactCallback(writer_xact_callback, NULL);
		before_shmem_exit(writer_exit_callback, (Datum) 0);
		registered_callbacks = true;
	}
	if (!writing)
	{
		WriterSlot *mine = &starts->writers[queue_backend_slot()];

		mine->dboid = MyDatabaseId;
		mine->now = now;
		mine->writes_levels = false;
		writing = true;
	}
}

/*
 * The time a writer of messages uses as now: every visible_at it writes in
 * this transaction is at least that.  Call it before writing, and use what
 * it returns.
 */
TimestampTz
queue_writer_now(void)
{
	TimestampTz now;

	if (starts == NULL || queue_backend_slot() == 0)
		return GetCurrentTimestamp();
	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	now = GetCurrentTimestamp();
	register_writer(now);
	LWLockRelease(starts->lock);
	return now;
}

/* Under the lock: the slot of the queue, or NULL. */
static ClaimStartSlot *
find_slot(int32 queue_id)
{
	int			i;

	for (i = 0; i < CLAIM_START_SLOTS; i++)
		if (starts->queues[i].dboid == MyDatabaseId &&
			starts->queues[i].queue_id == queue_id)
			return &starts->queues[i];
	return NULL;
}

/*
 * A claim of queue_id begins: returns its now (it writes too, see
 * queue_writer_now) and fills ticket with where to start.
 */
TimestampTz
queue_claim_begin(int32 queue_id, ClaimTicket *ticket)
{
	TimestampTz now;
	ClaimStartSlot *slot;
	int			i;

	ticket->start = DT_NOBEGIN;
	ticket->from_bottom = true;
	ticket->limit = DT_NOEND;
	ticket->skip_levels = false;
	ticket->levels_quiet = false;
	if (starts == NULL || queue_backend_slot() == 0)
	{
		ticket->limit = DT_NOBEGIN;	/* nowhere to keep a start */
		return GetCurrentTimestamp();
	}

	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	now = GetCurrentTimestamp();
	register_writer(now);
	ticket->levels_quiet = true;
	ticket->level_writes = starts->level_writes;
	/* no start past the now of a writer of this database, this one included */
	for (i = 1; i <= MaxBackends; i++)
		if (starts->writers[i].dboid == MyDatabaseId)
		{
			if (starts->writers[i].now < ticket->limit)
				ticket->limit = starts->writers[i].now;
			if (starts->writers[i].writes_levels)
				ticket->levels_quiet = false;
		}
	slot = find_slot(queue_id);
	if (slot != NULL && now >= slot->walked_at &&
		now - slot->walked_at < CLAIM_START_TRUST)
	{
		ticket->start = slot->start;
		ticket->from_bottom = false;
	}
	if (slot != NULL && slot->levels_empty_at != DT_NOBEGIN &&
		now >= slot->levels_empty_at &&
		now - slot->levels_empty_at < CLAIM_START_TRUST)
		ticket->skip_levels = true;
	LWLockRelease(starts->lock);
	return now;
}

/*
 * The claim of queue_id found every entry below first_alive dead to every
 * transaction: the queue's start may move up to it.
 */
void
queue_claim_end(int32 queue_id, const ClaimTicket *ticket,
				TimestampTz first_alive, TimestampTz now)
{
	TimestampTz start = Min(first_alive, ticket->limit);
	ClaimStartSlot *slot;
	int			i;

	if (starts == NULL || start <= ticket->start)
		return;

	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	slot = find_slot(queue_id);
	if (slot == NULL && ticket->from_bottom)
	{
		/* a free slot, or one no claim trusts any more (a dropped queue's) */
		for (i = 0; i < CLAIM_START_SLOTS && slot == NULL; i++)
			if (starts->queues[i].dboid == InvalidOid ||
				now - starts->queues[i].walked_at >= CLAIM_START_TRUST)
			{
				slot = &starts->queues[i];
				slot->dboid = MyDatabaseId;
				slot->queue_id = queue_id;
				slot->start = DT_NOBEGIN;
				slot->walked_at = now;
				slot->levels_empty_at = DT_NOBEGIN;
			}
	}
	if (slot != NULL)
	{
		if (ticket->from_bottom)
		{
			/* a walk from the bottom sees what a raced start may have hidden */
			slot->start = start;
			slot->walked_at = now;
		}
		else if (start > slot->start)
			slot->start = start;
	}
	LWLockRelease(starts->lock);
}

/*
 * This transaction writes a message of queue_id at a priority other than 0:
 * called before it commits, for each such message (once per queue counts).
 */
void
queue_levels_written(int32 queue_id)
{
	ClaimStartSlot *slot;

	if (starts == NULL || queue_backend_slot() == 0 || levels_queue == queue_id)
		return;
	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	register_writer(GetCurrentTimestamp());
	starts->writers[queue_backend_slot()].writes_levels = true;
	starts->level_writes++;
	slot = find_slot(queue_id);
	if (slot != NULL)
		slot->levels_empty_at = DT_NOBEGIN;
	LWLockRelease(starts->lock);
	levels_queue = queue_id;
}

/* Under the lock: may the claim begun with ticket mark the queue's slot? */
static ClaimStartSlot *
slot_to_mark(int32 queue_id, const ClaimTicket *ticket)
{
	if (!ticket->levels_quiet || starts->level_writes != ticket->level_writes)
		return NULL;
	return find_slot(queue_id);
}

/*
 * Could the claim of queue_id begun with ticket still mark the queue as
 * holding no message at a priority other than 0?  Asked before the look
 * that would tell, which costs a snapshot and an index probe.
 */
bool
queue_levels_may_mark(int32 queue_id, const ClaimTicket *ticket)
{
	bool		may;

	if (starts == NULL || !ticket->levels_quiet)
		return false;
	LWLockAcquire(starts->lock, LW_SHARED);
	may = slot_to_mark(queue_id, ticket) != NULL;
	LWLockRelease(starts->lock);
	return may;
}

/*
 * The claim of queue_id, begun with ticket, looked with a snapshot taken
 * after it began and found no message of the queue at a priority other
 * than 0: its claims may skip those levels for a while, if nothing wrote
 * such a message meanwhile.
 */
void
queue_levels_found_empty(int32 queue_id, const ClaimTicket *ticket, TimestampTz now)
{
	ClaimStartSlot *slot;

	if (starts == NULL || !ticket->levels_quiet)
		return;
	LWLockAcquire(starts->lock, LW_EXCLUSIVE);
	slot = slot_to_mark(queue_id, ticket);
	if (slot != NULL)
		slot->levels_empty_at = now;
	LWLockRelease(starts->lock);
}
