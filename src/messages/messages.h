/*-------------------------------------------------------------------------
 *
 * messages.h
 *		The messages table and what acts on its rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_MESSAGES_H
#define QUEUE_MESSAGES_H

#include "queue.h"
#include "messages/rules.h"

#include "executor/spi.h"
#include "storage/lwlock.h"
#include "access/sdir.h"
#include "executor/tuptable.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

/*
 * table.c: the columns of queue_storage.messages, in the order of the table
 * of version 1.7.  The library runs on the table of an earlier version
 * until ALTER EXTENSION UPDATE, which holds them in another order and lacks
 * the later ones, so a column is reached through where the table found has
 * it: MSG_ATTNUM, its attribute number (0 when the table lacks it), and
 * MSG_INDEX, its place in a slot's tts_values and tts_isnull.
 */
typedef enum MessageColumn
{
	MSG_MESSAGE_ID = 1,
	MSG_QUEUE_ID,
	MSG_INSERTED_AT,
	MSG_EXPIRES_AT,
	MSG_PRIORITY,				/* from version 1.3 on */
	MSG_GROUP_ID,				/* from version 1.3 on */
	MSG_SOURCE_QUEUE,
	MSG_VISIBLE_AT,
	MSG_DEQUEUE_COUNT,
	MSG_LAST_LEASE,
	MSG_POP_RECEIPT,
	MSG_HOLDER_PID,
	MSG_HOLDER_START,
	MSG_FIRST_DEQUEUED_AT,		/* from version 1.6 on */
	MSG_HEADERS,
	MSG_BODY,
	MSG_COLUMN_COUNT = MSG_BODY
} MessageColumn;

extern AttrNumber queue_message_attnums[MSG_COLUMN_COUNT + 1];
#define MSG_ATTNUM(column)	(queue_message_attnums[column])
#define MSG_INDEX(column)	(queue_message_attnums[column] - 1)
#define MSG_HAS(column)		(queue_message_attnums[column] != 0)

typedef enum MessagesIndex
{
	MESSAGES_PKEY,				/* (message_id) */
	MESSAGES_CLAIM,				/* (queue_id, visible_at, message_id), priority 0
								 * from 1.3 on */
	MESSAGES_PRIORITY,			/* (queue_id, priority DESC, visible_at,
								 * message_id) of the other priorities (1.3) */
	MESSAGES_GROUP,				/* (queue_id, group_id, message_id) of the
								 * messages of a group (1.3) */
	MESSAGES_INDEX_COUNT
} MessagesIndex;

/* indexes.c: the indexes one call has opened */
typedef struct MessagesIndexes MessagesIndexes;

typedef struct MessagesTable
{
	Relation	rel;
	Snapshot	snapshot;		/* the call's, taken as SPI takes one */
	CommandId	cid;			/* the command id its changes carry */
	struct EState *estate;		/* for index entries; NULL for deletes */
	struct ResultRelInfo *rri;
	MessagesIndexes *indexes;	/* for index entries; NULL for deletes */
} MessagesTable;

extern void queue_messages_open(MessagesTable *table, CmdType cmd,
								const int *changed, int count);
extern void queue_messages_close(MessagesTable *table);
extern bool queue_messages_find(struct IndexScanDescData *scan, int64 message_id,
								TupleTableSlot *slot);
extern void queue_messages_copy_version(TupleTableSlot *to, TupleTableSlot *from);
extern bool queue_messages_has_index(MessagesIndex which);
extern Relation queue_messages_index(MessagesIndex which);
extern void queue_message_arrives(int32 queue_id, Datum priority, bool isnull);
extern void queue_messages_add_index_entries(MessagesTable *table,
											 TupleTableSlot *slot, bool update,
											 bool only_summarizing);
pg_noreturn extern void queue_messages_serialization_failure(void);
extern int64 queue_messages_next_id(void);

/* indexes.c */
extern MessagesIndexes *queue_messages_open_indexes(struct ResultRelInfo *rri);
extern void queue_messages_select_indexes(MessagesIndexes *call,
										  struct ResultRelInfo *rri,
										  struct EState *estate,
										  TupleTableSlot *slot);
extern void queue_messages_close_indexes(MessagesIndexes *call);

