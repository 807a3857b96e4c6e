import { t } from "elysia";
import { Integer, Nullable, Strict, Uuid } from "./common";

const Hostname = t.String({
  minLength: 1,
  maxLength: 253,
  pattern:
    "^(\\[[0-9a-fA-F:.]+\\]|[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*)$",
  description: "hostname or IP address of the SIP server",
});

// read-only: how the bridge that owns the credential is doing with its REGISTER (null before any bridge took it)
const Registration = t.Object({
  state: t.Union([t.Literal("registered"), t.Literal("failing"), t.Literal("unregistered")]),
  lastStatus: Nullable(Integer({ description: "status of the last REGISTER response (e.g. 200, 401, 408)" })),
  lastError: Nullable(t.String()),
  updatedAt: t.String({ format: "date-time" }),
});

const credentialWrite = t.Object(
  {
    hostname: Hostname,
    port: Integer({ minimum: 1, maximum: 65535 }),
    username: t.String({ minLength: 1, maxLength: 200 }),
    password: t.String({ minLength: 1, maxLength: 500, description: "write-only; never returned", writeOnly: true }),
    maxAgentTasks: t.Optional(Integer({ minimum: 1, maximum: 100_000, default: 10 })),
  },
  Strict,
);

export const SipCredentialModel = {
  create: credentialWrite,
  update: credentialWrite,
  out: t.Object({
    id: Uuid,
    hostname: t.String(),
    port: Integer(),
    username: t.String(),
    maxAgentTasks: Integer(),
    activeAgentTasks: Integer({
      description: "read-only: calls on the credential now (offered or active agent tasks, all bridges)",
    }),
    registration: Nullable(Registration),
  }),
};
export type SipCredentialInput = typeof credentialWrite.static;

// Exactly what normalizePhoneNumber (services/phone-format.ts) accepts, so the OpenAPI document tells the
// truth: separators \s ( ) . - / anywhere, then "+" and 2-20 digits, "00" and 2-20 digits, or 2-20 digits
// not starting with 00. test/security/openapi.test.ts holds the two to agreement.
const SEP = String.raw`[\s().\-/]*`;
const DIGIT = `[0-9]${SEP}`;
const PHONE_NUMBER_PATTERN = `^${SEP}(?:\\+${SEP}(?:${DIGIT}){2,20}|0${SEP}0${SEP}(?:${DIGIT}){2,20}|[1-9]${SEP}(?:${DIGIT}){1,19}|0${SEP}[1-9]${SEP}(?:${DIGIT}){0,18})$`;

const PhoneNumber = t.String({
  minLength: 1,
  maxLength: 40,
  pattern: PHONE_NUMBER_PATTERN,
  description:
    "E.164 (+14155550100) or digits; spaces, dots, dashes and parentheses are dropped, a leading 00 becomes +",
});

export const PhoneNumberModel = {
  create: t.Object({ phoneNumber: PhoneNumber, fallback: t.Optional(t.Boolean()) }, Strict),
  update: t.Object({ phoneNumber: PhoneNumber, fallback: t.Optional(t.Boolean()) }, Strict),
  out: t.Object({ id: Uuid, phoneNumber: t.String(), fallback: t.Boolean() }),
};
export type PhoneNumberInput = typeof PhoneNumberModel.create.static;
