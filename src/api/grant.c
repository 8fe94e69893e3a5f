/*-------------------------------------------------------------------------
 *
 * grant.c
 *		queue_grant and queue_revoke: giving and taking back a permission on a
 *		queue or a topic.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"
#include "topics/topics.h"

#include "utils/builtins.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(queue_grant);
PG_FUNCTION_INFO_V1(queue_revoke);

/* The arguments of queue_grant and queue_revoke, checked; the caller may. */
static void
grant_arguments(FunctionCallInfo fcinfo, bool must_exist, int32 *queue_id,
				Oid *grantee, text **permission)
{
	char	   *name;
	char	   *perm;
	int			i;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("queue name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (strcmp(name, "*") != 0)
		queue_check_name(name);
	queue_require_arg(fcinfo, 1, "grantee", name);
	queue_require_arg(fcinfo, 2, "permission", name);
	*grantee = PG_GETARG_OID(1);
	*permission = PG_GETARG_TEXT_PP(2);

	/*
	 * regrole takes any number as a role's OID: a grant to a role that does
	 * not exist would wait for whoever gets that OID one day.  (A revoke
	 * may name one: its role may have been dropped since the grant.)
	 */
	if (must_exist && !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(*grantee)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", *grantee)));

	perm = text_to_cstring(*permission);
	for (i = 0; i < (int) QUEUE_PERMISSION_COUNT; i++)
		if (strcmp(perm, queue_permission_names[i]) == 0)
			break;
	if (i == (int) QUEUE_PERMISSION_COUNT)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid permission \"%s\" for queue \"%s\"", perm, name),
				 errdetail("The permissions are \"send\", \"process\", \"read\" and \"manage\".")));

	if (strcmp(name, "*") == 0)
	{
		*queue_id = 0;
		queue_require_permission(0, "*", QUEUE_PERM_MANAGE);
	}
	else
	{
		QueueInfo	queue;
		const TopicInfo *topic = NULL;

		/* a topic's grants are kept by its id, as a queue's */
		if (queue_open_if_exists(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue))
			*queue_id = queue.queue_id;
		else if (queue_storage_has_topics() &&
				 (topic = queue_topic_open(name, AccessShareLock, QUEUE_PERM_MANAGE,
										   true)) != NULL)
			*queue_id = topic->topic_id;
		else
		{
			/* neither: 42704, as for a queue */
			queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
			*queue_id = queue.queue_id;
		}
	}
}

/* Runs PLAN_GRANT_INSERT or PLAN_GRANT_DELETE for queue_grant/revoke. */
static void
change_grant(FunctionCallInfo fcinfo, QueuePlanId plan, const char *function)
{
	StorageSession session;
	int32		queue_id;
	Oid			grantee;
	text	   *permission;
	PlanArgs	args;

	queue_storage_begin_write(&session, function);
	grant_arguments(fcinfo, plan == PLAN_GRANT_INSERT, &queue_id, &grantee, &permission);
	queue_plan_begin(&args, plan);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	queue_plan_set(&args, "grantee", ObjectIdGetDatum(grantee));
	queue_plan_set(&args, "permission", PointerGetDatum(permission));
	queue_plan_run(&args);
	queue_storage_end(&session);
}

/* queue_grant(queue, grantee, permission); queue '*' is every queue. */
Datum
queue_grant(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, PLAN_GRANT_INSERT, "queue_grant()");
	PG_RETURN_VOID();
}

/* queue_revoke(queue, grantee, permission): no error if it was not granted. */
Datum
queue_revoke(PG_FUNCTION_ARGS)
{
	change_grant(fcinfo, PLAN_GRANT_DELETE, "queue_revoke()");
	PG_RETURN_VOID();
}
