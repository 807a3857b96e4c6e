// The one entry point for call events: the call bridge calls it inside the transaction that changes
// the call, so an event exists exactly when the change does (an outbox). The dispatcher hands the rows
// to Temporal after commit.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { callEventHooks, hookDeliveries, hookEventBodies, hookMethods } from "../db/schema";
import { log } from "../log";
import { serializePayload, type CallConcludedPayload, type CallStartedPayload } from "./payloads";

export const HOOK_DELIVERIES_CHANNEL = "hook_deliveries";

export type EmitCallEventInput = {
  organizationId: string;
  assistantId: string;
  event: CallStartedPayload | CallConcludedPayload;
  /** The event already serialized (serializePayload), e.g. built off the event loop for a big one. */
  body?: string;
};

/**
 * Writes one delivery per matching hook of the assistant. Idempotent: emitting the same event for the
 * same call again adds nothing and returns the existing delivery ids. Ids come in the hooks' order.
 */
export async function emitCallEvent(tx: DbOrTx, input: EmitCallEventInput): Promise<{ deliveryIds: string[] }> {
  const { event } = input;
  const hooks = await tx
    .select()
    .from(callEventHooks)
    .where(and(eq(callEventHooks.assistantId, input.assistantId), eq(callEventHooks.type, event.type)))
    .orderBy(callEventHooks.position);
  const targets = hooks.flatMap((hook) => {
    const { url, method, headers } = hook.parameters;
    if (typeof url !== "string" || url === "") {
      log.warn("hook without url skipped", { hookId: hook.id, callId: event.callId });
      return [];
    }
    return [{ hook, url, method: normalizeMethod(method), headers: headers ?? {} }];
  });
  if (targets.length === 0) return { deliveryIds: [] };

  const bodyId = await storeBody(tx, input.organizationId, event, input.body);
  const inserted = await tx
    .insert(hookDeliveries)
    .values(
      targets.map(({ hook, url, method, headers }) => ({
        organizationId: input.organizationId,
        assistantId: input.assistantId,
        hookId: hook.id,
        hookKey: hook.id,
        callId: event.callId,
        eventType: event.type,
        url,
        method,
        headers,
        secretEncrypted: hook.secretEncrypted,
        bodyId,
      })),
    )
    .onConflictDoNothing({ target: [hookDeliveries.callId, hookDeliveries.hookKey, hookDeliveries.eventType] })
    .returning({ id: hookDeliveries.id });
  // delivered to listeners only on commit, which is exactly when the rows become visible
  if (inserted.length > 0) await tx.execute(sql`select pg_notify(${HOOK_DELIVERIES_CHANNEL}, '')`);

  const rows = await tx
    .select({ id: hookDeliveries.id, hookKey: hookDeliveries.hookKey })
    .from(hookDeliveries)
    .where(
      and(
        eq(hookDeliveries.callId, event.callId),
        eq(hookDeliveries.eventType, event.type),
        inArray(
          hookDeliveries.hookKey,
          targets.map((t) => t.hook.id),
        ),
      ),
    );
  // in the hooks' order, so callers can pair deliveries with hooks
  const byHook = new Map(rows.map((r) => [r.hookKey, r.id]));
  return { deliveryIds: targets.flatMap((t) => byHook.get(t.hook.id) ?? []) };
}

/** Stores the event's body once for all its hooks; an event emitted again keeps the first body. */
async function storeBody(
  tx: DbOrTx,
  organizationId: string,
  event: EmitCallEventInput["event"],
  body?: string,
): Promise<string> {
  const [inserted] = await tx
    .insert(hookEventBodies)
    .values({ organizationId, callId: event.callId, eventType: event.type, payload: body ?? serializePayload(event) })
    .onConflictDoNothing({ target: [hookEventBodies.callId, hookEventBodies.eventType] })
    .returning({ id: hookEventBodies.id });
  if (inserted) return inserted.id;
  const [existing] = await tx
    .select({ id: hookEventBodies.id })
    .from(hookEventBodies)
    .where(and(eq(hookEventBodies.callId, event.callId), eq(hookEventBodies.eventType, event.type)));
  if (!existing) throw new Error(`the body of ${event.type} for call ${event.callId} vanished`);
  return existing.id;
}

/** The hook's method in upper case; anything unknown falls back to the default, POST. */
export function normalizeMethod(method: unknown): string {
  const upper = typeof method === "string" ? method.toUpperCase() : "POST";
  return (hookMethods as readonly string[]).includes(upper) ? upper : "POST";
}
