/*-------------------------------------------------------------------------
 *
 * utility.c
 *		The statements the extension acts on: DROP DATABASE and its kin,
 *		and DISCARD ALL.
 *
 * DROP DATABASE, ALTER DATABASE ... RENAME and ... SET TABLESPACE, and
 * CREATE DATABASE ... TEMPLATE fail while another session is connected to
 * the database they name, and our worker always is.  A ProcessUtility hook
 * (installed when the library is preloaded) stops that database's worker
 * first and keeps the launcher from starting another for a few seconds;
 * after a rename or a move the worker comes back by itself.  Only a role
 * that could run the command anyway (the database's owner; for a template,
 * a role with CREATEDB when the database is a template or its own) stops
 * the worker.
 *
 * DISCARD ALL, which a connection pooler runs between two clients of one
 * connection, ends the session's release_on_disconnect leases
 * (session_leases.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "messages/messages.h"
#include "worker/worker.h"

#include <signal.h>

#include "catalog/pg_authid.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/latch.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/syscache.h"
#include "utils/wait_event.h"

/* How long the launcher leaves the database alone. */
#define QUEUE_DDL_PAUSE_MS		10000

/* How long we wait for the worker to exit. */
#define QUEUE_WORKER_STOP_TIMEOUT_MS	10000

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* The option named name of a list of DefElems, or NULL. */
static DefElem *
find_option(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);

		if (strcmp(def->defname, name) == 0)
			return def;
	}
	return NULL;
}

/*
 * The database a utility statement needs without other connections, or
 * NULL; *as_template says it is the template of a CREATE DATABASE.
 */
static const char *
database_needed_alone(Node *statement, bool *as_template)
{
	DefElem    *option;

	*as_template = false;
	switch (nodeTag(statement))
	{
		case T_DropdbStmt:
			return ((DropdbStmt *) statement)->dbname;
		case T_RenameStmt:
			if (((RenameStmt *) statement)->renameType == OBJECT_DATABASE)
				return ((RenameStmt *) statement)->subname;
			return NULL;
		case T_AlterDatabaseStmt:
			if (find_option(((AlterDatabaseStmt *) statement)->options, "tablespace"))
				return ((AlterDatabaseStmt *) statement)->dbname;
			return NULL;
		case T_CreatedbStmt:
			option = find_option(((CreatedbStmt *) statement)->options, "template");
			if (option == NULL || option->arg == NULL)
				return NULL;
			*as_template = true;
			return defGetString(option);
		default:
			return NULL;
	}
}

/*
 * Whether the current role may create databases, as CREATE DATABASE checks
 * it.  Written here: PostgreSQL's have_createdb_privilege is exported only
 * by recent minor releases (15.19 and later, for example), and a library
 * calling it would not load into an older one.
 */
static bool
may_create_databases(void)
{
	HeapTuple	tuple;
	bool		result = false;

	if (superuser())
		return true;
	tuple = SearchSysCache1(AUTHOID, ObjectIdGetDatum(GetUserId()));
	if (HeapTupleIsValid(tuple))
	{
		result = ((Form_pg_authid) GETSTRUCT(tuple))->rolcreatedb;
		ReleaseSysCache(tuple);
	}
	return result;
}

/*
 * Whether CREATE DATABASE may copy the database dboid: the role may create
 * databases, and the database is marked a template or the role owns it.
 * A role that may not is refused by CREATE DATABASE, and must not stop the
 * worker on its way there.
 */
static bool
may_copy_database(Oid dboid)
{
	HeapTuple	tuple;
	bool		is_template = false;

	if (!may_create_databases())
		return false;
	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	if (HeapTupleIsValid(tuple))
	{
		is_template = ((Form_pg_database) GETSTRUCT(tuple))->datistemplate;
		ReleaseSysCache(tuple);
	}
	return is_template || queue_database_ownercheck(dboid, GetUserId());
}

/* Stops the worker of the named database and waits until it is gone. */
static void
stop_worker(const char *dbname, bool as_template)
{
	Oid			dboid = get_database_oid(dbname, true);
	static uint32 wait_event = 0;
	pid_t		pid;
	int			waited = 0;

	if (!OidIsValid(dboid))
		return;
	if (as_template ? !may_copy_database(dboid) :
		!queue_database_ownercheck(dboid, GetUserId()))
		return;

	queue_registry_pause(dboid,
						 TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													 QUEUE_DDL_PAUSE_MS));
	pid = queue_registry_worker(dboid);
	if (pid == 0)
		return;

	if (wait_event == 0)
		wait_event = queue_wait_event("QueueWorkerStop");
	(void) kill(pid, SIGTERM);
	while (queue_registry_worker(dboid) == pid && waited < QUEUE_WORKER_STOP_TIMEOUT_MS)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, wait_event);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		waited += 10;
	}
}

static void
queue_process_utility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	bool		as_template;
	const char *dbname = database_needed_alone(pstmt->utilityStmt, &as_template);

	if (dbname != NULL)
		stop_worker(dbname, as_template);

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
							queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	/* a pooler's reset between two clients ends leases as a disconnect */
	if (IsA(pstmt->utilityStmt, DiscardStmt) &&
		((DiscardStmt *) pstmt->utilityStmt)->target == DISCARD_ALL)
		queue_session_leases_release();
}

/* Called from _PG_init when preloaded. */
void
queue_utility_hook_install(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = queue_process_utility;
}
