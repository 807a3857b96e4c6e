// Hook deliveries as the API shows them: state, every attempt, and a manual re-delivery of a FAILED one.
import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { callEventHooks, hookDeliveries, hookDeliveryAttempts } from "../db/schema";
import { conflict } from "../errors";
import type { HookDeliveryQuery } from "../models/hook-deliveries";
import { HOOK_DELIVERIES_CHANNEL, normalizeMethod } from "../events/emit-call-event";
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
    db.select(columns).from(hookDeliveries).where(where).orderBy(...orderBy).limit(limit).offset(offset),
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
export async function retryHookDelivery(db: DbOrTx, scope: OrgScope, id: string) {
  await db.transaction(async (tx) => {
    const row = await single(
      tx.select({ status: hookDeliveries.status, hookId: hookDeliveries.hookId }).from(hookDeliveries).where(inOrg(scope, id)).for("update"),
      "hook delivery",
    );
    if (row.status !== "FAILED") throw conflict(`only a FAILED delivery can be retried; this one is ${row.status}`);
    const [hook] = row.hookId ? await tx.select().from(callEventHooks).where(eq(callEventHooks.id, row.hookId)) : [];
    const target = hook?.parameters.url
      ? { url: hook.parameters.url, method: normalizeMethod(hook.parameters.method), headers: hook.parameters.headers ?? {}, secretEncrypted: hook.secretEncrypted }
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
        updatedAt: sql`now()`,
      })
      .where(eq(hookDeliveries.id, id));
    await tx.execute(sql`select pg_notify(${HOOK_DELIVERIES_CHANNEL}, '')`);
  });
  return getHookDelivery(db, scope, id);
}