/* insert.c: the arguments of a put, checked by its caller */
typedef struct PutTiming
{
	int64		delay;			/* initial invisibility */
	bool		delay_given;	/* false: the queue's delay (insert.c) */
	int64		ttl;			/* -1: never expires */
	bool		ttl_given;		/* false: the queue's message_ttl */
} PutTiming;

/*
 * What 1.3 added to a put, one entry per message: its group, its
 * deduplication_id and its priority (an array NULL: none given).
 */
typedef struct PutOrdering
{
	Datum	   *group_ids;
	bool	   *group_nulls;
	Datum	   *deduplication_ids;
	bool	   *deduplication_nulls;
	int16	   *priorities;
} PutOrdering;

/* A put's receipt: the columns of the type queue_receipt, in order. */
#define QUEUE_RECEIPT_NATTS 7		/* 5 before version 1.3 */
typedef struct PutReceipt
{
	Datum		values[QUEUE_RECEIPT_NATTS];
	bool		nulls[QUEUE_RECEIPT_NATTS];
} PutReceipt;

extern PutReceipt *queue_insert_messages(const QueueInfo *queue, const PutTiming *timing,
										 const Datum *bodies, const Datum *headers,
										 const bool *header_nulls,
										 const PutOrdering *ordering, int count);

/* claim_starts.c: where claims start, and the writers' clock */
typedef struct ClaimTicket
{
	TimestampTz start;			/* scan from visible_at >= start */
	bool		from_bottom;	/* start is the bottom: nothing trusted */
	TimestampTz limit;			/* the start may not move past this */
	bool		skip_levels;	/* the queue holds no message at a priority
								 * other than 0: no walk of messages_priority */
	bool		levels_quiet;	/* no writer of such a message was under way */
	uint64		level_writes;	/* how many times one registered, so far */
} ClaimTicket;

extern Size queue_claim_starts_size(void);
extern void queue_claim_starts_attach(LWLock *lock);
extern TimestampTz queue_writer_now(void);
extern TimestampTz queue_claim_begin(int32 queue_id, ClaimTicket *ticket);
extern void queue_claim_end(int32 queue_id, const ClaimTicket *ticket,
							TimestampTz first_alive, TimestampTz now);
extern void queue_levels_written(int32 queue_id);
extern bool queue_levels_may_mark(int32 queue_id, const ClaimTicket *ticket);
extern void queue_levels_found_empty(int32 queue_id, const ClaimTicket *ticket,
									 TimestampTz now);

/* claim.c */
extern int	queue_claim(FunctionCallInfo fcinfo, bool status_column,
						const QueueInfo *queue, int want,
						int64 visibility_timeout, bool release_on_disconnect,
						int *poisoned);

/* The groups of the messages that left a queue in one call. */
typedef struct GroupsLeft
{
	Datum	   *group_ids;
	int			count;
	int			size;
} GroupsLeft;

/* by_receipt.c: what became of one message a delete or update was asked for */
typedef enum HeldOutcome
{
	HELD_DONE,
	HELD_NOT_FOUND,				/* gone, expired, another queue's, never was */
	HELD_RECEIPT_MISMATCH,		/* there, but the receipt is not its newest */
	HELD_TOO_LARGE				/* a new body or headers would not fit */
} HeldOutcome;

/* retained.c: the table of the messages kept after their delete (1.9) */
typedef struct RetainedTable
{
	Relation	rel;			/* NULL: not opened yet */
	const struct RetainedShape *shape;	/* what retained.c knows of it */
	Relation   *indexes;			/* those ready for inserts */
	struct IndexInfo **index_infos;	/* the call's copies of theirs */
	TupleTableSlot *slot;
} RetainedTable;

extern void queue_retained_keep(RetainedTable *retained, TupleTableSlot *deleted,
								TimestampTz deleted_at, CommandId cid);
extern void queue_retained_close(RetainedTable *retained);

/* The messages table open for acting on messages by id and receipt. */
typedef struct HeldMessages
{
	MessagesTable table;
	Relation	index;
	struct IndexScanDescData *scan;
	TupleTableSlot *slot;		/* the version found */
	TupleTableSlot *new_version;	/* an update's new version */
	const QueueInfo *queue;
	TimestampTz now;
	int64		size;			/* for HELD_TOO_LARGE */
	GroupsLeft	left;				/* groups of the messages that left */
	RetainedTable retained;		/* where a queue with a retention keeps deletes */
} HeldMessages;

