// Campaigns (design.md, "Campaigns"): a campaign's settings, and one row per contact holding its
// state machine. The workflow holds the campaign's id only; contacts are claimed here (pending →
// dialing in the transaction that offers the call), so a restart of any process loses none and
// dials none twice at once.
import type { ContactStatus } from "./campaign-values";
import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { assistants } from "./assistants";
import type { EndedReason, voicemailActions } from "./calls";
import { sipPhoneNumbers } from "./sip";
import { ownedByOrganization, timestamps } from "./tenancy";

export const campaignStatuses = ["running", "paused", "completed", "canceled"] as const;
export type CampaignStatus = (typeof campaignStatuses)[number];
/** The changes the API makes that the campaign's workflow hears of (as signals of these names). */
export type CampaignChange = "created" | "pause" | "resume" | "cancel";
/** NOTIFYed with the campaign's id in the transaction that marks a change (services/campaign-changes.ts). */
export const CAMPAIGN_CHANGES_CHANNEL = "campaign_changes";
export const weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
export type Weekday = (typeof weekdays)[number];
export type CampaignSchedule = {
  timezone: string;
  windows: { days: Weekday[]; start: string; end: string }[];
};
export const retryReasons = ["busy", "no-answer", "failed"] as const;
export type RetryReason = (typeof retryReasons)[number];
export type CampaignRetry = { maxAttempts: number; onReasons: RetryReason[]; delayMinutes: number };
export type CampaignVoicemail = { action: (typeof voicemailActions)[number]; message?: string };

export const campaigns = pgTable(
  "campaigns",
  {
    ...ownedByOrganization(),
    name: text("name").notNull(),
    assistantId: uuid("assistant_id")
      .notNull()
      .references(() => assistants.id, { onDelete: "cascade" }),
    phoneNumberId: uuid("phone_number_id")
      .notNull()
      .references(() => sipPhoneNumbers.id, { onDelete: "cascade" }),
    status: text("status").$type<CampaignStatus>().notNull().default("running"),
    maxConcurrentCalls: integer("max_concurrent_calls").notNull(),
    reservedInboundSlots: integer("reserved_inbound_slots").notNull(),
    schedule: jsonb("schedule").$type<CampaignSchedule>(),
    retry: jsonb("retry").$type<CampaignRetry>().notNull(),
    voicemail: jsonb("voicemail").$type<CampaignVoicemail>().notNull(),
    ringTimeoutSeconds: integer("ring_timeout_seconds").notNull(),
    /** the latest change the workflow has not been signalled yet (the worker clears it once it has) */
    pendingSignal: text("pending_signal").$type<CampaignChange>(),
    /** counts the changes: the worker clears only the one it signalled, never a newer one */
    signalSeq: integer("signal_seq").notNull().default(0),
    ...timestamps,
  },
  (t) => [
    index("campaigns_org_created_idx").on(t.organizationId, t.createdAt),
    index("campaigns_pending_signal_idx").on(t.updatedAt).where(sql`${t.pendingSignal} is not null`),
  ],
);

export const campaignContacts = pgTable(
  "campaign_contacts",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    campaignId: uuid("campaign_id")
      .notNull()
      .references(() => campaigns.id, { onDelete: "cascade" }),
    /** the contact's place in the list as given: dialled in this order */
    position: integer("position").notNull(),
    to: text("to").notNull(),
    variables: jsonb("variables").$type<Record<string, string>>().notNull(),
    status: text("status").$type<ContactStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastEndedReason: text("last_ended_reason").$type<EndedReason>(),
    /** every call placed to the contact, oldest first */
    agentTaskIds: uuid("agent_task_ids").array().notNull().default(sql`'{}'::uuid[]`),
    /** a retry waits until then */
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("campaign_contacts_campaign_status_idx").on(t.campaignId, t.status, t.nextAttemptAt, t.position),
    index("campaign_contacts_campaign_position_idx").on(t.campaignId, t.position),
  ],
);
