/*-------------------------------------------------------------------------
 *
 * snapshot.c
 *		Letting go of the caller's snapshot while queue_get waits.
 *
 * A waiting get looks at its queue with a new snapshot each time (READ
 * COMMITTED, a volatile function), but the statement that called it keeps
 * the snapshot it started with, and that snapshot's xmin (MyProc->xmin)
 * holds back vacuum in the whole cluster for as long as the wait lasts.
 *
 * PostgreSQL lets a backend drop its xmin only when no snapshot is left.
 * That is never true inside a function, but it is harmless when nothing
 * will read a table with the statement's snapshot any more.  We let go of
 * it only when we can see that this is so:
 *
 *	- READ COMMITTED (no transaction snapshot to keep);
 *	- the statement being run is a plain SELECT whose whole plan is one
 *	  function scan of this very call of queue_get, with no filter, no
 *	  subplan and only columns in its target list, so that once the call
 *	  returns, the statement only reads the call's own result;
 *	- that statement is the one the client sent (not one run by a DO
 *	  block, a procedure or a function), its snapshot is the oldest one of
 *	  the transaction, and no open cursor holds one.
 *
 * Then, before each sleep, the catalog snapshot is dropped and MyProc->xmin
 * cleared, exactly as PostgreSQL does when a transaction's last snapshot
 * goes.  The next look takes a new snapshot, which sets xmin again, newer.
 * In every other shape (a get inside a PL/pgSQL function, REPEATABLE READ,
 * a join, an aggregate over the result, an open cursor) the snapshot is
 * kept for the wait, as before: correct, only less kind to vacuum.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "wait/wait.h"

#include "access/xact.h"
#include "nodes/plannodes.h"
#include "storage/proc.h"
#include "tcop/pquery.h"
#include "tcop/tcopprot.h"
#include "utils/portal.h"
#include "utils/snapmgr.h"

/* Is the plan one function scan of this call, returning only its columns? */
static bool
plan_is_only_this_call(PlannedStmt *stmt, Node *call)
{
	FunctionScan *scan;
	RangeTblFunction *function;
	ListCell   *lc;

	if (stmt->commandType != CMD_SELECT || stmt->hasModifyingCTE ||
		stmt->subplans != NIL || stmt->rowMarks != NIL ||
		list_length(stmt->rtable) != 1 ||
		!IsA(stmt->planTree, FunctionScan))
		return false;

	scan = (FunctionScan *) stmt->planTree;
	if (scan->scan.plan.qual != NIL || scan->scan.plan.initPlan != NIL ||
		scan->scan.plan.lefttree != NULL || scan->scan.plan.righttree != NULL ||
		list_length(scan->functions) != 1)
		return false;

	function = linitial_node(RangeTblFunction, scan->functions);
	if (function->funcexpr != call)
		return false;

	foreach(lc, scan->scan.plan.targetlist)
	{
		TargetEntry *entry = lfirst_node(TargetEntry, lc);

		if (!IsA(entry->expr, Var))
			return false;
	}
	return true;
}

/*
 * Whether the portal runs the statement the client sent, not one a DO
 * block, a procedure or a function runs through SPI inside it (whose own
 * snapshot, older, stays in use).  The client's statement text is the
 * portal's, by the simple and the extended protocol alike.
 */
static bool
portal_is_clients_statement(Portal portal)
{
	return debug_query_string != NULL && portal->sourceText != NULL &&
		strcmp(portal->sourceText, debug_query_string) == 0;
}

/*
 * Whether the get called through fcinfo may let go of its statement's
 * snapshot while it waits (see the top of this file).
 */
bool
queue_snapshot_can_release(FunctionCallInfo fcinfo)
{
	Portal		portal = ActivePortal;
	QueryDesc  *query;

	if (IsolationUsesXactSnapshot() || portal == NULL ||
		portal->strategy != PORTAL_ONE_SELECT || portal->queryDesc == NULL ||
		fcinfo->flinfo == NULL || fcinfo->flinfo->fn_expr == NULL)
		return false;

	query = portal->queryDesc;
	if (!portal_is_clients_statement(portal) ||
		!plan_is_only_this_call(query->plannedstmt, fcinfo->flinfo->fn_expr))
		return false;

	return queue_snapshot_is_oldest(query->snapshot) && ThereAreNoReadyPortals();
}

/*
 * Before a sleep: no snapshot of ours holds back vacuum until the next look.
 * Only to be called when queue_snapshot_can_release said yes, between looks.
 */
void
queue_snapshot_release(void)
{
	InvalidateCatalogSnapshot();
	MyProc->xmin = InvalidTransactionId;
}
