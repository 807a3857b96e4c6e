import { t } from "elysia";
import { voicemailActions } from "../db/schema";
import { Enum, Integer, Strict, Uuid } from "./common";

/** A call's {{name}} values, as POST P/calls, campaigns' contacts and test scenarios take them. */
export const CallVariables = t.Record(t.String({ maxLength: 100 }), t.String({ maxLength: 1000 }), {
  maxProperties: 50,
  description: "the call's {{name}} values (at most 50 strings of at most 1,000 characters)",
});

export const CallModel = {
  create: t.Object(
    {
      assistantId: t.Optional(Uuid),
      agentId: t.Optional(Uuid),
      to: t.String({
        minLength: 1,
        maxLength: 256,
        description: "E.164 with its + (+15551230000), or a sip: URI whose host passes the outbound guard",
      }),
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
};
export type CallInput = typeof CallModel.create.static;
