import { index, integer, jsonb, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assistants } from "./assistants";
import { sipCredentials, sipPhoneNumbers } from "./sip";
import { ownedByOrganization } from "./tenancy";

export const agentTaskStatuses = ["offered", "active", "completed", "failed"] as const;
export type AgentTaskStatus = (typeof agentTaskStatuses)[number];
export type Transport = { type: "sip" | "websocket"; calledNumber?: string; callingNumber?: string };

export const agentTasks = pgTable(
  "agent_tasks",
  {
    ...ownedByOrganization(),
    callId: uuid("call_id").notNull().unique(),
    // set null, not cascade: a finished call stays on record after its assistant is deleted
    assistantId: uuid("assistant_id").references(() => assistants.id, { onDelete: "set null" }),
    credentialId: uuid("credential_id").references(() => sipCredentials.id, { onDelete: "set null" }),
    phoneNumberId: uuid("phone_number_id").references(() => sipPhoneNumbers.id, { onDelete: "set null" }),
    transport: jsonb("transport").$type<Transport>().notNull(),
    status: text("status").$type<AgentTaskStatus>().notNull(),
    error: text("error"),
    // the bridge instance that runs the call, so a restarted bridge can close what it left open
    bridgeId: text("bridge_id"),
    startedAt: timestamp("started_at", { withTimezone: true }),
    endedAt: timestamp("ended_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    // what the caller's RTCP reports said of our audio (SIP calls whose caller sends RTCP; else null)
    callerJitterMs: real("caller_jitter_ms"),
    callerPacketsLost: integer("caller_packets_lost"),
    roundTripMs: real("round_trip_ms"),
  },
  (t) => [
    index("agent_tasks_org_created_idx").on(t.organizationId, t.createdAt),
    index("agent_tasks_active_credential_idx").on(t.credentialId, t.status),
    index("agent_tasks_bridge_status_idx").on(t.bridgeId, t.status),
  ],
);
