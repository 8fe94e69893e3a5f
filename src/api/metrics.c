/*-------------------------------------------------------------------------
 *
 * metrics.c
 *		queue_metrics: one row per queue and metric, for scrapers.
 *
 * The names follow Prometheus' conventions: counters (monotonic, since the
 * queue's creation) end in _total, gauges are counts at a moment.  The
 * message counts come from the worker's last census (worker/census.c), so a
 * scrape reads one row per queue, not the messages; queue_stats counts the
 * messages themselves.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"
#include "counters/counters.h"
#include "shmem/shmem.h"
#include "storage/storage.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(queue_metrics);

typedef enum MetricSource
{
	FROM_COUNT,					/* a bigint column of the statement */
	FROM_AGE,					/* an interval column, in seconds */
	FROM_COUNTER,				/* a counter: its column plus QueueCounts */
	FROM_CENSUS_AGE				/* the census' age, in seconds */
} MetricSource;

typedef struct MetricDefinition
{
	const char *name;
	const char *type;			/* "gauge" or "counter" */
	MetricSource source;
	const char *column;			/* of PLAN_QUEUE_METRICS */
} MetricDefinition;

static const MetricDefinition metrics[] = {
	{"queue_messages_visible", "gauge", FROM_COUNT, "visible"},
	{"queue_messages_in_flight", "gauge", FROM_COUNT, "in_flight"},
	{"queue_messages_delayed", "gauge", FROM_COUNT, "delayed"},
	{"queue_oldest_message_age_seconds", "gauge", FROM_AGE, "oldest_visible_age"},
	{"queue_census_age_seconds", "gauge", FROM_CENSUS_AGE, "taken_at"},
	{"queue_puts_total", "counter", FROM_COUNTER, "puts"},
	{"queue_gets_total", "counter", FROM_COUNTER, "gets"},
	{"queue_deletes_total", "counter", FROM_COUNTER, "deletes"},
	{"queue_poisoned_total", "counter", FROM_COUNTER, "poisoned"},
	{"queue_expired_total", "counter", FROM_COUNTER, "expired"},
};

/* A counter's part of what the table lacks. */
static int64
unwritten_part(const QueueCounts *counts, const char *column)
{
	if (strcmp(column, "puts") == 0)
		return counts->puts;
	if (strcmp(column, "gets") == 0)
		return counts->gets;
	if (strcmp(column, "deletes") == 0)
		return counts->deletes;
	if (strcmp(column, "poisoned") == 0)
		return counts->poisoned;
	return counts->expired;
}

/* An interval in seconds, a month counted as 30 days. */
static double
interval_seconds(const Interval *span)
{
	return (double) span->time / USECS_PER_SEC +
		((double) span->month * DAYS_PER_MONTH + span->day) * SECS_PER_DAY;
}

/*
 * The value of one metric of the statement's row: NULL while no census has
 * run; the oldest message's age is 0 where no message is visible.
 */
static bool
metric_value(const MetricDefinition *metric, SPITupleTable *rows, uint64 row,
			 const QueueCounts *unwritten, TimestampTz now, double *value)
{
	bool		isnull;
	bool		census_null;
	Datum		datum = queue_row_value(rows, row, metric->column, &isnull);

	(void) queue_row_value(rows, row, "taken_at", &census_null);
	switch (metric->source)
	{
		case FROM_COUNT:
			if (isnull)
				return false;
			*value = (double) DatumGetInt64(datum);
			return true;
		case FROM_AGE:
			if (census_null)
				return false;
			*value = isnull ? 0.0 :
				Max(0.0, interval_seconds(DatumGetIntervalP(datum)));
			return true;
		case FROM_CENSUS_AGE:
			if (isnull)
				return false;
			*value = (double) (now - DatumGetTimestampTz(datum)) / USECS_PER_SEC;
			return true;
		case FROM_COUNTER:
			*value = (double) (DatumGetInt64(datum) + unwritten_part(unwritten, metric->column));
			return true;
	}
	return false;
}

/*
 * queue_metrics(): for every queue the caller holds some permission on,
 * one row per metric: (queue, metric, type, value).
 */
Datum
queue_metrics(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	StorageSession session;
	PlanArgs	args;
	TimestampTz now = GetCurrentTimestamp();
	uint64		row;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	queue_storage_begin(&session);
	queue_registry_note_metrics_read(MyDatabaseId);

	queue_plan_begin(&args, PLAN_QUEUE_METRICS);
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_set(&args, "holds_all", BoolGetDatum(queue_caller_holds_all()));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));

	/* the counters read as queue_stats reads them: never going back */
	queue_shared_counters_read_begin();
	queue_plan_run(&args);
	for (row = 0; row < SPI_processed; row++)
	{
		SPITupleTable *rows = SPI_tuptable;
		bool		isnull;
		Datum		queue = queue_row_value(rows, row, "name", &isnull);
		int32		queue_id = DatumGetInt32(queue_row_value(rows, row, "queue_id", &isnull));
		QueueCounts unwritten;
		int			i;

		queue_counters_unwritten(queue_id, &unwritten);
		for (i = 0; i < lengthof(metrics); i++)
		{
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};
			double		value;

			values[0] = queue;
			values[1] = CStringGetTextDatum(metrics[i].name);
			values[2] = CStringGetTextDatum(metrics[i].type);
			nulls[3] = !metric_value(&metrics[i], rows, row, &unwritten, now, &value);
			values[3] = Float8GetDatum(nulls[3] ? 0.0 : value);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	queue_shared_counters_read_end();
	queue_storage_end(&session);
	return (Datum) 0;
}
