/*-------------------------------------------------------------------------
 *
 * permissions.c
 *		Per-queue permissions: who may do what on which queue or topic.
 *
 * Four permissions, after Azure's built-in queue roles: send (put, and a
 * redrive's destination), process (get, peek, inspect, update, delete),
 * read (peek, inspect, stats, list) and manage (alter, clear, drop, grant,
 * revoke, and a redrive's source).  On a topic, send is publishing (to
 * every subscribed queue, whatever the caller holds on it) and manage is
 * dropping it, granting on it and subscribing queues (with manage on the
 * queue too); any of the four shows it in queue_topics.  They are granted
 * per queue or topic, or on '*' for every queue and topic, present and
 * future; queue_create, queue_topic_create and queue_maintain need manage
 * on '*'.  A grant to a role counts for its members, whatever their
 * INHERIT (is_member_of_role).  Superusers and members of the extension
 * owner's role hold everything.  The check runs with the caller's identity
 * as it was before the StorageSession switched to the owner.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

const char *const queue_permission_names[QUEUE_PERMISSION_COUNT] = {"send", "process", "read", "manage"};


/* Does the caller hold every permission on every queue? */
bool
queue_caller_holds_all(void)
{
	Oid			caller = queue_storage_caller();

	return superuser_arg(caller) || is_member_of_role(caller, queue_storage_owner());
}

/*
 * Does the caller hold one of the permissions in perms (QUEUE_PERM_* bits)
 * on the queue or topic id (0: '*')?  A topic's id comes from the queues'
 * sequence: grants are kept by id for both.
 */
bool
queue_holds_permission(int32 id, int perms)
{
	Datum		names[QUEUE_PERMISSION_COUNT];
	PlanArgs	args;
	int			count = 0;
	int			i;
	bool		isnull;

	if (perms == 0 || queue_caller_holds_all())
		return true;

	for (i = 0; i < (int) QUEUE_PERMISSION_COUNT; i++)
		if ((perms & (1 << i)) != 0)
			names[count++] = CStringGetTextDatum(queue_permission_names[i]);

	queue_plan_begin(&args, PLAN_GRANT_CHECK);
	queue_plan_set(&args, "queue_id", Int32GetDatum(id));
	queue_plan_set(&args, "permissions",
				   PointerGetDatum(construct_array(names, count, TEXTOID, -1,
												   false, TYPALIGN_INT)));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));
	queue_plan_run(&args);
	return DatumGetBool(queue_row_value(SPI_tuptable, 0, "granted", &isnull));
}

/*
 * Raises 42501 unless the caller holds one of the permissions in perms on
 * the queue or topic id, named name, of kind "queue" or "topic".
 */
static void
require_permission(int32 id, const char *kind, const char *name, int perms)
{
	StringInfoData wanted;
	int			i;

	if (queue_holds_permission(id, perms))
		return;

	initStringInfo(&wanted);
	for (i = 0; i < (int) QUEUE_PERMISSION_COUNT; i++)
		if ((perms & (1 << i)) != 0)
			appendStringInfo(&wanted, "%s\"%s\"", wanted.len > 0 ? " or " : "",
							 queue_permission_names[i]);
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for %s \"%s\": needs %s", kind, name, wanted.data),
			 errhint("The extension owner, a superuser, or a role with \"manage\" on the %s can grant it with queue_grant().",
					 kind)));
}

/* On the queue queue_id (0: '*'), named queue. */
void
queue_require_permission(int32 queue_id, const char *queue, int perms)
{
	require_permission(queue_id, "queue", queue, perms);
}

/* On the topic topic_id, named topic. */
void
queue_require_topic_permission(int32 topic_id, const char *topic, int perms)
{
	require_permission(topic_id, "topic", topic, perms);
}

/*
 * Runs the statement id, whose parameters holds_all and caller select
 * what the caller may see (queue_list, queue_topics, queue_schedules),
 * and returns its rows as the call's result.
 */
void
queue_store_shown_rows(FunctionCallInfo fcinfo, QueuePlanId id)
{
	PlanArgs	args;

	queue_plan_begin(&args, id);
	queue_plan_set(&args, "holds_all", BoolGetDatum(queue_caller_holds_all()));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));
	queue_plan_run(&args);
	queue_store_rows(fcinfo, SPI_tuptable);
}
