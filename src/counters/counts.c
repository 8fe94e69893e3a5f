/*-------------------------------------------------------------------------
 *
 * counts.c
 *		A queue's five counts, added up and written as statement parameters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "queue_storage/queue_storage.h"

bool
queue_counts_zero(const QueueCounts *counts)
{
	return counts->puts == 0 && counts->gets == 0 && counts->deletes == 0 &&
		counts->poisoned == 0 && counts->expired == 0;
}

void
queue_counts_add(QueueCounts *to, const QueueCounts *counts)
{
	to->puts += counts->puts;
	to->gets += counts->gets;
	to->deletes += counts->deletes;
	to->poisoned += counts->poisoned;
	to->expired += counts->expired;
}

/*
 * Starts the arguments of statement id, one that writes the counters row
 * (queue_id, shard): those two and the five counts.
 */
void
queue_counts_args(PlanArgs *args, QueuePlanId id, int32 queue_id, int32 shard,
				  const QueueCounts *counts)
{
	queue_plan_begin(args, id);
	queue_plan_set(args, "queue_id", Int32GetDatum(queue_id));
	queue_plan_set(args, "shard", Int32GetDatum(shard));
	queue_plan_set(args, "puts", Int64GetDatum(counts->puts));
	queue_plan_set(args, "gets", Int64GetDatum(counts->gets));
	queue_plan_set(args, "deletes", Int64GetDatum(counts->deletes));
	queue_plan_set(args, "poisoned", Int64GetDatum(counts->poisoned));
	queue_plan_set(args, "expired", Int64GetDatum(counts->expired));
}
