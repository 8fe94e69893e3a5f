/*-------------------------------------------------------------------------
 *
 * queue_storage.h
 *		The queue_storage schema: running SQL there, the queues, permissions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_STORAGE_H
#define QUEUE_STORAGE_H

#include "queue.h"

#include "executor/spi.h"
#include "storage/lockdefs.h"

/* session.c */
typedef struct StorageSession
{
	Oid			saved_userid;
	int			saved_sec_context;
	int			guc_nestlevel;	/* 0 until its first statement */
	SubTransactionId subid;		/* the subtransaction it was opened in */
} StorageSession;

extern void queue_storage_init(void);
extern void queue_storage_prepare_sql(void);
extern void queue_storage_begin(StorageSession *session);
extern void queue_storage_begin_write(StorageSession *session,
									  const char *function);
extern void queue_storage_end(StorageSession *session);
extern Oid	queue_storage_caller(void);
extern void queue_store_rows(FunctionCallInfo fcinfo, SPITupleTable *rows);

/* plans.c */
typedef enum QueuePlanId
{
	PLAN_QUEUE_LOOKUP,
	PLAN_QUEUE_LOOKUP_ORDERING,
	PLAN_QUEUE_LOOKUP_ATTRIBUTES,
	PLAN_QUEUE_LOOKUP_RETRIES,
	PLAN_QUEUE_LOOKUP_RETENTION,
	PLAN_QUEUE_INSERT,
	PLAN_QUEUE_DELETE,
	PLAN_QUEUE_PARENT,
	PLAN_QUEUE_LIST,
	PLAN_QUEUE_LIST_ATTRIBUTES,
	PLAN_QUEUE_LIST_RETRIES,
	PLAN_QUEUE_LIST_RETENTION,
	PLAN_QUEUE_STATS,
	PLAN_QUEUE_STATS_ONE,
	PLAN_QUEUE_METRICS,
	PLAN_QUEUE_METRICS_PAUSED,
	PLAN_CENSUS,
	PLAN_QUEUE_POISONING,
	PLAN_GRANT_CHECK,
	PLAN_GRANT_INSERT,
	PLAN_GRANT_DELETE,
	PLAN_GRANTS_DELETE_QUEUE,
	PLAN_MESSAGES_DELETE_ALL,
	PLAN_MESSAGES_CLEAR,
	PLAN_COUNTERS_DELETE,
	PLAN_COUNTERS_BUMP,
	PLAN_COUNTERS_ADD,
	PLAN_COUNTERS_ADD_SHARED,
	PLAN_COUNTERS_FOLD,
	PLAN_PEEK,
	PLAN_PEEK_ORDERING,
	PLAN_PEEK_FIRST_DEQUEUED,
	PLAN_INSPECT,
	PLAN_INSPECT_ORDERING,
	PLAN_INSPECT_RETAINED,
	PLAN_REDRIVE,
	PLAN_REDRIVE_ORDERING,
	PLAN_REPLAY,
	PLAN_QUEUE_ALTER,
	PLAN_QUEUE_SET_DEDUPLICATION_WINDOW,
	PLAN_QUEUE_SET_ATTRIBUTES,
	PLAN_QUEUE_SET_RETRIES,
	PLAN_QUEUE_SET_PAUSED,
	PLAN_QUEUE_SET_RETENTION,
	PLAN_QUEUE_PAUSED,
	PLAN_MESSAGES_MARK_LAST_LEASE,
	PLAN_POISON_CANDIDATES,
	PLAN_HELD_LEASES,
	PLAN_RELEASE_ORPHANS,
	PLAN_RELEASE_SESSION,
	PLAN_DEDUP_FIRST,
	PLAN_DEDUP_FORGET,
	PLAN_DEDUP_DELETE_QUEUE,
	PLAN_RETAINED_REMOVE,
	PLAN_RETAINED_DELETE_QUEUE,
	PLAN_EXPIRE,
	PLAN_EXPIRE_CANDIDATES,
	PLAN_EXPIRE_ORDERING,
	PLAN_TOPIC_LOOKUP,
	PLAN_TOPIC_NAMED,
	PLAN_TOPIC_INSERT,
	PLAN_TOPIC_DELETE,
	PLAN_TOPIC_LIST,
	PLAN_SUBSCRIPTION_SET,
	PLAN_SUBSCRIPTION_DELETE,
	PLAN_SUBSCRIPTIONS_DELETE_QUEUE,
	PLAN_SCHEDULES_DUE,
	PLAN_SCHEDULE_FIRED,
	PLAN_SCHEDULE_SET,
	PLAN_SCHEDULE_QUEUE,
	PLAN_SCHEDULE_DELETE,
	PLAN_SCHEDULES_DELETE_QUEUE,
	PLAN_SCHEDULE_LIST,
	QUEUE_PLAN_COUNT
} QueuePlanId;

