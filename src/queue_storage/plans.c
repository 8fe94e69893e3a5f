/*-------------------------------------------------------------------------
 *
 * plans.c
 *		Every SQL statement the extension runs, prepared once per backend.
 *
 * The statements are fixed text with $n parameters: no SQL is ever built
 * from a queue name or any other input.  Each statement names its
 * parameters beside its text, and the C that runs it sets them by name
 * (queue_plan_set); its result columns are read by name too
 * (queue_row_value).  Each is prepared on first use with
 * SPI_prepare and kept for the life of the backend with SPI_keepplan; the
 * plan cache re-plans it by itself if the storage tables are dropped and
 * created again.  They run inside a StorageSession (session.c), which
 * pins search_path to pg_catalog before the first of them, so the
 * unqualified operators below always resolve to the built-in ones.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/rules.h"
#include "queue_storage/queue_storage.h"

#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "utils/snapmgr.h"

/* A parameter of a statement: $1 is the first of the list, $2 the next... */
typedef struct PlanParam
{
	const char *name;			/* NULL past the last */
	Oid			type;
} PlanParam;

typedef struct PlanDefinition
{
	const char *sql;
	PlanParam	params[QUEUE_PLAN_MAX_PARAMS];
} PlanDefinition;

/* The columns of a queue row, as queue_info_from_row reads them. */
#define QUEUE_COLUMNS \
	"queue_id, name, visibility_timeout, message_ttl, max_dequeue_count, " \
	"max_message_size, poison_queue_id, is_poison"

/*
 * Queue q is shown to the caller: $ALL (the caller holds everything) or a
 * grant on q or on '*' to a role the caller is a member of, $CALLER.
 */
#define SHOWN_TO(ALL, CALLER) SHOWN_TO_ID("q.queue_id", ALL, CALLER)
/* The same for the queue or topic of id ID. */
#define SHOWN_TO_ID(ID, ALL, CALLER) \
	"(" ALL " OR EXISTS (SELECT 1 FROM queue_storage.grants g " \
	"WHERE g.queue_id IN (0, " ID ") " \
	"AND pg_has_role(" CALLER ", g.grantee::oid, 'MEMBER')))"

/*
 * The alive messages counted by state at $1, per queue, narrowed by
 * MESSAGES: what queue_stats shows and what the census stores.
 */
#define MESSAGE_COUNTS(MESSAGES) \
	"SELECT m.queue_id, " \
	"  count(*) FILTER (WHERE " SQL_VISIBLE("m.", "$1") ") AS visible, " \
	"  count(*) FILTER (WHERE NOT " SQL_VISIBLE("m.", "$1") " AND m.dequeue_count > 0) AS in_flight, " \
	"  count(*) FILTER (WHERE NOT " SQL_VISIBLE("m.", "$1") " AND m.dequeue_count = 0) AS delayed, " \
	"  count(*) AS total, " \
	"  min(m.inserted_at) FILTER (WHERE " SQL_VISIBLE("m.", "$1") ") AS oldest_visible " \
	"  FROM queue_storage.messages m WHERE " SQL_ALIVE("m.", "$1") " " MESSAGES \
	"  GROUP BY m.queue_id"

/*
 * queue_inspect's columns of a message of the messages table, from 1.3 on,
 * with its state at $2.
 */
#define INSPECT_LIVE \
	"SELECT message_id, CASE " \
	" WHEN NOT " SQL_ALIVE("", "$2") " THEN 'expired' " \
	" WHEN " SQL_VISIBLE("", "$2") " THEN 'visible' " \
	" WHEN visible_at = " SQL_WAITING_AT " THEN 'waiting' " \
	" WHEN dequeue_count > 0 THEN 'in_flight' ELSE 'delayed' END AS state, " \
	"dequeue_count, inserted_at, expires_at, visible_at, source_queue, headers, body, " \
	"group_id, priority::integer"

/* Each queue's counters: its rows summed, narrowed by COUNTERS. */
#define COUNTER_SUMS(COUNTERS) \
	"SELECT queue_id, sum(puts)::bigint AS puts, " \
	"  sum(gets)::bigint AS gets, sum(deletes)::bigint AS deletes, " \
	"  sum(poisoned)::bigint AS poisoned, sum(expired)::bigint AS expired " \
	"  FROM queue_storage.counters " COUNTERS "GROUP BY queue_id"

/*
 * queue_stats' statement: the queues with their messages counted by state
 * at $1 and their counters summed, the messages and the counters narrowed
 * by MESSAGES and COUNTERS; the caller adds WHERE and ORDER BY.
 */
#define STATS_SELECT(MESSAGES, COUNTERS) \
	"SELECT q.name, coalesce(m.visible, 0) AS visible, " \
	"coalesce(m.in_flight, 0) AS in_flight, coalesce(m.delayed, 0) AS delayed, " \
	"coalesce(m.total, 0) AS total, $1 - m.oldest_visible AS oldest_visible_age, " \
	"coalesce(c.puts, 0) AS puts, coalesce(c.gets, 0) AS gets, " \
	"coalesce(c.deletes, 0) AS deletes, coalesce(c.poisoned, 0) AS poisoned, " \
	"coalesce(c.expired, 0) AS expired, q.queue_id " \
	"FROM queue_storage.queues q " \
	"LEFT JOIN (" MESSAGE_COUNTS(MESSAGES) ") m ON m.queue_id = q.queue_id " \
	"LEFT JOIN (" COUNTER_SUMS(COUNTERS) ") c ON c.queue_id = q.queue_id "

/*
 * queue_list's statement: the queues shown to the caller with their
 * settings and poison queue, and then the columns of the version (COLUMNS).
 */
#define QUEUE_LIST(COLUMNS) \
	"SELECT q.name, q.visibility_timeout, q.message_ttl, " \
	"q.max_dequeue_count, q.max_message_size, p.name, q.created_at" COLUMNS " " \
	"FROM queue_storage.queues q " \
	"LEFT JOIN queue_storage.queues p ON p.queue_id = q.poison_queue_id " \
	"WHERE " SHOWN_TO("$1", "$2") " " \
	"ORDER BY q.name"

/*
 * queue_metrics: queue_stats' columns, the message counts and the oldest
 * message's age from the last census (NULL before the first one, 0 for a
 * queue created since), and the census' time, then the columns of the
 * version (COLUMNS).  The counters are summed the same way.
 */
