import { t } from "elysia";
import { voicemailActions } from "../db/schema";
import { PATTERN_MESSAGE } from "../errors";
import { integerPattern } from "../lib/integer-pattern";
import { Enum, Integer, Strict, Uuid } from "./common";
import { withExactlyOne } from "./documented-as";

/** A number as dialled: E.164 with its + (+15551230000). */
export const E164 = /^\+[1-9][0-9]{1,14}$/;
/** A sip: URI: its host (a name or a bracketed IP literal) is group 1, what the outbound guard checks. */
export const SIP_URI = new RegExp(
  `^sip:(?:[^@\\s<>]+@)?(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+)(?::${integerPattern(1, 65535)})?(?:;[^\\s<>]*)?$`,
);
export const DESTINATION_MESSAGE = "must be an E.164 number with its + (+15551230000) or a sip: URI";

/** Where a call goes (a call's, a campaign contact's, a transfer destination's `to`); the outbound guard checks a sip: host. */
export const Destination = (maxLength: number) =>
  t.String({
    minLength: 1,
    maxLength,
    pattern: `${E164.source}|${SIP_URI.source}`,
    [PATTERN_MESSAGE]: DESTINATION_MESSAGE,
    description: "E.164 with its + (+15551230000), or a sip: URI whose host passes the outbound guard",
  });

/** A call's {{name}} values, as POST P/calls, campaigns' contacts and test scenarios take them. */
export const CallVariables = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: "the call's {{name}} values (at most 50 strings of at most 1,000 characters)",
});

export const CallModel = {
  create: withExactlyOne(
    t.Object(
      {
        assistantId: t.Optional(Uuid),
        agentId: t.Optional(Uuid),
        to: Destination(256),
        phoneNumberId: t.Optional(Uuid),
        variables: t.Optional(CallVariables),
        ringTimeoutSeconds: t.Optional(Integer({ minimum: 5, maximum: 300, description: "default 30" })),
        maxDurationSeconds: t.Optional(Integer({ minimum: 10, maximum: 7200, description: "default MAX_CALL_MS" })),
        voicemail: t.Optional(
          t.Object({ action: Enum(voicemailActions), message: t.Optional(t.String({ maxLength: 4000 })) }, Strict),
        ),
      },
      Strict,
    ),
    ["assistantId", "agentId"],
  ),
};
export type CallInput = typeof CallModel.create.static;