/* The arguments of one run of a statement, set by name. */
#define QUEUE_PLAN_MAX_PARAMS 9
typedef struct PlanArgs
{
	QueuePlanId id;
	Datum		values[QUEUE_PLAN_MAX_PARAMS];
	char		nulls[QUEUE_PLAN_MAX_PARAMS];
	bool		set[QUEUE_PLAN_MAX_PARAMS];
} PlanArgs;

extern void queue_plan_begin(PlanArgs *args, QueuePlanId id);
extern void queue_plan_set(PlanArgs *args, const char *name, Datum value);
extern void queue_plan_set_null(PlanArgs *args, const char *name);
extern void queue_plan_set_arg(PlanArgs *args, const char *name, FunctionCallInfo fcinfo,
							   int argno);
extern void queue_plan_set_new_expiry(PlanArgs *args, const char *name,
									  const QueueInfo *queue, TimestampTz now);
extern uint64 queue_plan_run(PlanArgs *args);
extern uint64 queue_plan_run_latest(PlanArgs *args);
extern uint64 queue_plan_run1(QueuePlanId id, const char *name, Datum value);
extern Datum queue_message_id_array(const Datum *ids, int count);
extern int	queue_row_column(TupleDesc desc, const char *column);
extern Datum queue_row_value(SPITupleTable *rows, uint64 row, const char *column,
							 bool *isnull);

/* schema.c */
extern void queue_schema_init(void);
extern Oid	queue_storage_relid(const char *table);
extern Oid	queue_storage_lock_relid(const char *table, LOCKMODE lockmode);
extern Oid	queue_catalog_relid(void);
extern Oid	queue_storage_owner(void);
extern bool queue_storage_has_ordering(void);
extern bool queue_storage_has_attributes(void);
extern bool queue_storage_has_retries(void);
extern bool queue_storage_has_retention(void);
extern bool queue_storage_has_topics(void);
extern bool queue_storage_has_schedules(void);
extern void queue_require_storage(bool present, const char *what, const char *version);

/* catalog.c */
extern void queue_catalog_init(void);
extern bool queue_find(const char *name, QueueInfo *info);
extern void queue_open(const char *name, LOCKMODE lockmode, int permissions,
					   QueueInfo *info);
extern bool queue_open_if_exists(const char *name, LOCKMODE lockmode, int permissions,
								 QueueInfo *info);
extern bool queue_try_lock(int32 queue_id, LOCKMODE lockmode);
extern void queue_lock_namespace(bool for_topic);
extern void queue_catalog_changed(void);
extern bool queue_still_paused(int32 queue_id);
extern QueueInfo *queue_info_from_row(SPITupleTable *rows, uint64 row,
									 QueueInfo *info);

/* permissions.c: the permissions, as bits */
#define QUEUE_PERM_SEND		0x01
#define QUEUE_PERM_PROCESS	0x02
#define QUEUE_PERM_READ		0x04
#define QUEUE_PERM_MANAGE	0x08
#define QUEUE_PERM_ANY		0x0F

/* Their names, in the order of the bits. */
#define QUEUE_PERMISSION_COUNT 4
extern const char *const queue_permission_names[QUEUE_PERMISSION_COUNT];

extern bool queue_caller_holds_all(void);
extern bool queue_holds_permission(int32 id, int permissions);
extern void queue_require_permission(int32 queue_id, const char *queue,
									 int permissions);
extern void queue_require_topic_permission(int32 topic_id, const char *topic,
										   int permissions);
extern void queue_store_shown_rows(FunctionCallInfo fcinfo, QueuePlanId id);


/* queue_rows.c */
extern int32 queue_insert_row(const char *name, Datum visibility_timeout,
							   Datum message_ttl, bool has_ttl,
							   int32 max_dequeue_count, int32 max_message_size,
							   int32 poison_queue_id, bool is_poison,
							   TimestampTz now);
pg_noreturn extern void queue_report_exists(const char *name);
extern int32 queue_poison_queue_for(const char *name, const char *poison_name,
									 Datum visibility_timeout,
									 int32 max_message_size, TimestampTz now);
extern void queue_poison_name_of(const char *name, char *poison_name, size_t size);
extern void queue_set_deduplication_window(int32 queue_id, FunctionCallInfo fcinfo,
										   int argno, const char *name);
extern void queue_plan_set_duration_arg(PlanArgs *args, FunctionCallInfo fcinfo, int argno,
										const char *argname, const char *queue);
extern void queue_set_retention(int32 queue_id, FunctionCallInfo fcinfo, int argno,
								const char *name);
extern void queue_set_retry_policy(int32 queue_id, FunctionCallInfo fcinfo, int first,
								   const char *name, bool creating);

#endif							/* QUEUE_STORAGE_H */
