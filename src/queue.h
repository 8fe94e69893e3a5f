/*-------------------------------------------------------------------------
 *
 * queue.h
 *		Declarations shared by the files of the queue extension.
 *
 * The source is in rooms, one folder per part, each with its header; the
 * map is in CONTRIBUTING.md ("Layout").  A file includes only the headers
 * of the rooms it uses, and no two files use each other (the layout suite,
 * test/layout.py, checks it).
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
#define QUEUE_NAME_MIN_LEN			1
#define QUEUE_NAME_MAX_LEN			80
#define QUEUE_POISON_SUFFIX			"-poison"
#define QUEUE_FIFO_SUFFIX			".fifo"
#define QUEUE_MAX_VISIBILITY		(7 * USECS_PER_DAY)
#define QUEUE_MAX_WAIT				(20 * USECS_PER_SEC)
#define QUEUE_MAX_MESSAGES			1000
#define QUEUE_MAX_BATCH				1000
#define QUEUE_MAX_INSPECT			10000
#define QUEUE_MAX_MESSAGE_SIZE		(1024 * 1024 * 1024 - 1)
#define QUEUE_MAX_DEDUPLICATION_WINDOW	(7 * USECS_PER_DAY)
#define QUEUE_MAX_RETENTION			(365 * USECS_PER_DAY)
#define QUEUE_MAX_ID_LEN			128	/* a group_id or deduplication_id */
#define QUEUE_MIN_PRIORITY			(-100)
#define QUEUE_MAX_PRIORITY			100

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
	int64		deduplication_window;	/* 0 on the storage of 1.2 */
	int64		delay;			/* of a put naming none; 0 before 1.6 */
	/* from 1.8 on (before: none, not paused) */
	int64		retry_delay;	/* a released message's, rules.c */
	bool		retry_backoff;
	int64		retry_delay_max;	/* -1: no cap */
	bool		paused;			/* gets hand out nothing */
	/* from 1.9 on: how long a message a consumer deleted is kept; 0: not */
	int64		retention;
} QueueInfo;

/* settings.c */
extern void queue_settings_define(void);
extern bool queue_enable_worker;
extern int	queue_maintenance_interval;
extern int	queue_maintenance_batch_size;
extern int	queue_metrics_interval;
extern int	queue_vacuum_threshold;
extern bool queue_durable_counters;

/* arguments.c */
extern char *queue_name_arg(FunctionCallInfo fcinfo, int argno);
extern char *queue_name_arg_of(FunctionCallInfo fcinfo, int argno, const char *kind);
extern void queue_check_name(const char *name);
extern void queue_check_name_of(const char *name, const char *kind);
extern bool queue_name_is_fifo(const char *name);
extern void queue_require_arg(FunctionCallInfo fcinfo, int argno,
							  const char *argname, const char *queue);
extern void queue_require_arg_of(FunctionCallInfo fcinfo, int argno,
								 const char *argname, const char *kind,
								 const char *name);
extern int64 queue_duration_arg(FunctionCallInfo fcinfo, int argno,
								const char *argname, const char *queue);
extern void queue_check_max_messages_arg(FunctionCallInfo fcinfo, int argno,
										 const char *queue);
extern int32 queue_count_arg(FunctionCallInfo fcinfo, int argno,
							 const char *argname, const char *queue,
							 int32 min, int32 max);
extern int64 queue_interval_usecs(const Interval *interval,
								  const char *argname, const char *queue);
extern int64 queue_interval_usecs_of(const Interval *interval,
									 const char *argname, const char *kind,
									 const char *name);
extern void queue_check_duration(int64 usecs, int64 min, bool min_inclusive,
								 int64 max, const char *argname,
								 const char *queue, const Interval *given);
extern void queue_check_duration_of(int64 usecs, int64 min, bool min_inclusive,
									int64 max, const char *argname,
									const char *kind, const char *name,
									const Interval *given);
extern void queue_check_count(int32 value, int32 min, int32 max,
							  const char *argname, const char *queue);
extern void queue_check_count_of(int32 value, int32 min, int32 max,
								 const char *argname, const char *kind,
								 const char *name);
extern TimestampTz queue_time_plus(TimestampTz t, int64 usecs,
								   const char *argname, const char *queue);
extern Interval *queue_usecs_interval(int64 usecs);

/* The message ids and receipts of a batch function, checked (arguments.c). */
typedef struct QueueBatchEntry
{
	int64		message_id;
	int			position;		/* in the arrays, from 0 */
} QueueBatchEntry;

typedef struct QueueBatch
{
	int			count;
	Datum	   *ids;
	bool	   *id_nulls;
	Datum	   *receipts;
	bool	   *receipt_nulls;
	QueueBatchEntry *entries;	/* the ids not NULL, in id order */
	int			entry_count;
} QueueBatch;

extern void queue_batch_arg(FunctionCallInfo fcinfo, const char *name,
							int min_count, QueueBatch *batch);
extern const pg_uuid_t *queue_batch_receipt(const QueueBatch *batch, int position);


#endif							/* QUEUE_H */
