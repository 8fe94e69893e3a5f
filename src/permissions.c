/*-------------------------------------------------------------------------
 *
 * permissions.c
 *		Per-queue permissions: who may do what on which queue.
 *
 * Four permissions, after Azure's built-in queue roles: send (put),
 * process (get, peek, update, delete), read (peek, stats, list) and manage
 * (clear, drop, grant and revoke).  They are granted per queue, or on '*'
 * for every queue, present and future; queue_create and queue_maintain need
 * manage on '*'.  A grant to a role counts for its members, whatever their
 * INHERIT (is_member_of_role).  Superusers and members of the extension
 * owner's role hold everything.  The check runs with the caller's identity
 * as it was before the StorageSession switched to the owner.
 *
 *-------------------------------------------------------------------------
 */
#include "queue.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(queue_grant);
PG_FUNCTION_INFO_V1(queue_revoke);

static const char *const permission_names[] = {"send", "process", "read", "manage"};

#define PERMISSION_COUNT lengthof(permission_names)

/* Does the caller hold every permission on every queue? */
bool
queue_caller_holds_all(void)
{
	Oid			caller = queue_storage_caller();

	return superuser_arg(caller) || is_member_of_role(caller, queue_storage_owner());
}

/*
 * Raises 42501 unless the caller holds one of the permissions in perms
 * (QUEUE_PERM_* bits) on the queue queue_id (0: '*'), named queue.
 */
void
queue_require_permission(int32 queue_id, const char *queue, int perms)
{
	Datum		names[PERMISSION_COUNT];
	Datum		values[3];
	StringInfoData wanted;
	int			count = 0;
	int			i;
	bool		isnull;

	if (perms == 0 || queue_caller_holds_all())
		return;

	initStringInfo(&wanted);
	for (i = 0; i < (int) PERMISSION_COUNT; i++)
	{
		if ((perms & (1 << i)) == 0)
			continue;
		names[count++] = CStringGetTextDatum(permission_names[i]);
		appendStringInfo(&wanted, "%s\"%s\"", wanted.len > 0 ? " or " : "",
						 permission_names[i]);
	}

	values[0] = Int32GetDatum(queue_id);
	values[1] = PointerGetDatum(construct_array(names, count, TEXTOID, -1,
												false, TYPALIGN_INT));
	values[2] = ObjectIdGetDatum(queue_storage_caller());
	queue_plan_run(PLAN_GRANT_CHECK, values, NULL);
	if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
								   1, &isnull)))
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for queue \"%s\": needs %s", queue, wanted.data),
			 errhint("The extension owner, a superuser, or a role with \"manage\" on the queue can grant it with queue_grant().")));
}

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
	for (i = 0; i < (int) PERMISSION_COUNT; i++)
		if (strcmp(perm, permission_names[i]) == 0)
			break;
	if (i == (int) PERMISSION_COUNT)
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

		queue_open(name, AccessShareLock, QUEUE_PERM_MANAGE, &queue);
		*queue_id = queue.queue_id;
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
	Datum		values[3];

	queue_storage_begin_write(&session, function);
	grant_arguments(fcinfo, plan == PLAN_GRANT_INSERT, &queue_id, &grantee, &permission);
	values[0] = Int32GetDatum(queue_id);
	values[1] = ObjectIdGetDatum(grantee);
	values[2] = PointerGetDatum(permission);
	queue_plan_run(plan, values, NULL);
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
