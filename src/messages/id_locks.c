/*-------------------------------------------------------------------------
 *
 * id_locks.c
 *		Locks on a queue's text ids: message groups and deduplication ids.
 *
 * Each is a transaction-level advisory lock in a space of our own (field4
 * of the lock tag; SQL's advisory locks use 1 and 2), keyed by the queue
 * and a hash of the id: a collision only serializes two puts that did not
 * need it.  A statement that locks several ids of one kind takes them in
 * key order, so that two such statements never wait for each other in a
 * circle, whatever order their ids came in.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"

/* The lock key of an id (a text Datum). */
uint32
queue_id_lock_key(Datum id)
{
	text	   *value = DatumGetTextPP(id);

	return DatumGetUInt32(hash_any((const unsigned char *) VARDATA_ANY(value),
								   VARSIZE_ANY_EXHDR(value)));
}

static void
set_tag(LOCKTAG *tag, int32 queue_id, QueueIdLockSpace space, uint32 key)
{
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) queue_id, key, (uint16) space);
}

static int
compare_keys(const void *a, const void *b)
{
	uint32		x = *(const uint32 *) a;
	uint32		y = *(const uint32 *) b;

	return x < y ? -1 : x > y;
}

/*
 * Takes the locks of ids (count of them, NULL entries skipped) of queue_id
 * in space until the transaction ends, in key order, waiting for each.
 */
void
queue_id_locks_take(int32 queue_id, QueueIdLockSpace space, const Datum *ids,
					const bool *nulls, int count)
{
	uint32	   *keys = palloc(sizeof(uint32) * Max(count, 1));
	int			n = 0;
	int			i;

	for (i = 0; i < count; i++)
		if (nulls == NULL || !nulls[i])
			keys[n++] = queue_id_lock_key(ids[i]);
	qsort(keys, n, sizeof(uint32), compare_keys);
	for (i = 0; i < n; i++)
	{
		LOCKTAG		tag;

		if (i > 0 && keys[i] == keys[i - 1])
			continue;
		set_tag(&tag, queue_id, space, keys[i]);
		(void) LockAcquire(&tag, ExclusiveLock, false, false);
	}
	pfree(keys);
}

/*
 * Takes the lock of id of queue_id in space until the transaction ends if
 * nobody holds it; returns false, without waiting, if somebody does.
 */
bool
queue_id_lock_try(int32 queue_id, QueueIdLockSpace space, Datum id)
{
	LOCKTAG		tag;

	set_tag(&tag, queue_id, space, queue_id_lock_key(id));
	return LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL;
}
