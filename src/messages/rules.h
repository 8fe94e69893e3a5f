/*-------------------------------------------------------------------------
 *
 * rules.h
 *		The rules of a message, each decided here and nowhere else.
 *
 * A call acts on messages either one row at a time through the table
 * access method (put, get, update, delete and their batches) or as a set
 * through a prepared statement (peek, stats, inspect, redrive, the sweep).
 * The first kind asks the C functions below; the second writes the same
 * rule into its SQL with the macro beside the function, so that the two
 * forms of a rule sit together and change together.  A rule with no macro
 * is never decided in SQL.  ROW is the column prefix of the statement ("" or
 * "m."), the other arguments are its parameters ("$2").
 *
 *	alive		in its queue, and not expired
 *	visible		visible_at has come
 *	claim order	highest priority first, then oldest visible:
 *				(priority DESC, visible_at, message_id)
 *	group turn	a message of a group is handed out only as its group's
 *				first, and while none of its group is in flight
 *	receipt		only the newest pop receipt acts on a message
 *	size		body and headers count against max_message_size
 *	poison limit	handed out max_dequeue_count times: next stop, poison
 *
 *-------------------------------------------------------------------------
 */
#ifndef QUEUE_MESSAGES_RULES_H
#define QUEUE_MESSAGES_RULES_H

#include "queue.h"

#include "executor/tuptable.h"

/*
 * Alive: the message in slot belongs to queue_id and has not expired at
 * now (expires_at NULL: it never expires).
 */
extern bool queue_message_alive_in(TupleTableSlot *slot, int32 queue_id,
								   TimestampTz now);
#define SQL_ALIVE(ROW, NOW) \
	"(" ROW "expires_at IS NULL OR " ROW "expires_at > " NOW ")"

/* Visible: its visible_at has come. */
extern bool queue_message_visible(TupleTableSlot *slot, TimestampTz now);
#define SQL_VISIBLE(ROW, NOW) "(" ROW "visible_at <= " NOW ")"

/*
 * Claim order: priority, highest first, then (visible_at, message_id).
 * queue_get walks the levels above 0 in messages_priority, level 0 in the
 * claim index (queue_id, visible_at, message_id), then the levels below 0
 * (claim.c); a statement that hands messages out in the same order sorts
 * by it.  Tables of versions before 1.3 have no priority column: every
 * message is at level 0 there.
 */
#define SQL_CLAIM_ORDER(ROW) ROW "priority DESC, " ROW "visible_at, " ROW "message_id"
#define SQL_CLAIM_ORDER_1_0(ROW) ROW "visible_at, " ROW "message_id"

/*
 * Waiting: a message of a group behind the group's first message is kept
 * out of every claim's way with visible_at 'infinity', until it is the
 * first (groups.c makes it visible then).
 */
#define QUEUE_WAITING_AT DT_NOEND
#define SQL_WAITING_AT "'infinity'::timestamptz"
extern bool queue_message_waiting(TupleTableSlot *slot);

/*
 * Group turn: messages of one group go out in put order (message_id), one
 * group in flight at a time.  A message of a group may be claimed only if
 * it is the first alive message of its group and, of the messages after it
 * that are not waiting, none is invisible (in flight); the messages after
 * that, in order, may then go out with it in the same get.
 * queue_group_turn asks it of a message, with before walking the alive
 * messages of its group put before it and after those put after it, in put
 * order (groups.c reads them from messages_group).  SQL_GROUP_TURN is the
 * same rule for a statement.
 */
typedef TupleTableSlot *(*QueueGroupNext) (void *walk);
extern bool queue_group_turn(QueueGroupNext before, QueueGroupNext after,
							 void *walk, TimestampTz now);
#define SQL_GROUP_TURN(ROW, NOW) \
	"(" ROW "group_id IS NULL OR NOT EXISTS (" \
	"SELECT 1 FROM queue_storage.messages g WHERE g.queue_id = " ROW "queue_id " \
	"AND g.group_id COLLATE \"C\" = " ROW "group_id AND " SQL_ALIVE("g.", NOW) " AND (" \
	"g.message_id < " ROW "message_id OR (g.visible_at > " NOW \
	" AND g.visible_at < " SQL_WAITING_AT "))))"

/* Receipt: receipt (NULL: none given) is the newest of the message in slot. */
extern bool queue_receipt_matches(TupleTableSlot *slot, const pg_uuid_t *receipt);

/*
 * Size: the octets of the body plus those of the headers written as text.
 * queue_too_large says whether a size is past the queue's max_message_size,
 * queue_check_size raises 54000 if so; position
 * is the message's place in a batch (from 1), or 0 for a single message.
 */
extern int64 queue_message_size(Datum body, Datum headers, bool has_headers);
extern void queue_check_size(const QueueInfo *queue, Datum body, Datum headers,
							 bool has_headers, int position);
extern bool queue_too_large(const QueueInfo *queue, int64 size);
pg_noreturn extern void queue_report_too_large(const QueueInfo *queue, int64 size,
											   int position);
/*
 * Headers: a JSON object (name: value), as SQS message attributes are; of
 * a put to a queue, or of a message to a topic (kind "topic").
 */
extern void queue_check_headers(Datum headers, const char *queue);
extern void queue_check_headers_of(Datum headers, const char *kind, const char *name);

/*
 * Poison limit: the dequeue count at which a message, once visible again,
 * goes to the poison queue instead of to a consumer; 0 when the queue
 * routes no poison.  In SQL, LIMIT is a parameter holding it, NULL for 0.
 */
extern int32 queue_dequeue_limit(const QueueInfo *queue);
extern bool queue_at_dequeue_limit(const QueueInfo *queue, int32 dequeue_count);

/*
 * Retry delay: a message a consumer gives back as failed (queue_release)
 * after its delivery n (its dequeue_count) stays invisible for the queue's
 * retry_delay, with retry_backoff times 2^(n-1) and give or take up to
 * 10 % at random, never longer than retry_delay_max nor the longest
 * visibility timeout.  At the poison limit it goes to the poison queue
 * instead, whatever its delay.
 */
extern int64 queue_retry_delay(const QueueInfo *queue, int32 dequeue_count);
#define SQL_AT_DEQUEUE_LIMIT(ROW, LIMIT) \
	"coalesce(" ROW "dequeue_count >= " LIMIT ", false)"

#endif							/* QUEUE_MESSAGES_RULES_H */