#define QUEUE_METRICS(COLUMNS) \
	"SELECT * FROM (SELECT q.name, " \
	"CASE WHEN t.taken_at IS NOT NULL THEN coalesce(n.visible, 0) END AS visible, " \
	"CASE WHEN t.taken_at IS NOT NULL THEN coalesce(n.in_flight, 0) END AS in_flight, " \
	"CASE WHEN t.taken_at IS NOT NULL THEN coalesce(n.delayed, 0) END AS delayed, " \
	"t.taken_at - n.oldest_visible_at AS oldest_visible_age, " \
	"coalesce(c.puts, 0) AS puts, coalesce(c.gets, 0) AS gets, " \
	"coalesce(c.deletes, 0) AS deletes, coalesce(c.poisoned, 0) AS poisoned, " \
	"coalesce(c.expired, 0) AS expired, q.queue_id, t.taken_at" COLUMNS " " \
	"FROM queue_storage.queues q " \
	"LEFT JOIN queue_storage.census n ON n.queue_id = q.queue_id " \
	"LEFT JOIN (SELECT taken_at FROM queue_storage.census WHERE queue_id = 0) t ON true " \
	"LEFT JOIN (" COUNTER_SUMS("") ") c ON c.queue_id = q.queue_id " \
	"OFFSET 0) q WHERE " SHOWN_TO("$2", "$3") " ORDER BY q.name"

/*
 * queue_peek's statement on the storage of 1.3 on: the columns of
 * queue_message, the last of them (COLUMNS) those of the version.
 */
#define PEEK_ORDERING(COLUMNS) \
	"SELECT message_id, body, headers, dequeue_count, inserted_at, " \
	"expires_at, visible_at, NULL::uuid, " COLUMNS " " \
	"FROM queue_storage.messages m " \
	"WHERE queue_id = $1 AND " SQL_VISIBLE("m.", "$2") " AND " SQL_ALIVE("m.", "$2") " " \
	"AND NOT " SQL_AT_DEQUEUE_LIMIT("m.", "$4::integer") " " \
	"AND " SQL_GROUP_TURN("m.", "$2") " " \
	"ORDER BY " SQL_CLAIM_ORDER("m.") " LIMIT $3"

