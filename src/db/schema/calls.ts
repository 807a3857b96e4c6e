import { index, integer, jsonb, pgTable, real, text, timestamp, uuid } from "drizzle-orm/pg-core";
import type { CallLatency } from "../../models/call-latency";
import type { AgentTaskHandoff } from "../../models/handoff";
import { assistants } from "./assistants";
import { sipCredentials, sipPhoneNumbers } from "./sip";
import { ownedByOrganization } from "./tenancy";

export const agentTaskStatuses = ["offered", "active", "completed", "failed"] as const;
export type AgentTaskStatus = (typeof agentTaskStatuses)[number];
export type Transport = { type: "sip" | "websocket"; calledNumber?: string; callingNumber?: string };
export const callDirections = ["inbound", "outbound"] as const;
export type CallDirection = (typeof callDirections)[number];
/** Why a call ended, as the API and call_concluded show it (design.md, "Agent tasks gain"). */
export const endedReasons = [
  "hangup",
  "assistant-ended",
  "busy",
  "no-answer",
  "unreachable",
  "declined",
  "failed",
  "canceled",
  "voicemail",
  "transferred",
  "max-duration",
  "bridge-lost",
  "silence-timeout",
] as const;
export type EndedReason = (typeof endedReasons)[number];
export const voicemailActions = ["hangup", "leave_message", "continue"] as const;
/** What the bridge needs to place an outbound call, written by the API with the offered task. */
export type OutboundDial = {
  /** E.164 number or sip: URI, as given */
  to: string;
  /** the caller id (the phone number's phoneNumber) */
  from: string;
  ringTimeoutMs: number;
  maxDurationMs: number;
  voicemail: { action: (typeof voicemailActions)[number]; message?: string };
};

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
    direction: text("direction").$type<CallDirection>().notNull().default("inbound"),
    endedReason: text("ended_reason").$type<EndedReason>(),
    // the final SIP response of an outbound INVITE
    sipStatus: integer("sip_status"),
    // every variable the call's templates saw (the given ones until the call renders them)
    variables: jsonb("variables").$type<Record<string, string>>(),
    transferredTo: text("transferred_to"),
    // no foreign key yet: campaigns come with their own table (design.md, "Campaigns")
    campaignId: uuid("campaign_id"),
    analysis: jsonb("analysis").$type<Record<string, unknown>>(),
    // latency per turn, written with the conclusion (null while the call runs, and for calls that never started)
    latency: jsonb("latency").$type<CallLatency>(),
    // the assistants the caller was handed to, in order (docs/handoff.md), written with the conclusion
    handoffs: jsonb("handoffs").$type<AgentTaskHandoff[]>().notNull().default([]),
    // outbound only: what to dial, read by the bridge that places the call
    dial: jsonb("dial").$type<OutboundDial>(),
    // a test call's run (design.md, "How a test call runs"); null for real calls
    testRunId: uuid("test_run_id"),
  },
  (t) => [
    index("agent_tasks_org_created_idx").on(t.organizationId, t.createdAt),
    index("agent_tasks_active_credential_idx").on(t.credentialId, t.status),
    index("agent_tasks_bridge_status_idx").on(t.bridgeId, t.status),
    index("agent_tasks_test_run_idx").on(t.testRunId),
  ],
);

/** NOTIFY channel: an outbound call was offered; the payload is the bridge that is to place it. */
export const OUTBOUND_CALLS_CHANNEL = "outbound_calls";
/** NOTIFY channel: a running call is to be hung up (POST agent-tasks/{id}/hangup); the payload is its callId. */
export const CALL_HANGUP_CHANNEL = "call_hangup";
/** NOTIFY channel: a campaign's call ended (its task closed); the payload is the campaign's id. */
export const CAMPAIGN_CALL_ENDS_CHANNEL = "campaign_call_ends";
