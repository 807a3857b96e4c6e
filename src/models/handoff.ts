// The `handoff` extension's parameters (docs/handoff.md): the LLM hands the caller to another assistant of
// the organization. Which assistants exist, and the default names, are checked by the service.
import { t } from "elysia";
import { Enum, Integer, Strict, Uuid } from "./common";

export const HANDOFF = "handoff";
export const HANDOFF_TOOL_NAME = "handoff";
export const handoffContexts = ["all", "lastMessages", "none"] as const;
export const DEFAULT_HANDOFF_CONTEXT = "all";
export const DEFAULT_HANDOFF_MAX_MESSAGES = 20;

export const HandoffParameters = t.Object(
  {
    name: t.Optional(
      t.String({ minLength: 1, maxLength: 64, pattern: "^[a-zA-Z0-9_-]+$", description: "tool name; default handoff" }),
    ),
    description: t.Optional(t.String({ maxLength: 2000, description: "when the LLM should hand the caller over" })),
    destinations: t.Array(
      t.Object(
        {
          assistantId: Uuid,
          name: t.Optional(
            t.String({
              minLength: 1,
              maxLength: 200,
              description: "the value the LLM chooses; default the assistant's name; unique in the extension",
            }),
          ),
          description: t.String({ minLength: 1, maxLength: 1000 }),
          message: t.Optional(t.String({ maxLength: 1000, description: "spoken to the caller first; templates work" })),
        },
        Strict,
      ),
      { minItems: 1, maxItems: 10, description: "assistants of the same organization" },
    ),
    context: t.Optional(
      Enum(handoffContexts, {
        description: "what the destination gets of the conversation so far; default all",
      }),
    ),
    maxMessages: t.Optional(
      Integer({ minimum: 1, maximum: 100, description: "with lastMessages: how many; default 20" }),
    ),
  },
  Strict,
);

export type HandoffInput = typeof HandoffParameters.static;

/** One handoff of a call on its agent task, stored as it is shown (`at` ISO 8601; call_concluded has Unix ms). */
export const AgentTaskHandoffModel = t.Object({
  at: t.String({ format: "date-time", description: "when the destination took the call" }),
  fromAssistantId: t.Union([Uuid, t.Null()], {
    description: "the assistant that handed over; null on an agent's call's first handoff (an agent is no assistant)",
  }),
  toAssistantId: Uuid,
  destination: t.String({ description: "the destination's name, as the LLM chose it" }),
});
export type AgentTaskHandoff = typeof AgentTaskHandoffModel.static;
export type HandoffContext = (typeof handoffContexts)[number];