static const PlanDefinition plan_definitions[QUEUE_PLAN_COUNT] = {
	[PLAN_QUEUE_LOOKUP] = {
		"SELECT " QUEUE_COLUMNS " FROM queue_storage.queues WHERE name = $1",
		{{"name", TEXTOID}}
	},
	/* The same, on the storage of 1.3: with the deduplication window. */
	[PLAN_QUEUE_LOOKUP_ORDERING] = {
		"SELECT " QUEUE_COLUMNS ", deduplication_window "
		"FROM queue_storage.queues WHERE name = $1",
		{{"name", TEXTOID}}
	},
	/* The same, on the storage of 1.6: with the queue's delay. */
	[PLAN_QUEUE_LOOKUP_ATTRIBUTES] = {
		"SELECT " QUEUE_COLUMNS ", deduplication_window, delay "
		"FROM queue_storage.queues WHERE name = $1",
		{{"name", TEXTOID}}
	},
	/* The same, on the storage of 1.8: with the retry policy and the pause. */
	[PLAN_QUEUE_LOOKUP_RETRIES] = {
		"SELECT " QUEUE_COLUMNS ", deduplication_window, delay, "
		"retry_delay, retry_backoff, retry_delay_max, paused "
		"FROM queue_storage.queues WHERE name = $1",
		{{"name", TEXTOID}}
	},
	/* The same, on the storage of 1.9: with the retention. */
	[PLAN_QUEUE_LOOKUP_RETENTION] = {
		"SELECT " QUEUE_COLUMNS ", deduplication_window, delay, "
		"retry_delay, retry_backoff, retry_delay_max, paused, retention "
		"FROM queue_storage.queues WHERE name = $1",
		{{"name", TEXTOID}}
	},
	[PLAN_QUEUE_INSERT] = {
		"INSERT INTO queue_storage.queues (name, visibility_timeout, "
		"message_ttl, max_dequeue_count, max_message_size, poison_queue_id, "
		"is_poison, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
		"ON CONFLICT (name) DO NOTHING RETURNING queue_id",
		{{"name", TEXTOID}, {"visibility_timeout", INTERVALOID},
		 {"message_ttl", INTERVALOID}, {"max_dequeue_count", INT4OID},
		 {"max_message_size", INT4OID}, {"poison_queue_id", INT4OID},
		 {"is_poison", BOOLOID}, {"created_at", TIMESTAMPTZOID}}
	},
	[PLAN_QUEUE_DELETE] = {
		"DELETE FROM queue_storage.queues WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	[PLAN_QUEUE_PARENT] = {
		"SELECT name FROM queue_storage.queues WHERE poison_queue_id = $1",
		{{"poison_queue_id", INT4OID}}
	},
	[PLAN_QUEUE_LIST] = {
		QUEUE_LIST(""),
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/* The same, on the storage of 1.6: with delay, attributes and tags. */
	[PLAN_QUEUE_LIST_ATTRIBUTES] = {
		QUEUE_LIST(", q.delay, q.attributes, q.tags"),
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/* The same, on the storage of 1.8: with the retry policy and the pause. */
	[PLAN_QUEUE_LIST_RETRIES] = {
		QUEUE_LIST(", q.delay, q.attributes, q.tags, q.retry_delay, q.retry_backoff, "
				   "q.retry_delay_max, q.paused"),
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/* The same, on the storage of 1.9: with the retention. */
	[PLAN_QUEUE_LIST_RETENTION] = {
		QUEUE_LIST(", q.delay, q.attributes, q.tags, q.retry_delay, q.retry_backoff, "
				   "q.retry_delay_max, q.paused, q.retention"),
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/*
	 * queue_stats for every queue shown to the caller, and for one queue.
	 * The messages are counted per queue before the join: joined first,
	 * every queue's row met the whole messages table again (a rescanned
	 * materialization, very slow with many queues: bench/reports/history.md,
	 * "Figures once kept in code comments").  Filtered by name or by
	 * permission in the same query level, the queues looked few to the
	 * generic plan, which then rescanned the counts for each of them; so
	 * one queue has a statement of its own, and the permission
	 * filter comes after the joins (OFFSET 0 keeps it there).
	 */
	[PLAN_QUEUE_STATS] = {
		"SELECT * FROM (" STATS_SELECT("", "") "OFFSET 0) q "
		"WHERE " SHOWN_TO("$2", "$3") " ORDER BY q.name",
		{{"now", TIMESTAMPTZOID}, {"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	[PLAN_QUEUE_STATS_ONE] = {
		STATS_SELECT("AND m.queue_id = $2 ", "WHERE queue_id = $2 ") "WHERE q.queue_id = $2",
		{{"now", TIMESTAMPTZOID}, {"queue_id", INT4OID}}
	},
	[PLAN_QUEUE_METRICS] = {
		QUEUE_METRICS(""),
		{{"now", TIMESTAMPTZOID}, {"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/* The same, on the storage of 1.8: with whether each queue is paused. */
	[PLAN_QUEUE_METRICS_PAUSED] = {
		QUEUE_METRICS(", q.paused::integer::bigint AS paused"),
		{{"now", TIMESTAMPTZOID}, {"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/*
	 * The census at $1: every queue's counts written where they changed,
	 * the row 0 stamped with the time, the rows of dropped queues deleted.
	 */
	[PLAN_CENSUS] = {
		"WITH counted AS ("
		" SELECT q.queue_id, coalesce(m.visible, 0) AS visible, "
		" coalesce(m.in_flight, 0) AS in_flight, coalesce(m.delayed, 0) AS delayed, "
		" m.oldest_visible FROM queue_storage.queues q "
		" LEFT JOIN (" MESSAGE_COUNTS("") ") m ON m.queue_id = q.queue_id "
		" UNION ALL SELECT 0, 0, 0, 0, NULL), "
		"written AS (INSERT INTO queue_storage.census AS c "
		" (queue_id, visible, in_flight, delayed, oldest_visible_at, taken_at) "
		" SELECT queue_id, visible, in_flight, delayed, oldest_visible, $1 FROM counted "
		" ON CONFLICT (queue_id) DO UPDATE SET visible = excluded.visible, "
		" in_flight = excluded.in_flight, delayed = excluded.delayed, "
		" oldest_visible_at = excluded.oldest_visible_at, taken_at = excluded.taken_at "
		" WHERE excluded.taken_at >= c.taken_at AND (c.queue_id = 0 OR "
		" (c.visible, c.in_flight, c.delayed, c.oldest_visible_at) "
		" IS DISTINCT FROM (excluded.visible, excluded.in_flight, excluded.delayed, "
		" excluded.oldest_visible_at)) RETURNING 1) "
		"DELETE FROM queue_storage.census c WHERE c.queue_id <> 0 "
		"AND NOT EXISTS (SELECT 1 FROM queue_storage.queues q WHERE q.queue_id = c.queue_id)",
		{{"now", TIMESTAMPTZOID}}
	},
	[PLAN_QUEUE_POISONING] = {
		"SELECT " QUEUE_COLUMNS " FROM queue_storage.queues "
		"WHERE poison_queue_id IS NOT NULL ORDER BY queue_id",
		{{NULL}}
	},
	[PLAN_GRANT_CHECK] = {
		"SELECT EXISTS (SELECT 1 FROM queue_storage.grants "
		"WHERE queue_id IN (0, $1) AND permission = ANY ($2) "
		"AND pg_has_role($3, grantee::oid, 'MEMBER')) AS granted",
		{{"queue_id", INT4OID}, {"permissions", TEXTARRAYOID},
		 {"caller", OIDOID}}
	},
	[PLAN_GRANT_INSERT] = {
		"INSERT INTO queue_storage.grants (queue_id, grantee, permission) "
		"VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
		{{"queue_id", INT4OID}, {"grantee", REGROLEOID},
		 {"permission", TEXTOID}}
	},
	[PLAN_GRANT_DELETE] = {
		"DELETE FROM queue_storage.grants "
		"WHERE queue_id = $1 AND grantee = $2 AND permission = $3",
		{{"queue_id", INT4OID}, {"grantee", REGROLEOID},
		 {"permission", TEXTOID}}
	},
	[PLAN_GRANTS_DELETE_QUEUE] = {
		"DELETE FROM queue_storage.grants WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	[PLAN_MESSAGES_DELETE_ALL] = {
		"DELETE FROM queue_storage.messages WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	/*
	 * queue_clear from 1.3 on: with the groups of the messages deleted, whose
	 * turn a put racing with the clear may be waiting for.
	 */
	[PLAN_MESSAGES_CLEAR] = {
		"WITH gone AS (DELETE FROM queue_storage.messages WHERE queue_id = $1 "
		"RETURNING group_id) "
		"SELECT count(*) AS deleted, "
		"array_agg(DISTINCT group_id) FILTER (WHERE group_id IS NOT NULL) AS group_ids "
		"FROM gone",
		{{"queue_id", INT4OID}}
	},
	[PLAN_COUNTERS_DELETE] = {
		"DELETE FROM queue_storage.counters WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	/*
	 * Counts are added to a row of queue_storage.counters, never written
	 * over it (counters/transaction.c says which row).  A backend's own row exists
	 * after its first count; the update passes it by if another
	 * transaction holds it -- only a prepared transaction of an earlier
	 * session with the same backend slot can -- and the insert then goes
	 * to $8, the transaction's own row.
	 */
#define ADD_TO_EXISTING_ROW \
	"ON CONFLICT (queue_id, shard) DO UPDATE SET " \
	"puts = c.puts + excluded.puts, gets = c.gets + excluded.gets, " \
	"deletes = c.deletes + excluded.deletes, " \
	"poisoned = c.poisoned + excluded.poisoned, " \
	"expired = c.expired + excluded.expired"
	[PLAN_COUNTERS_BUMP] = {
		"UPDATE queue_storage.counters SET "
		"puts = puts + $3, gets = gets + $4, deletes = deletes + $5, "
		"poisoned = poisoned + $6, expired = expired + $7 "
		"WHERE queue_id = $1 AND shard = $2 AND ctid = "
		"(SELECT ctid FROM queue_storage.counters WHERE queue_id = $1 AND shard = $2 "
		" FOR UPDATE SKIP LOCKED)",
		{{"queue_id", INT4OID}, {"shard", INT4OID}, {"puts", INT8OID},
		 {"gets", INT8OID}, {"deletes", INT8OID}, {"poisoned", INT8OID},
		 {"expired", INT8OID}}
	},
	[PLAN_COUNTERS_ADD] = {
		"INSERT INTO queue_storage.counters AS c "
		"(queue_id, shard, puts, gets, deletes, poisoned, expired) "
		"SELECT $1, CASE WHEN EXISTS (SELECT 1 FROM queue_storage.counters "
		"  WHERE queue_id = $1 AND shard = $2) THEN $8 ELSE $2 END, "
		"$3, $4, $5, $6, $7 " ADD_TO_EXISTING_ROW,
		{{"queue_id", INT4OID}, {"shard", INT4OID}, {"puts", INT8OID},
		 {"gets", INT8OID}, {"deletes", INT8OID}, {"poisoned", INT8OID},
		 {"expired", INT8OID}, {"own_shard", INT4OID}}
	},
	/* What shared memory counted since the last sweep; not for a dropped queue. */
	[PLAN_COUNTERS_ADD_SHARED] = {
		"INSERT INTO queue_storage.counters AS c "
		"(queue_id, shard, puts, gets, deletes, poisoned, expired) "
		"SELECT $1, $2, $3, $4, $5, $6, $7 "
		"WHERE EXISTS (SELECT 1 FROM queue_storage.queues WHERE queue_id = $1) "
		ADD_TO_EXISTING_ROW,
		{{"queue_id", INT4OID}, {"shard", INT4OID}, {"puts", INT8OID},
		 {"gets", INT8OID}, {"deletes", INT8OID}, {"poisoned", INT8OID},
		 {"expired", INT8OID}}
	},
	/*
	 * Prepared transactions' rows (shards below $1) folded into the shared
	 * shard's; those still prepared are passed by.
	 */
	[PLAN_COUNTERS_FOLD] = {
		"WITH folded AS ("
		" DELETE FROM queue_storage.counters WHERE shard < $1 AND ctid = ANY (ARRAY("
		"  SELECT ctid FROM queue_storage.counters WHERE shard < $1 FOR UPDATE SKIP LOCKED)) "
		" RETURNING queue_id, puts, gets, deletes, poisoned, expired) "
		"INSERT INTO queue_storage.counters AS c "
		"(queue_id, shard, puts, gets, deletes, poisoned, expired) "
		"SELECT queue_id, $1, sum(puts)::bigint, sum(gets)::bigint, sum(deletes)::bigint, "
		"sum(poisoned)::bigint, sum(expired)::bigint FROM folded GROUP BY queue_id "
		ADD_TO_EXISTING_ROW,
		{{"shared_shard", INT4OID}}
	},

	/*
	 * Peek and inspect; the _ORDERING forms, from 1.3 on, show group_id and
	 * priority, and peek sorts by priority and keeps a group's turn.
	 */
	[PLAN_PEEK] = {
		"SELECT message_id, body, headers, dequeue_count, inserted_at, "
		"expires_at, visible_at, NULL::uuid "
		"FROM queue_storage.messages "
		"WHERE queue_id = $1 AND " SQL_VISIBLE("", "$2") " AND " SQL_ALIVE("", "$2") " "
		"AND NOT " SQL_AT_DEQUEUE_LIMIT("", "$4::integer") " "
		"ORDER BY " SQL_CLAIM_ORDER_1_0("") " LIMIT $3",
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"dequeue_limit", INT4OID}}
	},
	[PLAN_PEEK_ORDERING] = {
		PEEK_ORDERING("group_id, priority::integer"),
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"dequeue_limit", INT4OID}}
	},
	/* The same, on the storage of 1.6: with when each was first handed out. */
	[PLAN_PEEK_FIRST_DEQUEUED] = {
		PEEK_ORDERING("group_id, priority::integer, first_dequeued_at"),
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"dequeue_limit", INT4OID}}
	},

	[PLAN_INSPECT] = {
		"SELECT message_id, CASE "
		" WHEN NOT " SQL_ALIVE("", "$2") " THEN 'expired' "
		" WHEN " SQL_VISIBLE("", "$2") " THEN 'visible' "
		" WHEN dequeue_count > 0 THEN 'in_flight' ELSE 'delayed' END, "
		"dequeue_count, inserted_at, expires_at, visible_at, source_queue, headers, body "
		"FROM queue_storage.messages WHERE queue_id = $1 "
		"AND message_id > $4 ORDER BY message_id LIMIT $3",
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"after_message_id", INT8OID}}
	},
	[PLAN_INSPECT_ORDERING] = {
		INSPECT_LIVE " FROM queue_storage.messages WHERE queue_id = $1 "
		"AND message_id > $4 ORDER BY message_id LIMIT $3",
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"after_message_id", INT8OID}}
	},
	/*
	 * From 1.9 on, with the messages consumers deleted that the queue keeps,
	 * state 'deleted', among the others in id order.  Each side stops at
	 * the page's size before the two are merged.
	 */
	[PLAN_INSPECT_RETAINED] = {
		"SELECT * FROM (" INSPECT_LIVE ", NULL::timestamptz AS deleted_at "
		" FROM queue_storage.messages WHERE queue_id = $1 "
		" AND message_id > $4 ORDER BY message_id LIMIT $3) live "
		"UNION ALL "
		"SELECT * FROM (SELECT message_id, 'deleted', dequeue_count, inserted_at, expires_at, "
		" NULL::timestamptz, source_queue, headers, body, group_id, priority::integer, deleted_at "
		" FROM queue_storage.retained WHERE queue_id = $1 "
		" AND message_id > $4 ORDER BY message_id LIMIT $3) kept "
		"ORDER BY message_id LIMIT $3",
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"max_messages", INT4OID}, {"after_message_id", INT8OID}}
	},

	/*
	 * Redrive: visible messages of a poison queue go back, visible at once,
	 * dequeue_count 0, a new life (expires_at $4) and no receipt.
	 */
	[PLAN_REDRIVE] = {
		"WITH moved AS ("
		" UPDATE queue_storage.messages SET queue_id = $2, source_queue = NULL, "
		" dequeue_count = 0, last_lease = false, visible_at = $3, expires_at = $4, pop_receipt = NULL, "
		" holder_pid = NULL, holder_start = NULL "
		" WHERE message_id IN (SELECT message_id FROM queue_storage.messages "
		"  WHERE queue_id = $1 AND " SQL_VISIBLE("", "$3") " "
		"  ORDER BY " SQL_CLAIM_ORDER("") " LIMIT $5 FOR UPDATE SKIP LOCKED) "
		" RETURNING 1) "
		"SELECT count(*) AS moved FROM moved",
		{{"source_id", INT4OID}, {"destination_id", INT4OID},
		 {"now", TIMESTAMPTZOID}, {"expires_at", TIMESTAMPTZOID},
		 {"max_messages", INT8OID}}
	},
	/*
	 * From 1.3 on, a message of a group comes back waiting, with a new
	 * message id: at the end of its group, so that no waiting message is
	 * ever followed by one that is not (the turn's walk stops at the first
	 * waiting one).  groups.c makes the first of its group visible; the
	 * groups are returned.
	 */
	[PLAN_REDRIVE_ORDERING] = {
		"WITH picked AS ("
		" SELECT message_id, group_id FROM queue_storage.messages "
		" WHERE queue_id = $1 AND " SQL_VISIBLE("", "$3") " "
		" ORDER BY " SQL_CLAIM_ORDER("") " LIMIT $5 FOR UPDATE SKIP LOCKED), "
		"renumbered AS ("
		" SELECT message_id, CASE WHEN group_id IS NULL THEN message_id "
		" ELSE nextval('queue_storage.message_id_seq') END AS new_id "
		" FROM (SELECT message_id, group_id FROM picked ORDER BY message_id) p), "
		"moved AS ("
		" UPDATE queue_storage.messages m SET message_id = r.new_id, queue_id = $2, "
		" source_queue = NULL, dequeue_count = 0, last_lease = false, "
		" visible_at = CASE WHEN m.group_id IS NULL THEN $3 ELSE " SQL_WAITING_AT " END, "
		" expires_at = $4, pop_receipt = NULL, holder_pid = NULL, holder_start = NULL "
		" FROM renumbered r WHERE m.message_id = r.message_id "
		" RETURNING m.group_id) "
		"SELECT count(*) AS moved, "
		"array_agg(DISTINCT group_id) FILTER (WHERE group_id IS NOT NULL) AS group_ids "
		"FROM moved",
		{{"source_id", INT4OID}, {"destination_id", INT4OID},
		 {"now", TIMESTAMPTZOID}, {"expires_at", TIMESTAMPTZOID},
		 {"max_messages", INT8OID}}
	},
	/*
	 * Replay (1.9): retained messages of queue $1 back into it, those
	 * deleted in [$2, $3) (NULL: unbounded), only the ids of $4 if given,
	 * oldest deletion first, at most $5; visible at once, dequeue_count 0,
	 * a new life (expires_at $7).  As with a redrive, a message of a group
	 * comes back waiting with a new id, at the end of its group.
	 */
	[PLAN_REPLAY] = {
		"WITH picked AS ("
		" DELETE FROM queue_storage.retained WHERE ctid = ANY (ARRAY("
		"  SELECT ctid FROM queue_storage.retained WHERE queue_id = $1 "
		"  AND deleted_at >= coalesce($2, '-infinity') AND deleted_at < coalesce($3, 'infinity') "
		"  AND ($4::bigint[] IS NULL OR message_id = ANY ($4)) "
		"  ORDER BY deleted_at, message_id LIMIT $5 FOR UPDATE SKIP LOCKED)) "
		" RETURNING *), "
		"back AS ("
		" INSERT INTO queue_storage.messages (message_id, queue_id, inserted_at, expires_at, "
		" priority, group_id, source_queue, visible_at, dequeue_count, headers, body) "
		" SELECT CASE WHEN group_id IS NULL THEN message_id "
		" ELSE nextval('queue_storage.message_id_seq') END, $1, inserted_at, $7, "
		" priority, group_id, source_queue, "
		" CASE WHEN group_id IS NULL THEN $6 ELSE " SQL_WAITING_AT " END, 0, headers, body "
		" FROM (SELECT * FROM picked ORDER BY message_id) p "
		" RETURNING group_id) "
		"SELECT count(*) AS replayed, "
		"array_agg(DISTINCT group_id) FILTER (WHERE group_id IS NOT NULL) AS group_ids "
		"FROM back",
		{{"queue_id", INT4OID}, {"since", TIMESTAMPTZOID}, {"until", TIMESTAMPTZOID},
		 {"message_ids", INT8ARRAYOID}, {"max_messages", INT8OID},
		 {"now", TIMESTAMPTZOID}, {"expires_at", TIMESTAMPTZOID}}
	},
	[PLAN_QUEUE_ALTER] = {
		"UPDATE queue_storage.queues SET "
		"visibility_timeout = coalesce($2, visibility_timeout), "
		"message_ttl = CASE WHEN $6 THEN $3 ELSE message_ttl END, "
		"max_dequeue_count = CASE WHEN $7 THEN $4 ELSE max_dequeue_count END, "
		"poison_queue_id = CASE WHEN $7 THEN $8 ELSE poison_queue_id END, "
		"max_message_size = coalesce($5, max_message_size) "
		"WHERE queue_id = $1",
		{{"queue_id", INT4OID}, {"visibility_timeout", INTERVALOID},
		 {"message_ttl", INTERVALOID}, {"max_dequeue_count", INT4OID},
		 {"max_message_size", INT4OID}, {"set_ttl", BOOLOID},
		 {"set_poison", BOOLOID}, {"poison_queue_id", INT4OID}}
	},
	/*
	 * queue_alter's settings of 1.6, each NULL to leave it: the delay, and
	 * attributes and tags merged in, a key whose new value is null removed
	 * (their values are strings, so only those nulls are stripped).
	 */
	[PLAN_QUEUE_SET_ATTRIBUTES] = {
		"UPDATE queue_storage.queues SET delay = coalesce($2, delay), "
		"attributes = CASE WHEN $3 IS NULL THEN attributes "
		"  ELSE jsonb_strip_nulls(attributes || $3) END, "
		"tags = CASE WHEN $4 IS NULL THEN tags ELSE jsonb_strip_nulls(tags || $4) END "
		"WHERE queue_id = $1",
		{{"queue_id", INT4OID}, {"delay", INTERVALOID}, {"attributes", JSONBOID},
		 {"tags", JSONBOID}}
	},
	/*
	 * The retry policy of 1.8, each NULL to leave it but the cap, which
	 * $5 says whether to set ($4 NULL: none).
	 */
	[PLAN_QUEUE_SET_RETRIES] = {
		"UPDATE queue_storage.queues SET retry_delay = coalesce($2, retry_delay), "
		"retry_backoff = coalesce($3, retry_backoff), "
		"retry_delay_max = CASE WHEN $5 THEN $4 ELSE retry_delay_max END "
		"WHERE queue_id = $1",
		{{"queue_id", INT4OID}, {"retry_delay", INTERVALOID},
		 {"retry_backoff", BOOLOID}, {"retry_delay_max", INTERVALOID},
		 {"set_retry_delay_max", BOOLOID}}
	},
	/* queue_pause, queue_resume: whether it changed is the row returned. */
	[PLAN_QUEUE_SET_PAUSED] = {
		"UPDATE queue_storage.queues SET paused = $2 "
		"WHERE queue_id = $1 AND paused <> $2 RETURNING queue_id",
		{{"queue_id", INT4OID}, {"paused", BOOLOID}}
	},
	/* retention (1.9): NULL keeps nothing */
	[PLAN_QUEUE_SET_RETENTION] = {
		"UPDATE queue_storage.queues SET retention = $2 WHERE queue_id = $1",
		{{"queue_id", INT4OID}, {"retention", INTERVALOID}}
	},
	[PLAN_QUEUE_PAUSED] = {
		"SELECT paused FROM queue_storage.queues WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	[PLAN_QUEUE_SET_DEDUPLICATION_WINDOW] = {
		"UPDATE queue_storage.queues SET deduplication_window = $2 WHERE queue_id = $1",
		{{"queue_id", INT4OID}, {"deduplication_window", INTERVALOID}}
	},
	/*
	 * After queue_alter changed max_dequeue_count ($2, NULL: no poison
	 * routing): last_lease again as the get would have set it, on every
	 * message of the queue whose mark is now wrong.
	 */
	[PLAN_MESSAGES_MARK_LAST_LEASE] = {
		"UPDATE queue_storage.messages SET last_lease = " SQL_AT_DEQUEUE_LIMIT("", "$2") " "
		"WHERE queue_id = $1 AND last_lease <> " SQL_AT_DEQUEUE_LIMIT("", "$2"),
		{{"queue_id", INT4OID}, {"dequeue_limit", INT4OID}}
	},
	/*
	 * Poison messages of one queue: handed out max_dequeue_count times and
	 * visible again.  Walks only the messages on their last lease
	 * (messages_last_lease), never a backlog of fresh ones nor every
	 * message handed out.
	 */
	[PLAN_POISON_CANDIDATES] = {
		"SELECT message_id FROM queue_storage.messages "
		"WHERE queue_id = $1 AND last_lease AND " SQL_VISIBLE("", "$2") " "
		"AND " SQL_AT_DEQUEUE_LIMIT("", "$3") " AND " SQL_ALIVE("", "$2") " "
		"AND message_id <> ALL ($5) LIMIT $4 FOR UPDATE SKIP LOCKED",
		{{"queue_id", INT4OID}, {"now", TIMESTAMPTZOID},
		 {"dequeue_limit", INT4OID}, {"max_messages", INT4OID},
		 {"passed_over", INT8ARRAYOID}}
	},

	/*
	 * A lease taken with release_on_disconnect ends with its holder's
	 * session: the message is visible again at once, its dequeue_count kept.
	 */
#define RELEASE_LEASE_AT(now) \
	"visible_at = " now ", holder_pid = NULL, holder_start = NULL"

	/*
	 * Leases taken with release_on_disconnect, after message id $2; the
	 * caller finds out which holders' sessions ended.  No lock: the release
	 * checks the holder again.
	 */
	[PLAN_HELD_LEASES] = {
		"SELECT message_id, holder_pid, holder_start FROM queue_storage.messages "
		"WHERE holder_pid IS NOT NULL AND NOT " SQL_VISIBLE("", "$1") " AND message_id > $2 "
		"ORDER BY message_id LIMIT $3",
		{{"now", TIMESTAMPTZOID}, {"after_id", INT8OID},
		 {"max_messages", INT4OID}}
	},
	[PLAN_RELEASE_ORPHANS] = {
		"UPDATE queue_storage.messages m SET " RELEASE_LEASE_AT("$4") " "
		"FROM unnest($1::bigint[], $2::integer[], $3::timestamptz[]) AS d(message_id, pid, start) "
		"WHERE m.message_id = ANY ($1) AND m.message_id = d.message_id "
		"AND m.holder_pid = d.pid "
		"AND m.holder_start = d.start AND NOT " SQL_VISIBLE("m.", "$4") " "
		"RETURNING m.queue_id",
		{{"message_ids", INT8ARRAYOID}, {"pids", INT4ARRAYOID},
		 {"starts", TIMESTAMPTZARRAYOID}, {"now", TIMESTAMPTZOID}}
	},
	/* This session's leases, at DISCARD ALL (session_leases.c). */
	[PLAN_RELEASE_SESSION] = {
		"UPDATE queue_storage.messages SET " RELEASE_LEASE_AT("$3") " "
		"WHERE holder_pid = $1 AND holder_start = $2 AND NOT " SQL_VISIBLE("", "$3") " "
		"RETURNING queue_id",
		{{"pid", INT4OID}, {"start", TIMESTAMPTZOID}, {"now", TIMESTAMPTZOID}}
	},
	/*
	 * Deduplication (messages/deduplication.c): a reservation, taken over
	 * when older than its window; the first put's receipt; the sweep's
	 * forgetting.
	 */
	[PLAN_DEDUP_FIRST] = {
		"SELECT d.message_id, CASE WHEN m.dequeue_count = 0 THEN m.pop_receipt END AS pop_receipt, "
		"d.visible_at, d.inserted_at, d.expires_at, d.group_id, d.priority::integer AS priority "
		"FROM queue_storage.deduplication d "
		"LEFT JOIN queue_storage.messages m ON m.message_id = d.message_id "
		" AND m.queue_id = d.queue_id AND " SQL_ALIVE("m.", "$3") " "
		"WHERE d.queue_id = $1 AND d.deduplication_id = $2 COLLATE \"C\"",
		{{"queue_id", INT4OID}, {"deduplication_id", TEXTOID},
		 {"now", TIMESTAMPTZOID}}
	},
	[PLAN_DEDUP_FORGET] = {
		"WITH forgotten AS ("
		" DELETE FROM queue_storage.deduplication WHERE ctid = ANY (ARRAY("
		"  SELECT ctid FROM queue_storage.deduplication WHERE forget_at <= $1 "
		"  ORDER BY forget_at LIMIT $2 FOR UPDATE SKIP LOCKED)) RETURNING 1) "
		"SELECT count(*) AS forgotten FROM forgotten",
		{{"now", TIMESTAMPTZOID}, {"max_messages", INT4OID}}
	},
	[PLAN_DEDUP_DELETE_QUEUE] = {
		"DELETE FROM queue_storage.deduplication WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	/*
	 * The worker's removal (1.9): a batch of the retained messages kept past
	 * their queue's retention (all of a queue that keeps nothing now), each
	 * queue's oldest first.  The retention is counted in seconds, a day as
	 * 24 hours whatever the time zone's clock changes.
	 */
	[PLAN_RETAINED_REMOVE] = {
		"WITH removed AS ("
		" DELETE FROM queue_storage.retained WHERE ctid = ANY (ARRAY("
		"  SELECT r.ctid FROM queue_storage.queues q CROSS JOIN LATERAL ("
		"   SELECT ctid FROM queue_storage.retained r WHERE r.queue_id = q.queue_id "
		"   AND r.deleted_at < $1 - date_part('epoch', coalesce(q.retention, '0')) * interval '1 second' "
		"   ORDER BY r.deleted_at LIMIT $2 FOR UPDATE SKIP LOCKED) r "
		"  LIMIT $2)) RETURNING 1) "
		"SELECT count(*) AS removed FROM removed",
		{{"now", TIMESTAMPTZOID}, {"max_messages", INT4OID}}
	},
	[PLAN_RETAINED_DELETE_QUEUE] = {
		"DELETE FROM queue_storage.retained WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	/* Before 1.3 (no groups): the oldest expired messages, deleted. */
	[PLAN_EXPIRE] = {
		"WITH expired AS ("
		" DELETE FROM queue_storage.messages WHERE message_id IN ("
		"  SELECT message_id FROM queue_storage.messages "
		"  WHERE NOT " SQL_ALIVE("", "$1") " ORDER BY expires_at LIMIT $2 "
		"  FOR UPDATE SKIP LOCKED) "
		" RETURNING queue_id) "
		"SELECT queue_id, count(*) AS expired FROM expired GROUP BY queue_id",
		{{"now", TIMESTAMPTZOID}, {"max_messages", INT4OID}}
	},
	/*
	 * From 1.3 on, in two steps: the oldest expired messages with their
	 * groups, but those the sweep passed over already (sweep.c takes their
	 * groups' locks, without waiting, in between); then those it kept,
	 * deleted, with the groups whose messages expired, per queue.
	 */
	[PLAN_EXPIRE_CANDIDATES] = {
		"SELECT message_id, queue_id, group_id FROM queue_storage.messages "
		"WHERE NOT " SQL_ALIVE("", "$1") " AND message_id <> ALL ($3) "
		"ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED",
		{{"now", TIMESTAMPTZOID}, {"max_messages", INT4OID},
		 {"passed_over", INT8ARRAYOID}}
	},
	[PLAN_EXPIRE_ORDERING] = {
		"WITH expired AS ("
		" DELETE FROM queue_storage.messages WHERE message_id = ANY ($1) "
		" RETURNING queue_id, group_id) "
		"SELECT queue_id, count(*) AS expired, "
		"array_agg(DISTINCT group_id) FILTER (WHERE group_id IS NOT NULL) AS group_ids "
		"FROM expired GROUP BY queue_id",
		{{"message_ids", INT8ARRAYOID}}
	},
	/*
	 * A topic with its subscriptions, one row each in the order of their
	 * queues' names (one row of NULLs but topic_id if it has none).
	 */
	[PLAN_TOPIC_LOOKUP] = {
		"SELECT t.topic_id, s.queue_id, q.name AS queue, s.filter "
		"FROM queue_storage.topics t "
		"LEFT JOIN queue_storage.subscriptions s ON s.topic_id = t.topic_id "
		"LEFT JOIN queue_storage.queues q ON q.queue_id = s.queue_id "
		"WHERE t.name = $1 ORDER BY q.name COLLATE \"C\"",
		{{"name", TEXTOID}}
	},
	[PLAN_TOPIC_NAMED] = {
		"SELECT 1 FROM queue_storage.topics WHERE name = $1",
		{{"name", TEXTOID}}
	},
	[PLAN_TOPIC_INSERT] = {
		"INSERT INTO queue_storage.topics (name, created_at) VALUES ($1, $2) "
		"ON CONFLICT (name) DO NOTHING RETURNING topic_id",
		{{"name", TEXTOID}, {"created_at", TIMESTAMPTZOID}}
	},
	[PLAN_TOPIC_DELETE] = {
		"WITH gone AS (DELETE FROM queue_storage.subscriptions WHERE topic_id = $1) "
		"DELETE FROM queue_storage.topics WHERE topic_id = $1",
		{{"topic_id", INT4OID}}
	},
	[PLAN_TOPIC_LIST] = {
		"SELECT t.name AS topic, q.name AS queue, s.filter "
		"FROM queue_storage.topics t "
		"LEFT JOIN queue_storage.subscriptions s ON s.topic_id = t.topic_id "
		"LEFT JOIN queue_storage.queues q ON q.queue_id = s.queue_id "
		"WHERE " SHOWN_TO_ID("t.topic_id", "$1", "$2") " "
		"ORDER BY t.name COLLATE \"C\", q.name COLLATE \"C\"",
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
	/* queue_subscribe: a new subscription, or a new filter for one */
	[PLAN_SUBSCRIPTION_SET] = {
		"INSERT INTO queue_storage.subscriptions (topic_id, queue_id, filter, created_at) "
		"VALUES ($1, $2, $3, $4) "
		"ON CONFLICT (topic_id, queue_id) DO UPDATE SET filter = excluded.filter",
		{{"topic_id", INT4OID}, {"queue_id", INT4OID}, {"filter", JSONBOID},
		 {"created_at", TIMESTAMPTZOID}}
	},
	[PLAN_SUBSCRIPTION_DELETE] = {
		"DELETE FROM queue_storage.subscriptions WHERE topic_id = $1 AND queue_id = $2",
		{{"topic_id", INT4OID}, {"queue_id", INT4OID}}
	},
	[PLAN_SUBSCRIPTIONS_DELETE_QUEUE] = {
		"DELETE FROM queue_storage.subscriptions WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	/*
	 * The schedules due at $1, locked, each with its queue and the headers
	 * of its message: the schedule's own, its name and due time added.
	 */
	[PLAN_SCHEDULES_DUE] = {
		"SELECT s.schedule, s.queue_id, q.name AS queue, s.cron, s.time_zone, s.body, "
		"coalesce(s.headers, '{}'::jsonb) || "
		"jsonb_build_object('schedule', s.schedule, 'scheduled_for', s.next_at) AS message_headers, "
		"s.next_at "
		"FROM queue_storage.schedules s JOIN queue_storage.queues q ON q.queue_id = s.queue_id "
		"WHERE s.next_at <= $1 ORDER BY s.next_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED",
		{{"now", TIMESTAMPTZOID}, {"max_schedules", INT4OID}}
	},
	[PLAN_SCHEDULE_FIRED] = {
		"UPDATE queue_storage.schedules SET last_at = $2, next_at = $3 WHERE schedule = $1",
		{{"schedule", TEXTOID}, {"last_at", TIMESTAMPTZOID}, {"next_at", TIMESTAMPTZOID}}
	},
	/* queue_schedule: a new schedule, or new settings for one */
	[PLAN_SCHEDULE_SET] = {
		"INSERT INTO queue_storage.schedules (schedule, queue_id, cron, time_zone, body, "
		"headers, next_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
		"ON CONFLICT (schedule) DO UPDATE SET queue_id = excluded.queue_id, "
		"cron = excluded.cron, time_zone = excluded.time_zone, body = excluded.body, "
		"headers = excluded.headers, next_at = excluded.next_at",
		{{"schedule", TEXTOID}, {"queue_id", INT4OID}, {"cron", TEXTOID},
		 {"time_zone", TEXTOID}, {"body", TEXTOID}, {"headers", JSONBOID},
		 {"next_at", TIMESTAMPTZOID}, {"created_at", TIMESTAMPTZOID}}
	},
	/* the queue of a schedule, locked against its firing */
	[PLAN_SCHEDULE_QUEUE] = {
		"SELECT q.name AS queue FROM queue_storage.schedules s "
		"JOIN queue_storage.queues q ON q.queue_id = s.queue_id "
		"WHERE s.schedule = $1 FOR UPDATE OF s",
		{{"schedule", TEXTOID}}
	},
	[PLAN_SCHEDULE_DELETE] = {
		"DELETE FROM queue_storage.schedules WHERE schedule = $1",
		{{"schedule", TEXTOID}}
	},
	[PLAN_SCHEDULES_DELETE_QUEUE] = {
		"DELETE FROM queue_storage.schedules WHERE queue_id = $1",
		{{"queue_id", INT4OID}}
	},
	[PLAN_SCHEDULE_LIST] = {
		"SELECT s.schedule, q.name AS queue, s.cron, s.time_zone, s.next_at, s.last_at "
		"FROM queue_storage.schedules s JOIN queue_storage.queues q ON q.queue_id = s.queue_id "
		"WHERE " SHOWN_TO("$1", "$2") " ORDER BY s.schedule COLLATE \"C\"",
		{{"holds_all", BOOLOID}, {"caller", OIDOID}}
	},
};

static SPIPlanPtr plans[QUEUE_PLAN_COUNT];

/* The number of parameters of a statement. */
static int
param_count(const PlanDefinition *def)
{
	int			n = 0;

	while (n < QUEUE_PLAN_MAX_PARAMS && def->params[n].name != NULL)
		n++;
	return n;
}

/* Starts the arguments of statement id: none set yet. */
void
queue_plan_begin(PlanArgs *args, QueuePlanId id)
{
	Assert(id >= 0 && id < QUEUE_PLAN_COUNT);
	memset(args, 0, sizeof(*args));
	args->id = id;
}

/* The position of the parameter name of the statement of args. */
static int
param_position(const PlanArgs *args, const char *name)
{
	const PlanDefinition *def = &plan_definitions[args->id];
	int			i;

	for (i = 0; i < param_count(def); i++)
		if (strcmp(def->params[i].name, name) == 0)
			return i;
	elog(ERROR, "queue: statement %d has no parameter \"%s\"", (int) args->id, name);
	return -1;
}

/* Sets the parameter name to value. */
void
queue_plan_set(PlanArgs *args, const char *name, Datum value)
{
	int			i = param_position(args, name);

	args->values[i] = value;
	args->nulls[i] = ' ';
	args->set[i] = true;
}

/* Sets the parameter name to NULL. */
void
queue_plan_set_null(PlanArgs *args, const char *name)
{
	int			i = param_position(args, name);

	args->values[i] = (Datum) 0;
	args->nulls[i] = 'n';
	args->set[i] = true;
}

/* Sets the parameter name of args to argument argno of fcinfo, NULL or not. */
void
queue_plan_set_arg(PlanArgs *args, const char *name, FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		queue_plan_set_null(args, name);
	else
		queue_plan_set(args, name, PG_GETARG_DATUM(argno));
}

/*
 * Sets the parameter name of args to the expiry of a message of queue
 * given a new life at now: now plus the queue's message_ttl, or NULL for a
 * queue whose messages never expire.
 */
void
queue_plan_set_new_expiry(PlanArgs *args, const char *name, const QueueInfo *queue,
						  TimestampTz now)
{
	if (queue->message_ttl < 0)
		queue_plan_set_null(args, name);
	else
		queue_plan_set(args, name,
					   TimestampTzGetDatum(queue_time_plus(now, queue->message_ttl,
														   "message_ttl", queue->name)));
}

/*
 * Runs the statement of args, every parameter set, with snapshot (or the
 * usual one, InvalidSnapshot).  Returns the number of rows processed; the
 * rows are in SPI_tuptable.  Must be called inside a StorageSession.
 */
static uint64
run_plan(PlanArgs *args, Snapshot snapshot)
{
	QueuePlanId id = args->id;
	const PlanDefinition *def = &plan_definitions[id];
	int			nargs = param_count(def);
	int			rc;
	int			i;

	for (i = 0; i < nargs; i++)
		if (!args->set[i])
			elog(ERROR, "queue: parameter \"%s\" of statement %d not set",
				 def->params[i].name, (int) id);
	queue_storage_prepare_sql();

	if (plans[id] == NULL)
	{
		Oid			types[QUEUE_PLAN_MAX_PARAMS];
		SPIPlanPtr	plan;

		for (i = 0; i < nargs; i++)
			types[i] = def->params[i].type;
		plan = SPI_prepare(def->sql, nargs, types);
		if (plan == NULL)
			elog(ERROR, "queue: could not prepare statement %d: %s",
				 (int) id, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "queue: could not keep statement %d", (int) id);
		plans[id] = plan;
	}

	rc = snapshot == InvalidSnapshot ?
		SPI_execute_plan(plans[id], args->values, args->nulls, false, 0) :
		SPI_execute_snapshot(plans[id], args->values, args->nulls, snapshot,
							 InvalidSnapshot, false, false, 0);
	if (rc < 0)
		elog(ERROR, "queue: statement %d failed: %s",
			 (int) id, SPI_result_code_string(rc));

	return SPI_processed;
}

/* Runs the statement of args (run_plan). */
uint64
queue_plan_run(PlanArgs *args)
{
	return run_plan(args, InvalidSnapshot);
}

/*
 * The same, seeing what committed before now even where the transaction
 * has an older snapshot (REPEATABLE READ): for readers of the counters,
 * which a sweep moves from shared memory to the table (counters/shared.c).
 */
uint64
queue_plan_run_latest(PlanArgs *args)
{
	return run_plan(args, GetLatestSnapshot());
}

/* Runs statement id with its one parameter name set to value. */
uint64
queue_plan_run1(QueuePlanId id, const char *name, Datum value)
{
	PlanArgs	args;

	queue_plan_begin(&args, id);
	queue_plan_set(&args, name, value);
	return queue_plan_run(&args);
}

/* A bigint[] of message ids (int8 Datums), as the statements take them. */
Datum
queue_message_id_array(const Datum *ids, int count)
{
	return PointerGetDatum(construct_array((Datum *) ids, count, INT8OID,
										   sizeof(int64), FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

/*
 * The position (from 0) of the named column of a statement's result:
 * statements and the C that reads them agree on names, not on positions.
 */
int
queue_row_column(TupleDesc desc, const char *column)
{
	int			fno = SPI_fnumber(desc, column);

	if (fno <= 0)
		elog(ERROR, "queue: no column \"%s\" in a statement's result", column);
	return fno - 1;
}

/* The value of the named column of row number row of rows. */
Datum
queue_row_value(SPITupleTable *rows, uint64 row, const char *column, bool *isnull)
{
	return SPI_getbinval(rows->vals[row], rows->tupdesc,
						 queue_row_column(rows->tupdesc, column) + 1, isnull);
}
