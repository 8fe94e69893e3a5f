/*-------------------------------------------------------------------------
 *
 * counts.c
 *		A queue's five counts, added up and written as statement parameters.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "counters/counters.h"

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
 * The parameters of the statements that write a counters row: queue_id,
 * shard, then the five counts.
 */
void
queue_counts_params(Datum *values, int32 queue_id, int32 shard,
					const QueueCounts *counts)
{
	values[0] = Int32GetDatum(queue_id);
	values[1] = Int32GetDatum(shard);
	values[2] = Int64GetDatum(counts->puts);
	values[3] = Int64GetDatum(counts->gets);
	values[4] = Int64GetDatum(counts->deletes);
	values[5] = Int64GetDatum(counts->poisoned);
	values[6] = Int64GetDatum(counts->expired);
}
