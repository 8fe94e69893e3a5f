/*-------------------------------------------------------------------------
 *
 * queue.h
 *		Declarations shared by the files of the queue extension.
 *
 * Who does what:
 *	queue.c		module entry point
 *	arguments.c	checking what the caller passed (names, timeouts, sizes)
 *	storage.c	running SQL as the extension owner with a pinned search_path
 *	plans.c		every SQL statement the extension runs, prepared once
 *	catalog.c	finding queues by name, the per-backend cache, queue locks
 *	permissions.c	per-queue permissions; queue_grant, queue_revoke
 *	counters.c	the per-queue counters shown by queue_stats
 *	shared_counters.c	those counters in shared memory between sweeps
 *	receipts.c	pop receipts: making them, explaining a refusal
 *	poison.c	moving messages to a poison queue; queue_redrive
 *	wait.c		queue_get's wait, woken when a put commits
 *	snapshot.c	letting go of the caller's snapshot while a get waits
 *	shmem.c		the extension's shared memory
 *	admin.c		queue_create, queue_alter, queue_drop, queue_clear
 *	stats.c		queue_list, queue_stats, queue_inspect
 *	put.c		queue_put, queue_put_batch
 *	get.c		queue_get, queue_peek
 *	messages_table.c	the messages table without the executor
 *	messages_indexes.c	its indexes, opened for new row versions
 *	claim.c		queue_get's claim, on the messages table directly
 *	claim_start.c	where a queue's claims start walking (shared memory)
 *	update.c	queue_update
 *	delete.c	queue_delete; deleting by id and receipt, one or many
 *	batch.c		queue_delete_batch, queue_update_batch
 *	maintain.c	the sweep of expired and poison messages; queue_maintain
 *	launcher.c	the launcher: one worker per database with the extension
 *	worker.c	the worker: sweeps its database every maintenance_interval
 *	vacuum.c	the worker vacuums the messages table when enough rows changed
 *	registry.c	which database has a running worker (shared memory)
 *	utility.c	stops a worker before DROP DATABASE and its kin; DISCARD ALL
 *	session_leases.c	a session's release_on_disconnect leases, ended at DISCARD ALL
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_H
#define QUEUE_H

#include "postgres.h"

#include "compat.h"
#include "fmgr.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "nodes/nodes.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
#include "storage/lockdefs.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

/* Limits of the SQL API (README: API). */
#define QUEUE_NAME_MIN_LEN			3
#define QUEUE_NAME_MAX_LEN			63
#define QUEUE_POISON_SUFFIX			"-poison"
#define QUEUE_MAX_VISIBILITY		(7 * USECS_PER_DAY)
#define QUEUE_MAX_WAIT				(20 * USECS_PER_SEC)
#define QUEUE_MAX_MESSAGES			1000
#define QUEUE_MAX_BATCH				1000
#define QUEUE_MAX_INSPECT			10000
#define QUEUE_MAX_MESSAGE_SIZE		(1024 * 1024 * 1024 - 1)

/* A ttl of exactly -1 second means "never expires" (Azure's -1). */
#define QUEUE_TTL_NEVER_MARKER		(-USECS_PER_SEC)

/* Our own SQLSTATEs, class QU. */
#define ERRCODE_QUEUE_MESSAGE_NOT_FOUND		MAKE_SQLSTATE('Q','U','4','0','4')
#define ERRCODE_QUEUE_RECEIPT_MISMATCH		MAKE_SQLSTATE('Q','U','4','0','9')

/*
 * A queue's settings as the C code uses them: durations in microseconds.
 * message_ttl < 0 means messages never expire; max_dequeue_count 0 means no
 * poison routing.
 */
typedef struct QueueInfo
{
	char		name[QUEUE_NAME_MAX_LEN + 1];	/* first: the cache's hash key */
	int32		queue_id;
	int64		visibility_timeout;
	int64		message_ttl;
	int32		max_dequeue_count;
	int32		max_message_size;
	int32		poison_queue_id;
	bool		is_poison;
} QueueInfo;

