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
 *	claim order	oldest visible first: (visible_at, message_id)
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
 * Claim order: the order of the claim index (queue_id, visible_at,
 * message_id), which queue_get walks (claim.c); a statement that hands
 * messages out in the same order sorts by it.
 */
#define SQL_CLAIM_ORDER(ROW) ROW "visible_at, " ROW "message_id"

/* Receipt: receipt (NULL: none given) is the newest of the message in slot. */
extern bool queue_receipt_matches(TupleTableSlot *slot, const pg_uuid_t *receipt);

/*
 * Size: the octets of the body plus those of the headers written as text.
 * queue_check_size raises 54000 past the queue's max_message_size; position
 * is the message's place in a batch (from 1), or 0 for a single message.
 */
extern int64 queue_message_size(Datum body, Datum headers, bool has_headers);
extern void queue_check_size(const QueueInfo *queue, Datum body, Datum headers,
							 bool has_headers, int position);
pg_noreturn extern void queue_report_too_large(const QueueInfo *queue, int64 size,
											   int position);
/* Headers: a JSON object (name: value), as SQS message attributes are. */
extern void queue_check_headers(Datum headers, const char *queue);

/*
 * Poison limit: the dequeue count at which a message, once visible again,
 * goes to the poison queue instead of to a consumer; 0 when the queue
 * routes no poison.  In SQL, LIMIT is a parameter holding it, NULL for 0.
 */
extern int32 queue_dequeue_limit(const QueueInfo *queue);
extern bool queue_at_dequeue_limit(const QueueInfo *queue, int32 dequeue_count);
#define SQL_AT_DEQUEUE_LIMIT(ROW, LIMIT) \
	"coalesce(" ROW "dequeue_count >= " LIMIT ", false)"

#endif							/* QUEUE_MESSAGES_RULES_H */