/*
 * What an update changes (body and headers only if has_...).  A release
 * (queue_release) sets no visible_at: each message's is its retry delay
 * from now, and at the poison limit it goes to the poison queue.
 */
typedef struct MessageChange
{
	bool		release;
	TimestampTz visible_at;
	const pg_uuid_t *receipt;
	bool		has_body;
	Datum		body;
	bool		has_headers;
	Datum		headers;
} MessageChange;

extern const char *const queue_held_status[];

extern void queue_held_begin(HeldMessages *held, const QueueInfo *queue,
							 CmdType cmd, TimestampTz now);
extern HeldOutcome queue_held_delete(HeldMessages *held, int64 message_id,
									 const pg_uuid_t *receipt);
extern HeldOutcome queue_held_update(HeldMessages *held, int64 message_id,
									 const pg_uuid_t *receipt,
									 const MessageChange *change, bool *poisoned);
extern void queue_held_end(HeldMessages *held);
pg_noreturn extern void queue_held_report(const HeldMessages *held, int64 message_id,
										  HeldOutcome outcome);


/* id_locks.c: the spaces of our advisory locks (field4 of the lock tag) */
typedef enum QueueIdLockSpace
{
	QUEUE_LOCK_GROUP = 0x5155,	/* a message group: puts into it, its turn */
	QUEUE_LOCK_DEDUPLICATION = 0x5156	/* a deduplication id a batch reserves */
} QueueIdLockSpace;

extern uint32 queue_id_lock_key(Datum id);
extern void queue_id_locks_take(int32 queue_id, QueueIdLockSpace space,
								const Datum *ids, const bool *nulls, int count);
extern bool queue_id_lock_try(int32 queue_id, QueueIdLockSpace space, Datum id);

/* groups.c */
typedef struct GroupWalk
{
	Relation	heap;
	Snapshot	snapshot;
	Relation	index;			/* messages_group, opened by the first walk */
	struct IndexScanDescData *scan;
	TupleTableSlot *slot;
	int32		queue_id;
	TimestampTz now;
	ScanDirection direction;	/* of the walk under way */
	Datum		group_id;		/* what queue_group_turn_of asks about */
	int64		message_id;
} GroupWalk;

extern bool queue_group_walk_begin(GroupWalk *walk, Relation heap, Snapshot snapshot,
								   int32 queue_id, TimestampTz now);
extern void queue_group_walk_end(GroupWalk *walk);
extern bool queue_group_turn_of(GroupWalk *walk, Datum group_id, int64 message_id);
extern TupleTableSlot *queue_group_next(GroupWalk *walk, Datum group_id, int64 after);
extern bool queue_message_group(TupleTableSlot *slot, Datum *group_id);
extern void queue_groups_note_leaving(GroupsLeft *left, TupleTableSlot *slot);
extern void queue_groups_note_array(GroupsLeft *left, Datum array);
extern void queue_groups_advance(int32 queue_id, GroupsLeft *left, TimestampTz now);
extern bool *queue_groups_occupied(MessagesTable *table, int32 queue_id,
								   const Datum *group_ids, const bool *nulls,
								   int count, TimestampTz now, int *first);

/* poison.c */
extern void queue_poison_version(Datum *values, bool *isnull,
								 const QueueInfo *queue, TimestampTz now);
extern int	queue_move_to_poison(const QueueInfo *queue, const int64 *ids,
								 int count, TimestampTz now, bool *group_busy);
extern void queue_count_poisoned(const QueueInfo *queue, int count);

/* receipts.c */
extern pg_uuid_t *queue_new_receipts(int count);
extern Datum queue_new_receipt_array(int count);
extern Datum queue_receipt_datum(FunctionCallInfo fcinfo, const Datum *values,
								 const bool *nulls);
extern Datum queue_receipt_of(FunctionCallInfo fcinfo, TupleTableSlot *slot);

/* deduplication.c */
extern bool queue_deduplication_reserve(const QueueInfo *queue, Datum deduplication_id,
										TimestampTz now, Datum *receipt,
										bool *receipt_nulls);
extern void queue_deduplication_lock_batch(const QueueInfo *queue, const Datum *ids,
										   const bool *nulls, int count);
extern int64 queue_deduplication_forget(TimestampTz now, int batch_size);

/* session_leases.c */
extern void queue_session_leases_taken(void);
extern void queue_session_leases_release(void);

#endif							/* QUEUE_MESSAGES_H */