/* queue.c: settings */
extern bool queue_enable_worker;
extern int	queue_maintenance_interval;
extern int	queue_maintenance_batch_size;
extern int	queue_vacuum_threshold;
extern bool queue_durable_counters;

/* arguments.c */
extern char *queue_name_arg(FunctionCallInfo fcinfo, int argno);
extern void queue_check_name(const char *name);
extern void queue_require_arg(FunctionCallInfo fcinfo, int argno,
							  const char *argname, const char *queue);
extern int64 queue_duration_arg(FunctionCallInfo fcinfo, int argno,
								const char *argname, const char *queue);
extern int32 queue_count_arg(FunctionCallInfo fcinfo, int argno,
							 const char *argname, const char *queue,
							 int32 min, int32 max);
extern int64 queue_interval_usecs(const Interval *interval,
								  const char *argname, const char *queue);
extern void queue_check_duration(int64 usecs, int64 min, bool min_inclusive,
								 int64 max, const char *argname,
								 const char *queue, const Interval *given);
extern void queue_check_count(int32 value, int32 min, int32 max,
							  const char *argname, const char *queue);
extern TimestampTz queue_time_plus(TimestampTz t, int64 usecs,
								   const char *argname, const char *queue);
extern Interval *queue_usecs_interval(int64 usecs);

/* storage.c */
typedef struct StorageSession
{
	Oid			saved_userid;
	int			saved_sec_context;
	int			guc_nestlevel;	/* 0 until its first statement */
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
	PLAN_QUEUE_INSERT,
	PLAN_QUEUE_DELETE,
	PLAN_QUEUE_PARENT,
	PLAN_QUEUE_LIST,
	PLAN_QUEUE_STATS,
	PLAN_QUEUE_POISONING,
	PLAN_GRANT_CHECK,
	PLAN_GRANT_INSERT,
	PLAN_GRANT_DELETE,
	PLAN_GRANTS_DELETE_QUEUE,
	PLAN_MESSAGES_DELETE_ALL,
	PLAN_COUNTERS_DELETE,
	PLAN_COUNTERS_BUMP,
	PLAN_COUNTERS_ADD,
	PLAN_COUNTERS_ADD_SHARED,
	PLAN_COUNTERS_FOLD,
	PLAN_PEEK,
	PLAN_UPDATE,
	PLAN_UPDATE_BATCH,
	PLAN_INSPECT,
	PLAN_REDRIVE,
	PLAN_QUEUE_ALTER,
	PLAN_MESSAGES_MARK_LAST_LEASE,
	PLAN_DIAGNOSE,
	PLAN_POISON_CANDIDATES,
	PLAN_POISON_MOVE,
	PLAN_HELD_LEASES,
	PLAN_RELEASE_ORPHANS,
	PLAN_RELEASE_SESSION,
	PLAN_EXPIRE,
	QUEUE_PLAN_COUNT
} QueuePlanId;

extern uint64 queue_plan_run(QueuePlanId id, Datum *values, const char *nulls);
extern Datum queue_message_id_array(const Datum *ids, int count);

/* catalog.c */
extern void queue_catalog_init(void);
extern Oid	queue_storage_relid(const char *table);
extern Oid	queue_catalog_relid(void);
extern Oid	queue_storage_owner(void);
extern bool queue_find(const char *name, QueueInfo *info);
extern void queue_open(const char *name, LOCKMODE lockmode, int permissions,
					   QueueInfo *info);
extern bool queue_try_lock(int32 queue_id, LOCKMODE lockmode);
extern void queue_catalog_changed(void);
extern QueueInfo *queue_info_from_tuple(HeapTuple tuple, TupleDesc tupdesc,
										QueueInfo *info);

/* permissions.c: the permissions, as bits */
#define QUEUE_PERM_SEND		0x01
#define QUEUE_PERM_PROCESS	0x02
#define QUEUE_PERM_READ		0x04
#define QUEUE_PERM_MANAGE	0x08
#define QUEUE_PERM_ANY		0x0F

extern bool queue_caller_holds_all(void);
extern void queue_require_permission(int32 queue_id, const char *queue,
									 int permissions);

