// Request and response schemas of P/campaigns (design.md, "Campaigns").
import { t, type TSchema } from "elysia";
import type { TOptional, TString } from "@sinclair/typebox";
import {
  campaignStatuses,
  contactStatuses,
  endedReasons,
  retryReasons,
  voicemailActions,
  weekdays,
} from "../db/schema";
import { Destination } from "./calls";
import { DigitsBetween, Enum, Integer, Nullable, Strict, Uuid, pageQueryFields } from "./common";
import { documentedAs, named, withExactlyOne } from "./documented-as";

export const MAX_CONTACTS = 10_000;

const Variables = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: "the contact's {{name}} values (at most 50 strings of at most 1,000 characters)",
});
const Contact = t.Object(
  {
    to: Destination(256),
    variables: t.Optional(Variables),
  },
  Strict,
);
const Time = t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", description: "HH:MM, 24 h" });
// checkSchedule accepts what this runtime's Intl does (aliases too); the document names its canonical zones
const timeZones = [...new Set([...Intl.supportedValuesOf("timeZone"), "UTC"])];
const zoneDescription = "an IANA time zone (Europe/Berlin)";
const TimeZone = documentedAs(
  t.String({ minLength: 1, maxLength: 64, description: zoneDescription }),
  named("TimeZone", t.String({ enum: timeZones, description: zoneDescription })),
);
const Schedule = t.Object(
  {
    timezone: TimeZone,
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
  create: withExactlyOne(
    t.Object(
      { ...settings, contacts: t.Array(Contact, { minItems: 1, maxItems: MAX_CONTACTS }) },
      { ...Strict, description: "JSON, or text/csv with a `to` column (other fields then in the query)" },
    ),
    ["assistantId", "agentId"],
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
/** A field of the JSON body as a query string carries it (campaignInput converts it back by the same type). */
function asQueryValue(schema: TSchema & { type?: unknown; minimum?: number; maximum?: number }) {
  if (schema.type === "integer") return DigitsBetween(schema.minimum ?? 0, schema.maximum!, schema.description ?? "");
  if (schema.type === "object")
    return t.String({
      maxLength: 4000,
      contentMediaType: "application/json",
      contentSchema: schema,
      description: "JSON, as in the JSON body",
    });
  return schema;
}

/** The campaign's fields for a text/csv body (`name` required then): the JSON body's, as a query gives them. */
export const CampaignCsvQuery = t.Object(
  Object.fromEntries(
    Object.entries(settings).map(([name, schema]) => [name, t.Optional(asQueryValue(schema))]),
  ) as Record<keyof typeof settings, TOptional<TString>>,
);
