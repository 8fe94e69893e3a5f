/*-------------------------------------------------------------------------
 *
 * permissions.c
 *		Per-queue permissions: who may do what on which queue.
 *
 * Four permissions, after Azure's built-in queue roles: send (put, and a
 * redrive's destination), process (get, peek, inspect, update, delete),
 * read (peek, inspect, stats, list) and manage (alter, clear, drop, grant,
 * revoke, and a redrive's source).  They are granted per queue, or on '*'
 * for every queue, present and future; queue_create and queue_maintain need
 * manage on '*'.  A grant to a role counts for its members, whatever their
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
 * Raises 42501 unless the caller holds one of the permissions in perms
 * (QUEUE_PERM_* bits) on the queue queue_id (0: '*'), named queue.
 */
void
queue_require_permission(int32 queue_id, const char *queue, int perms)
{
	Datum		names[QUEUE_PERMISSION_COUNT];
	PlanArgs	args;
	StringInfoData wanted;
	int			count = 0;
	int			i;
	bool		isnull;

	if (perms == 0 || queue_caller_holds_all())
		return;

	initStringInfo(&wanted);
	for (i = 0; i < (int) QUEUE_PERMISSION_COUNT; i++)
	{
		if ((perms & (1 << i)) == 0)
			continue;
		names[count++] = CStringGetTextDatum(queue_permission_names[i]);
		appendStringInfo(&wanted, "%s\"%s\"", wanted.len > 0 ? " or " : "",
						 queue_permission_names[i]);
	}

	queue_plan_begin(&args, PLAN_GRANT_CHECK);
	queue_plan_set(&args, "queue_id", Int32GetDatum(queue_id));
	queue_plan_set(&args, "permissions",
				   PointerGetDatum(construct_array(names, count, TEXTOID, -1,
												   false, TYPALIGN_INT)));
	queue_plan_set(&args, "caller", ObjectIdGetDatum(queue_storage_caller()));
	queue_plan_run(&args);
	if (DatumGetBool(queue_row_value(SPI_tuptable, 0, "granted", &isnull)))
		return;

	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for queue \"%s\": needs %s", queue, wanted.data),
			 errhint("The extension owner, a superuser, or a role with \"manage\" on the queue can grant it with queue_grant().")));
}
