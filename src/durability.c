/*-------------------------------------------------------------------------
 *
 * durability.c
 *		queue.durability = at_least_once: leases and acknowledgements that
 *		commit without waiting for their WAL flush.
 *
 * A get, an acknowledgement (delete) or a change of a lease's visibility
 * lost in a crash costs a redelivery, not a message: the message is handed
 * out again after the crash.  So, when the setting asks for it, a
 * transaction whose every WAL record was written by such calls commits
 * with synchronous_commit off for itself alone.  Anything else the
 * transaction wrote (a put, a new body, the caller's own rows, before,
 * between or after the calls) keeps the commit as durable as the caller's
 * synchronous_commit says.
 *
 * Whether anybody else wrote is told by the end of the transaction's last
 * WAL record (XactLastRecEnd): it must be where the previous call left it
 * when a call begins, and where the last one left it at commit.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "durability.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "utils/guc.h"

int			queue_durability = QUEUE_DURABILITY_FULL;

static bool registered = false;
static bool worked = false;		/* the transaction ran such a call */
static bool only_ours = false;	/* and its WAL is all theirs so far */
static XLogRecPtr work_end = InvalidXLogRecPtr;	/* where the last call left it */

static void
durability_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (worked && only_ours && XactLastRecEnd == work_end)
				(void) set_config_option("synchronous_commit", "off",
										 PGC_USERSET, PGC_S_SESSION,
										 GUC_ACTION_LOCAL, true, 0, false);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			worked = false;
			break;
		default:
			break;
	}
}

void
queue_durability_begin(void)
{
	if (queue_durability != QUEUE_DURABILITY_AT_LEAST_ONCE)
		return;
	if (!registered)
	{
		RegisterXactCallback(durability_xact_callback, NULL);
		registered = true;
	}
	if (!worked)
	{
		worked = true;
		only_ours = XactLastRecEnd == InvalidXLogRecPtr;
	}
	else if (XactLastRecEnd != work_end)
		only_ours = false;
	/* the end is taken now too, for a call whose end is never reached */
	work_end = XactLastRecEnd;
}

void
queue_durability_end(void)
{
	if (worked)
		work_end = XactLastRecEnd;
}
