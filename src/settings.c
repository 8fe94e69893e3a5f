/*-------------------------------------------------------------------------
 *
 * settings.c
 *		The extension's settings (GUCs), queue.*; docs/operations.md lists them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "durability.h"

#include "utils/guc.h"

bool		queue_enable_worker = true;
int			queue_maintenance_interval = 1000;
int			queue_maintenance_batch_size = 1000;
int			queue_metrics_interval = 15;
int			queue_vacuum_threshold = 10000;
bool		queue_durable_counters = false;

static const struct config_enum_entry durability_options[] = {
	{"full", QUEUE_DURABILITY_FULL, false},
	{"at_least_once", QUEUE_DURABILITY_AT_LEAST_ONCE, false},
	{NULL, 0, false}
};

/* Defines the settings; every backend that loads the library does. */
void
queue_settings_define(void)
{
	DefineCustomBoolVariable("queue.enable_worker",
							 "Runs the background worker that deletes expired messages and moves poison messages.",
							 NULL,
							 &queue_enable_worker,
							 true,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("queue.maintenance_interval",
							"Time between two sweeps of a database by the background worker.",
							NULL,
							&queue_maintenance_interval,
							1000, 10, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("queue.metrics_interval",
							"Time between two counts of every queue's messages for queue_metrics, taken by the background worker while queue_metrics is read; 0: never.",
							NULL,
							&queue_metrics_interval,
							15, 0, 3600,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("queue.maintenance_batch_size",
							"Messages a sweep deletes or moves per statement; the worker commits after each.",
							NULL,
							&queue_maintenance_batch_size,
							1000, 1, 1000000,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("queue.vacuum_threshold",
							"Rows of the messages table updated or deleted since its last vacuum after which the worker vacuums it; 0: never.",
							NULL,
							&queue_vacuum_threshold,
							10000, 0, INT_MAX,
							PGC_SIGHUP, 0,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("queue.durable_counters",
							 "Writes the counters of queue_stats in each transaction, so that a crash loses none of them.",
							 "Off: they are kept in shared memory and written by each sweep; a crash loses those made since the last one.",
							 &queue_durable_counters,
							 false,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("queue.durability",
							 "Whether a transaction that only leased or acknowledged messages waits for its WAL flush.",
							 "full: as synchronous_commit says. at_least_once: it commits without waiting, so a crash may hand such messages out again; puts and every other write stay durable.",
							 &queue_durability,
							 QUEUE_DURABILITY_FULL,
							 durability_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("queue");
}
