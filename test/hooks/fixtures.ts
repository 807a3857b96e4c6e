// Data and event factories for the hook tests: rows go straight into Postgres with drizzle, and events
// go through transactionWithEvents, the same function the call bridge calls.
import { asc, eq, inArray } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { loadConfig } from "../../src/config";
import { createSecretBox } from "../../src/crypto/secrets";
import { createDb, type Db } from "../../src/db/client";
import {
  assistants,
  callEventHooks,
  hookDeliveries,
  hookDeliveryAttempts,
  hookEventBodies,
  organizations,
  vendors,
  type DeliveryStatus,
  type HookDeliveryRow,
} from "../../src/db/schema";
import { transactionWithEvents, type EmitCallEventInput } from "../../src/events/emit-call-event";
import type { CallEventType } from "../../src/db/schema";
import type { CallConcludedPayload, CallStartedPayload } from "../../src/events/payloads";

/** The element at `index`; throws naming it when there is none, so a missing row fails the test loudly. */
export function at<T>(xs: readonly T[], index = 0): T {
  const x = xs[index];
  if (x === undefined) throw new Error(`expected an element at ${index}, got ${xs.length}`);
  return x;
}

/** Emits an event for an assistant with one hook of its type and returns that one delivery id. */
export async function emitOne(db: Db, input: EmitCallEventInput): Promise<string> {
  const { deliveryIds } = await emit(db, input);
  if (deliveryIds.length !== 1) throw new Error(`expected one delivery, got ${deliveryIds.length}`);
  return at(deliveryIds);
}

export function openDb() {
  return createDb(process.env.DATABASE_URL!, { max: 5 });
}

export type HookSpec = {
  type?: CallEventType;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  secret?: string;
};

export async function createTenant(db: Db) {
  const vendor = at(await db.insert(vendors).values({ name: "hooks vendor" }).returning());
  const org = at(await db.insert(organizations).values({ vendorId: vendor.id, name: "hooks org" }).returning());
  return { vendorId: vendor.id, organizationId: org.id };
}

/** An assistant with the given hooks, in a fresh organization unless one is given. */
export async function createAssistantWithHooks(db: Db, hooks: HookSpec[], organizationId?: string) {
  const tenant = organizationId ? { organizationId } : await createTenant(db);
  const assistant = at(
    await db
      .insert(assistants)
      .values({ organizationId: tenant.organizationId, kind: "assistant", name: "hooked" })
      .returning(),
  );
  const box = createSecretBox(loadConfig().encryptionKey);
  const hookRows = hooks.length
    ? await db
        .insert(callEventHooks)
        .values(
          hooks.map((h, position) => ({
            assistantId: assistant.id,
            position,
            type: h.type ?? "call_concluded",
            parameters: { url: h.url, method: h.method, headers: h.headers },
            secretEncrypted: h.secret ? box.encrypt(h.secret) : null,
          })),
        )
        .returning()
    : [];
  return { ...tenant, assistantId: assistant.id, hooks: hookRows };
}

export function callStarted(overrides: Partial<CallStartedPayload> = {}): CallStartedPayload {
  return {
    type: "call_started",
    callId: randomUUID(),
    startedAt: Date.now(),
    transport: { type: "sip", calledNumber: "+4930123456", callingNumber: "+4917012345" },
    direction: "inbound",
    ...overrides,
  };
}

export function callConcluded(overrides: Partial<CallConcludedPayload> = {}): CallConcludedPayload {
  const t = Date.now() - 60_000;
  return {
    type: "call_concluded",
    callId: randomUUID(),
    startedAt: t,
    endedAt: t + 60_000,
    shortSummary: "Caller booked a table.",
    summary: null,
    callRecording: null,
    transport: { type: "websocket" },
    messages: [
      { type: "text", role: "ASSISTANT", timestamp: t + 1_000, text: "Hello, how can I help?" },
      { type: "text", role: "USER", timestamp: t + 3_000, text: "A table for two, please." },
    ],
    direction: "inbound",
    endedReason: "hangup",
    ...overrides,
  };
}

/** Emits in its own transaction, as the bridge would around its own change to the call. */
export function emit(db: Db, input: EmitCallEventInput) {
  return transactionWithEvents(db, (_tx, emit) => emit(input));
}

export async function deliveryRow(db: Db, id: string): Promise<HookDeliveryRow> {
  return at(await db.select().from(hookDeliveries).where(eq(hookDeliveries.id, id)));
}

/** The body a delivery sends (stored once per event, shared by its hooks). */
export async function bodyOf(db: Db, deliveryId: string): Promise<string> {
  const rows = await db
    .select({ payload: hookEventBodies.payload })
    .from(hookDeliveries)
    .innerJoin(hookEventBodies, eq(hookEventBodies.id, hookDeliveries.bodyId))
    .where(eq(hookDeliveries.id, deliveryId));
  return at(rows).payload;
}

export function attemptsOf(db: Db, id: string) {
  return db
    .select()
    .from(hookDeliveryAttempts)
    .where(eq(hookDeliveryAttempts.deliveryId, id))
    .orderBy(asc(hookDeliveryAttempts.run), asc(hookDeliveryAttempts.attempt));
}

/** Polls Postgres until every delivery has one of `statuses`. */
export async function waitForStatus(db: Db, ids: string[], statuses: DeliveryStatus[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await db.select().from(hookDeliveries).where(inArray(hookDeliveries.id, ids));
    if (rows.length === ids.length && rows.every((r) => statuses.includes(r.status))) return rows;
    if (Date.now() > deadline) {
      const seen = rows.map((r) => `${r.status}/${r.attemptCount}`).join(", ");
      throw new Error(`deliveries not ${statuses.join("|")} within ${timeoutMs} ms: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
