// Request and response schemas of P/campaigns (design.md, "Campaigns").
import { t } from "elysia";
import {
  campaignStatuses,
  contactStatuses,
  endedReasons,
  retryReasons,
  voicemailActions,
  weekdays,
} from "../db/schema";
import { Enum, Integer, Nullable, Strict, Uuid, pageQueryFields } from "./common";

export const MAX_CONTACTS = 10_000;

const Variables = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: "the contact's {{name}} values (at most 50 strings of at most 1,000 characters)",
});
const Contact = t.Object(
  {
    to: t.String({ minLength: 1, maxLength: 256, description: "E.164 with its +, or a sip: URI" }),
    variables: t.Optional(Variables),
  },
  Strict,
);
const Time = t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", description: "HH:MM, 24 h" });
const Schedule = t.Object(
  {
    timezone: t.String({ minLength: 1, maxLength: 64, description: "an IANA time zone (Europe/Berlin)" }),
    windows: t.Array(
      t.Object(
        {
          days: t.Array(Enum(weekdays), { minItems: 1, maxItems: 7 }),
          start: Time,
          end: t.Union([Time, t.Literal("24:00")], {
            description: "later than start: a window never crosses midnight",
          }),
        },
        Strict,
      ),
      { minItems: 1, maxItems: 28 },
    ),
  },
  Strict,
);
const Retry = t.Object(
  {
    maxAttempts: t.Optional(Integer({ minimum: 1, maximum: 10, description: "default 3" })),
    onReasons: t.Optional(t.Array(Enum(retryReasons), { uniqueItems: true, description: "default busy, no-answer" })),
    delayMinutes: t.Optional(Integer({ minimum: 0, maximum: 1440, description: "default 60" })),
  },
  Strict,
);
const Voicemail = t.Object(
  { action: Enum(voicemailActions), message: t.Optional(t.String({ maxLength: 4000 })) },
  Strict,
);

const settings = {
  name: t.String({ minLength: 1, maxLength: 200 }),
  assistantId: t.Optional(Uuid),
  agentId: t.Optional(Uuid),
  phoneNumberId: t.Optional(Uuid),
  maxConcurrentCalls: t.Optional(Integer({ minimum: 1, maximum: 100, description: "default 1" })),
  reservedInboundSlots: t.Optional(Integer({ minimum: 0, maximum: 10_000, description: "default 0" })),
  ringTimeoutSeconds: t.Optional(Integer({ minimum: 5, maximum: 300, description: "default 30" })),
  schedule: t.Optional(Schedule),
  retry: t.Optional(Retry),
  voicemail: t.Optional(Voicemail),
};

const count = Integer({ minimum: 0 });
const Counts = t.Object({
  total: count,
  pending: count,
  dialing: count,
  inProgress: count,
  completed: count,
  failed: count,
  busy: count,
  noAnswer: count,
  voicemail: count,
  canceled: count,
});

export const CampaignModel = {
  create: t.Object(
    { ...settings, contacts: t.Array(Contact, { minItems: 1, maxItems: MAX_CONTACTS }) },
    { ...Strict, description: "JSON, or text/csv with a `to` column (other fields then in the query)" },
  ),
  out: t.Object({
    id: Uuid,
    name: t.String(),
    assistantId: Nullable(Uuid),
    agentId: Nullable(Uuid),
    phoneNumberId: Uuid,
    status: Enum(campaignStatuses),
    maxConcurrentCalls: Integer(),
    reservedInboundSlots: Integer(),
    ringTimeoutSeconds: Integer(),
    schedule: Nullable(Schedule),
    retry: t.Object({ maxAttempts: Integer(), onReasons: t.Array(Enum(retryReasons)), delayMinutes: Integer() }),
    voicemail: Voicemail,
    counts: Counts,
    createdAt: t.Date(),
    updatedAt: t.Date(),
  }),
  contact: t.Object({
    id: Uuid,
    to: t.String(),
    variables: t.Record(t.String(), t.String()),
    status: Enum(contactStatuses),
    attempts: Integer(),
    lastEndedReason: Nullable(Enum(endedReasons)),
    agentTaskIds: t.Array(Uuid),
  }),
};
export type CampaignInput = typeof CampaignModel.create.static;
export type CampaignOut = typeof CampaignModel.out.static;
export type CampaignCounts = typeof Counts.static;

export const ContactsQuery = t.Object({ ...pageQueryFields, status: t.Optional(Enum(contactStatuses)) }, Strict);
/** The campaign's fields for a text/csv body: strings as a query gives them, parsed by the CSV reader. */
export const CampaignCsvQuery = t.Object(
  Object.fromEntries(
    [
      "name",
      "assistantId",
      "agentId",
      "phoneNumberId",
      "maxConcurrentCalls",
      "reservedInboundSlots",
      "ringTimeoutSeconds",
      "schedule",
      "retry",
      "voicemail",
    ].map((k) => [k, t.Optional(t.String({ maxLength: 4000 }))]),
  ),
);
