/*-------------------------------------------------------------------------
 *
 * session.c
 *		Running SQL against the storage tables on behalf of a caller.
 *
 * The storage schema is closed to every role but the extension owner.  An
 * API function opens a StorageSession: SPI is connected and the current
 * user becomes the owner of the storage tables (a security-restricted
 * operation, as in SECURITY DEFINER).  Before the session's first SQL
 * statement, search_path is pinned to pg_catalog, so that nothing a caller
 * planted in another schema can change what our statements mean
 * (CVE-2018-1058), and the planner settings below are set.  A put, get or
 * delete runs no statement (messages/table.c) and so skips that part, a
 * noticeable share of its instructions (bench/reports/history.md, "Where
 * the cycle's gap was").  Everything is undone when the session ends, and
 * by transaction or subtransaction abort when an error ends it first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "queue_storage/queue_storage.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "funcapi.h"
#include "utils/guc.h"
#include "utils/tuplestore.h"

/* The role that called the API function of the current session. */
static Oid	storage_caller = InvalidOid;

/* The session open now; NULL outside one, and after an abort. */
static StorageSession *open_session = NULL;

Oid
queue_storage_caller(void)
{
	return storage_caller;
}

/*
 * A queue's table swings from empty to large and back between two vacuums,
 * and a plan made while the statistics said "empty" (a sequential scan) is
 * cached and kept while dead rows pile up.  Our statements all have an
 * index made for them, so they are planned as if the table were large: the
 * planner may still scan sequentially where no index serves.  Bitmap scans
 * are off too: with "empty" statistics a bitmap scan of the whole claim
 * index (message_id is its last column) looked as cheap as the primary key
 * to find messages by id.  Hash joins stay: the batch statements join their
 * input arrays with what they changed.
 *
 * JIT is off as well.  Up to PostgreSQL 17 a plan method turned off still
 * appears at a huge cost where nothing else serves (a scan of a small
 * table), far above jit_above_cost, so every execution of such a cached
 * plan would be compiled again; our statements are short, and compiling
 * them costs many times what running them does.
 */
static void
plan_with_indexes(void)
{
	static const char *const off[] = {
		"enable_seqscan", "enable_bitmapscan", "enable_mergejoin", "jit"
	};
	int			i;

	for (i = 0; i < lengthof(off); i++)
		(void) set_config_option(off[i], "off",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
}

/*
 * Opens a session for a call that changes queues (function names it in the
 * error).  Nothing may be written in a read-only transaction nor on a hot
 * standby, and the messages table is changed through the table access
 * method (messages/table.c), which does not check that as the executor
 * does: so every writing call checks it here, first, and fails with 25006
 * as PostgreSQL's own statements do -- before a get would wait, and before
 * a lease or a delete could be made that a switchover would undo.
 */
void
queue_storage_begin_write(StorageSession *session, const char *function)
{
	PreventCommandDuringRecovery(function);
	PreventCommandIfReadOnly(function);
	queue_storage_begin(session);
}

void
queue_storage_begin(StorageSession *session)
{
	Oid			owner;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "queue: SPI_connect failed");

	owner = queue_storage_owner();

	GetUserIdAndSecContext(&session->saved_userid,
						   &session->saved_sec_context);
	storage_caller = session->saved_userid;
	SetUserIdAndSecContext(owner,
						   session->saved_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);

	session->guc_nestlevel = 0;
	session->subid = GetCurrentSubTransactionId();
	open_session = session;
}

/*
 * Pins search_path and the planner settings for the rest of the open
 * session, unless they are already; called before each statement.
 */
void
queue_storage_prepare_sql(void)
{
	if (open_session == NULL)
		elog(ERROR, "queue: SQL outside a storage session");
	if (open_session->guc_nestlevel != 0)
		return;

	open_session->guc_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	plan_with_indexes();
}

void
queue_storage_end(StorageSession *session)
{
	Assert(session == open_session);
	open_session = NULL;
	if (session->guc_nestlevel != 0)
		AtEOXact_GUC(true, session->guc_nestlevel);
	SetUserIdAndSecContext(session->saved_userid,
						   session->saved_sec_context);

	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "queue: SPI_finish failed");
}

/* An error ended the session: the abort undid the rest. */
static void
storage_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		open_session = NULL;
}

static void
storage_subxact_callback(SubXactEvent event, SubTransactionId subid,
						 SubTransactionId parent_subid, void *arg)
{
	/*
	 * The subtransaction the session was opened in, or one around it; a
	 * subtransaction the session opened itself (a waiting get's looks)
	 * leaves it open.
	 */
	if (event == SUBXACT_EVENT_ABORT_SUB && open_session != NULL &&
		subid <= open_session->subid)
		open_session = NULL;
}

void
queue_storage_init(void)
{
	RegisterXactCallback(storage_xact_callback, NULL);
	RegisterSubXactCallback(storage_subxact_callback, NULL);
}

/*
 * Appends rows a statement returned to the result set of a function that
 * set it up with InitMaterializedSRF.  The statement's columns must be
 * those of the function's result type, in order.
 */
void
queue_store_rows(FunctionCallInfo fcinfo, SPITupleTable *rows)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64		i;

	for (i = 0; i < rows->numvals; i++)
		tuplestore_puttuple(rsinfo->setResult, rows->vals[i]);
}