/* counters.c */
typedef struct QueueCounts
{
	int64		puts;
	int64		gets;
	int64		deletes;
	int64		poisoned;
	int64		expired;
} QueueCounts;

extern bool queue_counts_zero(const QueueCounts *counts);
extern void queue_counts_add(QueueCounts *to, const QueueCounts *counts);
#define QUEUE_COUNTS_PARAMS 7
extern void queue_counts_params(Datum *values, int32 queue_id, int32 shard,
								const QueueCounts *counts);
extern void queue_counters_add(int32 queue_id, const QueueCounts *counts);
extern void queue_counters_pending(int32 queue_id, QueueCounts *counts);
extern void queue_counters_forget(int32 queue_id);
extern void queue_counters_sweep(void);

/*
 * shared_counters.c.  The sweep adds what shared memory counted to the
 * counters row of shard QUEUE_SHARED_SHARD; prepared transactions count in
 * rows of their own, below it (counters.c).
 */
#define QUEUE_SHARED_SHARD	(-1)

extern Size queue_shared_counters_size(void);
extern void queue_shared_counters_attach(LWLock *lock);
extern bool queue_shared_counters_enabled(void);
extern bool queue_shared_counters_exist(Oid catalog, int32 queue_id);
extern bool queue_shared_counters_reserve(Oid catalog, int32 queue_id);
extern void queue_shared_counters_add(Oid catalog, int32 queue_id,
									  const QueueCounts *counts);
extern void queue_shared_counters_read(int32 queue_id, QueueCounts *counts);
extern void queue_shared_counters_forget(int32 queue_id);
extern int	queue_shared_counters_write(void);

/* receipts.c */
extern pg_uuid_t *queue_new_receipts(int count);
extern Datum queue_new_receipt_array(int count);
#define QUEUE_RECEIPT_NATTS 5
extern Datum queue_receipt_datum(FunctionCallInfo fcinfo, const Datum *values,
								 const bool *nulls);
extern Datum queue_receipt_result(FunctionCallInfo fcinfo, HeapTuple row,
								  TupleDesc rowdesc);
pg_noreturn extern void queue_report_refusal(const QueueInfo *queue, int64 message_id,
								 pg_uuid_t *receipt, TimestampTz now,
								 Datum new_body, bool has_body,
								 Datum new_headers, bool has_headers);

/* poison.c */
extern SPITupleTable *queue_move_to_poison(const QueueInfo *queue,
										  Datum message_ids, TimestampTz now);
extern void queue_count_poisoned(const QueueInfo *queue, int count);
extern bool queue_at_dequeue_limit(const QueueInfo *queue, int32 dequeue_count);

/* wait.c */
extern Size queue_waiters_size(void);
extern void queue_waiters_attach(LWLock *lock);
extern void queue_wake_at_commit(int32 queue_id);
extern void queue_wake_returned_queues(void);
extern void queue_wait_begin(int32 queue_id);
extern void queue_wait_end(void);
extern void queue_wait_for_messages(TimestampTz deadline);

/* snapshot.c */
extern bool queue_snapshot_can_release(FunctionCallInfo fcinfo);
extern void queue_snapshot_release(void);

/* maintain.c */
extern int64 queue_expire_batch(TimestampTz now, int batch_size);
extern int	queue_poisoning_queues(QueueInfo **queues, MemoryContext context);
extern int64 queue_release_orphans(TimestampTz now);
extern int64 queue_poison_batch(const QueueInfo *queue, TimestampTz now,
								int batch_size);

/* session_leases.c */
extern void queue_session_leases_taken(void);
extern void queue_session_leases_release(void);

/* vacuum.c */
extern int64 queue_vacuum_if_due(void);

/* launcher.c, worker.c, utility.c */
extern void queue_bgworker_sleep(long timeout_ms);
extern void queue_launcher_register(void);
extern void queue_utility_hook_install(void);

/* claim_start.c */
typedef struct ClaimTicket
{
	TimestampTz start;			/* scan from visible_at >= start */
	bool		from_bottom;	/* start is the bottom: nothing trusted */
	TimestampTz limit;			/* the start may not move past this */
} ClaimTicket;

