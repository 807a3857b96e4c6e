import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { assistants, callEventHooks } from "./assistants";
import { id, ownedByOrganization } from "./tenancy";

export const deliveryStatuses = ["PENDING", "SUCCEEDED", "FAILED"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];
export const callEventTypes = ["call_started", "call_concluded"] as const;
export type CallEventType = (typeof callEventTypes)[number];
export const hookMethods = ["POST", "GET", "PUT", "PATCH", "DELETE"] as const;

// The body of one call event, stored once however many hooks it goes to (a call_concluded with its
// recording can be tens of MB). Frozen at emit time: every attempt of every hook sends these bytes.
export const hookEventBodies = pgTable(
  "hook_event_bodies",
  {
    ...ownedByOrganization(),
    callId: uuid("call_id").notNull(),
    eventType: text("event_type").notNull(),
    payload: text("payload").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("hook_event_bodies_uq").on(t.callId, t.eventType)],
);

// The outbox: one row per (call, hook, event type), written in the transaction that changes the call.
// The target is frozen here and the body in hook_event_bodies, so every retry sends the same bytes to
// the same place.
export const hookDeliveries = pgTable(
  "hook_deliveries",
  {
    ...ownedByOrganization(),
    assistantId: uuid("assistant_id").references(() => assistants.id, { onDelete: "set null" }),
    hookId: uuid("hook_id").references(() => callEventHooks.id, { onDelete: "set null" }),
    // the hook id at emit time, kept after the hook is deleted: part of the idempotency key
    hookKey: uuid("hook_key").notNull(),
    callId: uuid("call_id").notNull(),
    eventType: text("event_type").notNull(),
    url: text("url").notNull(),
    method: text("method").notNull(),
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    secretEncrypted: text("secret_encrypted"),
    bodyId: uuid("body_id")
      .notNull()
      .references(() => hookEventBodies.id, { onDelete: "cascade" }),
    status: text("status").$type<DeliveryStatus>().notNull().default("PENDING"),
    // 1 for the first run; each manual retry starts run + 1 under a new workflow id
    run: integer("run").notNull().default(1),
    attemptCount: integer("attempt_count").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
    // null until this run's workflow was started in Temporal
    dispatchedAt: timestamp("dispatched_at", { withTimezone: true }),
    // when a dispatcher took this run to make attempt 1 itself, and that dispatcher's lease key
    // (workers/dispatcher-lease.ts); null until then
    claimedAt: timestamp("claimed_at", { withTimezone: true }),
    claimedBy: integer("claimed_by"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("hook_deliveries_idempotency_uq").on(t.callId, t.hookKey, t.eventType),
    index("hook_deliveries_org_created_idx").on(t.organizationId, t.createdAt),
    index("hook_deliveries_undispatched_idx").on(t.dispatchedAt),
    // the dispatcher's claim of new runs, oldest first, whatever the backlog of runs already claimed
    index("hook_deliveries_unclaimed_idx")
      .on(t.createdAt)
      .where(sql`${t.dispatchedAt} is null and ${t.claimedAt} is null`),
  ],
);

export const hookDeliveryAttempts = pgTable(
  "hook_delivery_attempts",
  {
    id: id(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => hookDeliveries.id, { onDelete: "cascade" }),
    run: integer("run").notNull(),
    attempt: integer("attempt").notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    responseExcerpt: text("response_excerpt"),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
  },
  (t) => [uniqueIndex("hook_delivery_attempts_uq").on(t.deliveryId, t.run, t.attempt)],
);

export type HookDeliveryRow = typeof hookDeliveries.$inferSelect;
