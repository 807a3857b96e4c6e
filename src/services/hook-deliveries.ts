// Hook deliveries as the API shows them: state, every attempt, counts over a window, and re-delivery of
// FAILED ones (one, or all of a window).
import { and, asc, count, eq, gte, inArray, lt, sql, type SQL } from "drizzle-orm";
import type { Db, DbOrTx, Tx } from "../db/client";
import { callEventHooks, hookDeliveries, hookDeliveryAttempts, type DeliveryStatus } from "../db/schema";
import { badRequest, conflict } from "../errors";
import type { HookDeliveryQuery, HookDeliveryWindow } from "../models/hook-deliveries";
import { normalizeMethod } from "../events/emit-call-event";
import { wakeHookDispatchers } from "../events/wake-dispatchers";
import { hookDeliveryWorkflowId } from "../../workflows/ids";
import type { OrgScope } from "./auth";
import { parsePaging, selectPage } from "./paging";
import { single } from "./rows";

// headers and the secret stay out: static headers often carry credentials
const columns = {
  id: hookDeliveries.id,
  callId: hookDeliveries.callId,
  eventType: hookDeliveries.eventType,
  // the hook's id at emit time, kept when the hook is removed later
  hookId: hookDeliveries.hookKey,
  assistantId: hookDeliveries.assistantId,
  url: hookDeliveries.url,
  method: hookDeliveries.method,
  status: hookDeliveries.status,
  run: hookDeliveries.run,
  attemptCount: hookDeliveries.attemptCount,
  nextAttemptAt: hookDeliveries.nextAttemptAt,
  createdAt: hookDeliveries.createdAt,
  updatedAt: hookDeliveries.updatedAt,
};
const sortable = {
  id: hookDeliveries.id,
  createdAt: hookDeliveries.createdAt,
  updatedAt: hookDeliveries.updatedAt,
  status: hookDeliveries.status,
  eventType: hookDeliveries.eventType,
};

type DeliveryColumns = { [K in keyof typeof columns]: (typeof columns)[K]["_"]["data"] };
const withWorkflow = <T extends Pick<DeliveryColumns, "id" | "run">>(row: T) => ({
  ...row,
  workflowId: hookDeliveryWorkflowId(row.id, row.run),
});

const inOrg = (scope: OrgScope, id: string) =>
  and(eq(hookDeliveries.organizationId, scope.organizationId), eq(hookDeliveries.id, id));