extern Size queue_claim_starts_size(void);
extern void queue_claim_starts_attach(LWLock *lock);
extern TimestampTz queue_writer_now(void);
extern TimestampTz queue_claim_begin(int32 queue_id, ClaimTicket *ticket);
extern void queue_claim_end(int32 queue_id, const ClaimTicket *ticket,
							TimestampTz first_alive, TimestampTz now);

/* registry.c */
extern Size queue_registry_size(void);
extern void queue_registry_attach(LWLock *lock);

/* shmem.c */
extern void queue_shmem_install(void);
extern bool queue_registry_claim(Oid dboid);
extern pid_t queue_registry_worker(Oid dboid);
extern bool queue_registry_paused(Oid dboid);
extern void queue_registry_pause(Oid dboid, TimestampTz until);

/* messages_table.c: the columns of queue_storage.messages, in order */
typedef enum MessageColumn
{
	MSG_MESSAGE_ID = 1,
	MSG_QUEUE_ID,
	MSG_VISIBLE_AT,
	MSG_EXPIRES_AT,
	MSG_DEQUEUE_COUNT,
	MSG_LAST_LEASE,
	MSG_POP_RECEIPT,
	MSG_INSERTED_AT,
	MSG_SOURCE_QUEUE,
	MSG_HOLDER_PID,
	MSG_HOLDER_START,
	MSG_HEADERS,
	MSG_BODY
} MessageColumn;
#define MESSAGE_NATTS MSG_BODY

typedef enum MessagesIndex
{
	MESSAGES_PKEY,				/* (message_id) */
	MESSAGES_CLAIM				/* (queue_id, visible_at, message_id) */
} MessagesIndex;

typedef struct MessagesTable
{
	Relation	rel;
	Snapshot	snapshot;		/* the call's, taken as SPI takes one */
	CommandId	cid;			/* the command id its changes carry */
	struct EState *estate;		/* for index entries; NULL for deletes */
	struct ResultRelInfo *rri;
} MessagesTable;

extern void queue_messages_open(MessagesTable *table, CmdType cmd,
								const int *changed, int count);
extern void queue_messages_close(MessagesTable *table);
extern Relation queue_messages_index(MessagesIndex which);
extern void queue_messages_add_index_entries(MessagesTable *table,
											 TupleTableSlot *slot, bool update,
											 bool only_summarizing);
extern bool queue_message_alive_in(TupleTableSlot *slot, int32 queue_id,
								   TimestampTz now);
pg_noreturn extern void queue_messages_serialization_failure(void);
extern int64 queue_messages_next_id(void);

/* messages_indexes.c */
extern void queue_messages_open_indexes(struct ResultRelInfo *rri);

/* claim.c */
extern int	queue_claim(FunctionCallInfo fcinfo, const QueueInfo *queue,
						int want, int64 visibility_timeout,
						bool release_on_disconnect, int *poisoned);

/* delete.c: what became of one message a delete was asked for */
typedef enum DeleteOutcome
{
	DELETE_DONE,
	DELETE_NOT_FOUND,			/* gone, expired, another queue's, never was */
	DELETE_RECEIPT_MISMATCH		/* there, but the receipt is not its newest */
} DeleteOutcome;

/* The messages table open for deleting messages by id, one after another. */
typedef struct MessageDeleter
{
	MessagesTable table;
	Relation	index;
	struct IndexScanDescData *scan;
	TupleTableSlot *slot;
	int32		queue_id;
	TimestampTz now;
} MessageDeleter;

extern void queue_deleter_begin(MessageDeleter *deleter, int32 queue_id,
								TimestampTz now);
extern DeleteOutcome queue_deleter_delete(MessageDeleter *deleter,
										  int64 message_id,
										  const pg_uuid_t *receipt);
extern void queue_deleter_end(MessageDeleter *deleter);

/* put.c */
extern int64 queue_message_size(Datum body, Datum headers, bool has_headers);
extern void queue_check_headers(Datum headers, const char *queue);
pg_noreturn extern void queue_report_too_large(const QueueInfo *queue, int64 size,
								   int position);

#endif							/* QUEUE_H */
