import { t } from "elysia";
import { DateTimeIn, Enum, Integer, Nullable, Strict, Uuid, pageQueryFields } from "./common";
import { agentTaskStatuses, callDirections, endedReasons } from "../db/schema";
import { CallLatencyModel } from "./call-latency";
import { AgentTaskHandoffModel } from "./handoff";

const transportTypes = ["sip", "websocket"] as const;

const task = {
  id: Uuid,
  callId: Uuid,
  assistantId: Nullable(Uuid),
  agentId: Nullable(Uuid),
  credentialId: Nullable(Uuid),
  phoneNumberId: Nullable(Uuid),
  transport: t.Object({
    type: Enum(transportTypes),
    calledNumber: t.Optional(t.String()),
    callingNumber: t.Optional(t.String()),
  }),
  status: Enum(agentTaskStatuses),
  direction: Enum(callDirections),
  endedReason: Nullable(Enum(endedReasons)),
  sipStatus: Nullable(Integer({ description: "the final SIP response of an outbound INVITE" })),
  variables: Nullable(
    t.Record(t.String(), t.String(), { description: "every variable the call's templates saw, built-ins included" }),
  ),
  transferredTo: Nullable(t.String()),
  campaignId: Nullable(Uuid),
  testRunId: Nullable(Uuid),
  analysis: Nullable(t.Record(t.String(), t.Unknown())),
  latency: Nullable(
    t.Object(CallLatencyModel.properties, {
      description: "latency per turn; null while the call runs and for a call that never started",
    }),
  ),
  handoffs: t.Array(AgentTaskHandoffModel, {
    description: "the assistants the caller was handed to, in order (handoff extension); written when the call ends",
  }),
  error: Nullable(t.String()),
  startedAt: Nullable(t.Date()),
  endedAt: Nullable(t.Date()),
  createdAt: t.Date(),
};

// the call_concluded messages, as the hook received them (see docs/bridge.md)
const Message = t.Object(
  { type: t.String(), role: t.String(), timestamp: Integer() },
  { additionalProperties: true, description: "text, audio, tool_call or tool_result, as in call_concluded" },
);

export const AgentTaskModel = {
  query: t.Object(
    {
      ...pageQueryFields,
      status: t.Optional(Enum(agentTaskStatuses)),
      assistantId: t.Optional(Uuid),
      agentId: t.Optional(Uuid),
      transport: t.Optional(Enum(transportTypes)),
      direction: t.Optional(Enum(callDirections)),
      testRunId: t.Optional(Uuid),
      success: t.Optional(
        Enum(["true", "false"] as const, { description: "only calls whose analysis judged them so (call_analysis)" }),
      ),
      createdAfter: t.Optional(DateTimeIn("only tasks created at or after this time")),
      createdBefore: t.Optional(DateTimeIn("only tasks created before this time")),
    },
    Strict,
  ),
  out: t.Object(task),
  // one task read by id: what the finished call left, while RECORDING_RETENTION_DAYS keeps it
  detail: t.Object({
    ...task,
    messages: Nullable(t.Array(Message, { description: "null while the call runs and after the retention period" })),
    shortSummary: Nullable(t.String()),
    summary: Nullable(t.String()),
    recording: Nullable(
      t.Object({
        contentType: t.String(),
        bytes: Integer(),
        path: t.String({ description: "where to GET the audio itself (with the same token)" }),
      }),
    ),
  }),
};
export type AgentTaskQuery = typeof AgentTaskModel.query.static;