export async function listHookDeliveries(db: DbOrTx, scope: OrgScope, query: HookDeliveryQuery) {
  const paging = parsePaging(query, sortable, "createdAt,asc");
  const filters: SQL[] = [eq(hookDeliveries.organizationId, scope.organizationId)];
  if (query.callId) filters.push(eq(hookDeliveries.callId, query.callId));
  if (query.status) filters.push(eq(hookDeliveries.status, query.status));
  if (query.hookId) filters.push(eq(hookDeliveries.hookKey, query.hookId));
  if (query.eventType) filters.push(eq(hookDeliveries.eventType, query.eventType));
  const where = and(...filters);
  const page = await selectPage(db, hookDeliveries, where, paging, (limit, offset, orderBy) =>
    db
      .select(columns)
      .from(hookDeliveries)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
  return { ...page, data: page.data.map(withWorkflow) };
}

export async function getHookDelivery(db: DbOrTx, scope: OrgScope, id: string) {
  const delivery = await single(db.select(columns).from(hookDeliveries).where(inOrg(scope, id)), "hook delivery");
  const attempts = await db
    .select({
      run: hookDeliveryAttempts.run,
      attempt: hookDeliveryAttempts.attempt,
      startedAt: hookDeliveryAttempts.startedAt,
      durationMs: hookDeliveryAttempts.durationMs,
      statusCode: hookDeliveryAttempts.statusCode,
      error: hookDeliveryAttempts.error,
      responseExcerpt: hookDeliveryAttempts.responseExcerpt,
      nextAttemptAt: hookDeliveryAttempts.nextAttemptAt,
    })
    .from(hookDeliveryAttempts)
    .where(eq(hookDeliveryAttempts.deliveryId, id))
    .orderBy(asc(hookDeliveryAttempts.run), asc(hookDeliveryAttempts.attempt));
  return { ...withWorkflow(delivery), attempts };
}

/**
 * Starts run + 1 of a FAILED delivery (a new workflow id; earlier attempts keep their run number).
 * The body stays as emitted; target, headers and secret are taken from the hook again when it still
 * exists, so a fixed URL or a rotated secret applies to the re-delivery.
 */
export async function retryHookDelivery(db: Db, scope: OrgScope, id: string) {
  await db.transaction(async (tx) => {
    const row = await single(
      tx
        .select({ id: hookDeliveries.id, status: hookDeliveries.status, hookId: hookDeliveries.hookId })
        .from(hookDeliveries)
        .where(inOrg(scope, id))
        .for("update"),
      "hook delivery",
    );
    if (row.status !== "FAILED") throw conflict(`only a FAILED delivery can be retried; this one is ${row.status}`);
    await startNextRuns(tx, [row]);
  });
  wakeHookDispatchers(db);
  return getHookDelivery(db, scope, id);
}

/** Starts the next run of every FAILED delivery created in the window (of one hook, if given), as retry does. */
export async function recoverHookDeliveries(db: Db, scope: OrgScope, window: HookDeliveryWindow) {
  const where = windowFilter(scope, window);
  const deliveryIds = await db.transaction(async (tx) => {
    const rows = await tx
      .select({ id: hookDeliveries.id, hookId: hookDeliveries.hookId })
      .from(hookDeliveries)
      .where(and(where, eq(hookDeliveries.status, "FAILED")))
      .orderBy(asc(hookDeliveries.createdAt))
      .for("update");
    await startNextRuns(tx, rows);
    return rows.map((r) => r.id);
  });
  if (deliveryIds.length > 0) wakeHookDispatchers(db);
  return { restarted: deliveryIds.length, deliveryIds };
}

/** Counts by state over the window, overall and per hook, with each hook's success rate. */
export async function hookDeliveryStats(db: DbOrTx, scope: OrgScope, window: HookDeliveryWindow) {
  const createdBefore = window.createdBefore ? new Date(window.createdBefore) : new Date();
  const rows = await db
    .select({ hookId: hookDeliveries.hookKey, status: hookDeliveries.status, n: count() })
    .from(hookDeliveries)
    .where(windowFilter(scope, { ...window, createdBefore: createdBefore.toISOString() }))
    .groupBy(hookDeliveries.hookKey, hookDeliveries.status)
    .orderBy(asc(hookDeliveries.hookKey));
  const zero = (): Record<DeliveryStatus, number> => ({ PENDING: 0, SUCCEEDED: 0, FAILED: 0 });
  const byStatus = zero();
  const perHook = new Map<string, Record<DeliveryStatus, number>>();
  for (const { hookId, status, n } of rows) {
    byStatus[status] += n;
    const counts = perHook.get(hookId) ?? zero();
    counts[status] += n;
    perHook.set(hookId, counts);
  }
  const sum = (c: Record<DeliveryStatus, number>) => c.PENDING + c.SUCCEEDED + c.FAILED;
  return {
    createdAfter: new Date(window.createdAfter),
    createdBefore,
    total: sum(byStatus),
    byStatus,
    hooks: [...perHook].map(([hookId, counts]) => {
      const finished = counts.SUCCEEDED + counts.FAILED;
      return {
        hookId,
        total: sum(counts),
        byStatus: counts,
        successRate: finished ? counts.SUCCEEDED / finished : null,
      };
    }),
  };
}

function windowFilter(scope: OrgScope, window: HookDeliveryWindow): SQL | undefined {
  const after = new Date(window.createdAfter);
  const before = window.createdBefore ? new Date(window.createdBefore) : null;
  if (before && before <= after) throw badRequest("createdBefore", "must be later than createdAfter");
  return and(
    eq(hookDeliveries.organizationId, scope.organizationId),
    gte(hookDeliveries.createdAt, after),
    before ? lt(hookDeliveries.createdAt, before) : undefined,
    window.hookId ? eq(hookDeliveries.hookKey, window.hookId) : undefined,
  );
}

/**
 * Resets each delivery to PENDING as run + 1, unclaimed; the dispatcher, woken after the commit, makes
 * attempt 1 of the new run and starts its workflow.
 * Target, headers and secret come from the hook again when it still exists.
 */
async function startNextRuns(tx: Tx, rows: { id: string; hookId: string | null }[]) {
  if (rows.length === 0) return;
  const hookIds = [...new Set(rows.flatMap((r) => (r.hookId ? [r.hookId] : [])))];
  const hooks = hookIds.length ? await tx.select().from(callEventHooks).where(inArray(callEventHooks.id, hookIds)) : [];
  const byId = new Map(hooks.map((h) => [h.id, h]));
  for (const row of rows) {
    const hook = row.hookId ? byId.get(row.hookId) : undefined;
    const target = hook?.parameters.url
      ? {
          url: hook.parameters.url,
          method: normalizeMethod(hook.parameters.method),
          headers: hook.parameters.headers ?? {},
          secretEncrypted: hook.secretEncrypted,
        }
      : {};
    await tx
      .update(hookDeliveries)
      .set({
        ...target,
        status: "PENDING",
        run: sql`${hookDeliveries.run} + 1`,
        attemptCount: 0,
        nextAttemptAt: null,
        dispatchedAt: null,
        claimedAt: null,
        claimedBy: null,
        updatedAt: sql`now()`,
      })
      .where(eq(hookDeliveries.id, row.id));
  }
}
