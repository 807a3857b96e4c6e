import { t } from "elysia";
import { Enum, Nullable, Strict, Uuid, pageQueryFields } from "./common";
import { agentTaskStatuses } from "../db/schema";

export const AgentTaskModel = {
  query: t.Object(
    {
      ...pageQueryFields,
      status: t.Optional(Enum(agentTaskStatuses)),
      assistantId: t.Optional(Uuid),
      agentId: t.Optional(Uuid),
    },
    Strict,
  ),
  out: t.Object({
    id: Uuid,
    callId: Uuid,
    assistantId: Nullable(Uuid),
    agentId: Nullable(Uuid),
    credentialId: Nullable(Uuid),
    phoneNumberId: Nullable(Uuid),
    transport: t.Object({
      type: Enum(["sip", "websocket"]),
      calledNumber: t.Optional(t.String()),
      callingNumber: t.Optional(t.String()),
    }),
    status: Enum(agentTaskStatuses),
    error: Nullable(t.String()),
    startedAt: Nullable(t.Date()),
    endedAt: Nullable(t.Date()),
    createdAt: t.Date(),
  }),
};
export type AgentTaskQuery = typeof AgentTaskModel.query.static;
