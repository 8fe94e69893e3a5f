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
#include "postgres.h"

#include "queue.h"
#include "counters/counters.h"
#include "worker/worker.h"
#include "queue_storage/queue_storage.h"

#include "access/htup_details.h"
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
	size_t		unwritten;		/* FROM_COUNTER: its field of QueueCounts */
} MetricDefinition;

static const MetricDefinition metrics[] = {
	{"queue_messages_visible", "gauge", FROM_COUNT, "visible"},
	{"queue_messages_in_flight", "gauge", FROM_COUNT, "in_flight"},
	{"queue_messages_delayed", "gauge", FROM_COUNT, "delayed"},
	{"queue_oldest_message_age_seconds", "gauge", FROM_AGE, "oldest_visible_age"},
	{"queue_census_age_seconds", "gauge", FROM_CENSUS_AGE, "taken_at"},
	{"queue_puts_total", "counter", FROM_COUNTER, "puts", offsetof(QueueCounts, puts)},
	{"queue_gets_total", "counter", FROM_COUNTER, "gets", offsetof(QueueCounts, gets)},
	{"queue_deletes_total", "counter", FROM_COUNTER, "deletes", offsetof(QueueCounts, deletes)},
	{"queue_poisoned_total", "counter", FROM_COUNTER, "poisoned", offsetof(QueueCounts, poisoned)},
	{"queue_expired_total", "counter", FROM_COUNTER, "expired", offsetof(QueueCounts, expired)},
	{"queue_paused", "gauge", FROM_COUNT, "paused"},	/* 1 while paused; from 1.8 on */
};

#define METRIC_COUNT lengthof(metrics)

/* An interval in seconds, a month counted as 30 days. */
static double
interval_seconds(const Interval *span)
{
	return (double) span->time / USECS_PER_SEC +
		((double) span->month * DAYS_PER_MONTH + span->day) * SECS_PER_DAY;
}

/*
 * The value of a metric whose column holds datum: NULL (false) while no
 * census has run; the oldest message's age is 0 where none is visible.
 */
static bool
metric_value(const MetricDefinition *metric, Datum datum, bool isnull,
			 bool no_census, const QueueCounts *unwritten, TimestampTz now,
			 double *value)
{
	switch (metric->source)
	{
		case FROM_COUNT:
			if (isnull)
				return false;
			*value = (double) DatumGetInt64(datum);
			return true;
		case FROM_AGE:
			if (no_census)
				return false;
			*value = isnull ? 0.0 : Max(0.0, interval_seconds(DatumGetIntervalP(datum)));
			return true;
		case FROM_CENSUS_AGE:
			if (isnull)
				return false;
			*value = Max(0.0, (double) (now - DatumGetTimestampTz(datum)) / USECS_PER_SEC);
			return true;
		case FROM_COUNTER:
			*value = (double) (DatumGetInt64(datum) +
							   *(const int64 *) ((const char *) unwritten + metric->unwritten));
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
	TimestampTz now;
	TupleDesc	desc;
	Datum	   *row_values;
	bool	   *row_nulls;
	Datum		names[METRIC_COUNT];
	Datum		types[METRIC_COUNT];
	int			at[METRIC_COUNT];
	int			name_at;
	int			id_at;
	int			taken_at;
	uint64		row;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	queue_storage_begin(&session);

	queue_plan_begin(&args, queue_storage_has_retries() ?
					 PLAN_QUEUE_METRICS_PAUSED : PLAN_QUEUE_METRICS);
	queue_plan_set(&args, "holds_all", BoolGetDatum(queue_caller_holds_all()));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));

	/*
	 * The counters read as queue_stats reads them, never going back: now,
	 * and the latest snapshot, once no sweep has counts in flight.
	 */
	queue_shared_counters_read_begin();
	now = GetCurrentTimestamp();
	queue_plan_set(&args, "now", TimestampTzGetDatum(now));
	queue_plan_run_latest(&args);
	/* someone watches these queues: the worker takes censuses (census.c) */
	if (SPI_processed > 0)
		queue_registry_note_metrics_read(MyDatabaseId);

	desc = SPI_tuptable->tupdesc;
	row_values = palloc(sizeof(Datum) * desc->natts);
	row_nulls = palloc(sizeof(bool) * desc->natts);
	name_at = queue_row_column(desc, "name");
	id_at = queue_row_column(desc, "queue_id");
	taken_at = queue_row_column(desc, "taken_at");
	for (i = 0; i < METRIC_COUNT; i++)
	{
		names[i] = CStringGetTextDatum(metrics[i].name);
		types[i] = CStringGetTextDatum(metrics[i].type);
		/* -1: a metric of a later version than the storage's */
		at[i] = SPI_fnumber(desc, metrics[i].column) - 1;
	}

	for (row = 0; row < SPI_processed; row++)
	{
		QueueCounts unwritten;

		heap_deform_tuple(SPI_tuptable->vals[row], desc, row_values, row_nulls);
		queue_counters_unwritten(DatumGetInt32(row_values[id_at]), &unwritten);
		for (i = 0; i < METRIC_COUNT; i++)
		{
			Datum		values[4];
			bool		nulls[4] = {false, false, false, false};
			double		value = 0.0;

			if (at[i] < 0)
				continue;
			values[0] = row_values[name_at];
			values[1] = names[i];
			values[2] = types[i];
			nulls[3] = !metric_value(&metrics[i], row_values[at[i]], row_nulls[at[i]],
									 row_nulls[taken_at], &unwritten, now, &value);
			values[3] = Float8GetDatum(value);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	queue_shared_counters_read_end();
	queue_storage_end(&session);
	return (Datum) 0;
}
