import { t, type TSchema } from "elysia";
import type { TProperties } from "@sinclair/typebox";
import { callEventTypes, hookMethods } from "../db/schema";
import { Destination } from "./calls";
import { Enum, HttpUrl, Integer, NonEmpty, Nullable, OptionalNullable, Strict, StringMap, Uuid } from "./common";
import { DOCUMENTED_AS, oneShapePer } from "./documented-as";
import { TURN_TAKING, TurnTakingParameters } from "./turn-taking";
import { HANDOFF, HandoffParameters } from "./handoff";
import { jsonContent, ObjectJsonSchema } from "./json-content";
import { TOOL_ARGUMENT_TYPES, ToolSpecSchema } from "./tool-schema";

const FreeForm = t.Record(t.String(), t.Unknown(), { description: "type-specific parameters" });

/** parameters of a `tool_webhook` extension; other extension types are stored as given. */
export const ToolWebhookParameters = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 64, pattern: "^[a-zA-Z0-9_-]+$", description: "tool name the LLM sees" }),
    serverUrl: HttpUrl,
    schema: t.String({
      minLength: 2,
      description: "tool specification as a JSON string in OpenAI function format",
      ...jsonContent(ToolSpecSchema),
    }),
    headers: t.Optional(StringMap),
  },
  Strict,
);

/** parameters of a `knowledge_base` extension (docs/knowledge.md): exactly one of url and knowledgeBaseId. */
export const KnowledgeBaseParameters = t.Object(
  {
    name: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 64,
        pattern: "^[a-zA-Z0-9_-]+$",
        description: "default search_knowledge_base",
      }),
    ),
    description: t.Optional(t.String({ maxLength: 2000 })),
    url: t.Optional(HttpUrl),
    knowledgeBaseId: t.Optional(Uuid),
    maxResults: t.Optional(Integer({ minimum: 1, maximum: 20, description: "default 3" })),
    authToken: OptionalNullable(
      t.String({
        minLength: 1,
        maxLength: 2000,
        description: "write-only, only with url: sent as a bearer token; omit to keep, null to remove",
        writeOnly: true,
      }),
    ),
  },
  Strict,
);

/** parameters of a `transfer_call` extension (docs/transfer.md); each `to` also passes checkDestination. */
export const TransferCallParameters = t.Object(
  {
    name: t.Optional(
      t.String({ minLength: 1, maxLength: 64, pattern: "^[a-zA-Z0-9_-]+$", description: "default transfer_call" }),
    ),
    description: t.Optional(t.String({ maxLength: 2000 })),
    destinations: t.Array(
      t.Object(
        {
          to: Destination(300),
          description: t.String({ minLength: 1, maxLength: 1000 }),
          message: t.Optional(
            t.String({
              maxLength: 1000,
              description: "spoken first; templates work; default Transferring your call now.",
            }),
          ),
        },
        Strict,
      ),
      { minItems: 1, maxItems: 10 },
    ),
    mode: t.Optional(Enum(["blind", "warm"], { description: "default blind" })),
    method: t.Optional(Enum(["refer", "dial"], { description: "default refer" })),
    ringTimeoutSeconds: t.Optional(Integer({ minimum: 5, maximum: 120, description: "default 30" })),
    onFailure: t.Optional(Enum(["return", "hangup"], { description: "default return" })),
  },
  Strict,
);

/** parameters of a `call_context` extension (docs/context.md): the POST before an inbound call's greeting. */
export const CallContextParameters = t.Object(
  {
    url: HttpUrl,
    headers: t.Optional(StringMap),
    timeoutMs: t.Optional(
      Integer({ minimum: 200, maximum: 5000, description: "default 2000: the caller never waits longer" }),
    ),
  },
  Strict,
);

/** parameters of a `call_analysis` extension (docs/context.md): what the post-call request fills. */
export const CallAnalysisParameters = t.Object(
  {
    schema: t.String({
      minLength: 2,
      maxLength: 20_000,
      description: "a JSON Schema, as a string, for analysis.data",
      ...jsonContent(ObjectJsonSchema(TOOL_ARGUMENT_TYPES, "field")),
    }),
    prompt: t.Optional(t.String({ maxLength: 4000, description: "how to fill the data" })),
    successCriteria: t.Optional(t.String({ maxLength: 4000, description: "when the call counts as a success" })),
  },
  Strict,
);

/** parameters of `call_started` and `call_concluded` hooks; other hook types are stored as given. */
export const CallHookParameters = t.Object(
  {
    url: HttpUrl,
    method: t.Optional(Enum(hookMethods, { description: "default POST; the JSON body is sent with every method" })),
    headers: t.Optional(StringMap),
    secret: OptionalNullable(
      t.String({
        minLength: 1,
        maxLength: 500,
        description: "write-only; signs deliveries (Standard Webhooks); omit to keep, null to remove",
        writeOnly: true,
      }),
    ),
  },
  Strict,
);

/** What each extension type's parameters must be (src/services/extension-rules.ts checks them, naming every field). */
const extensionParameters = {
  tool_webhook: ToolWebhookParameters,
  knowledge_base: KnowledgeBaseParameters,
  transfer_call: TransferCallParameters,
  call_context: CallContextParameters,
  call_analysis: CallAnalysisParameters,
  [TURN_TAKING]: TurnTakingParameters,
  [HANDOFF]: HandoffParameters,
};
const extensionName = OptionalNullable(t.String({ maxLength: 200 }));

/**
 * An element of `extensions` or `callEventHooks`: validated loosely here, then per type by the service
 * (src/services/extension-rules.ts, naming every field); documented as one shape per known type, and
 * any other type with its parameters stored as given.
 */
function oneShapePerType<H extends TProperties>(head: H, parameters: Record<string, TSchema>, prefix: string) {
  const shape = (type: TSchema, p: TSchema) => t.Object({ ...head, type, parameters: p }, Strict);
  const shapes = Object.fromEntries(Object.entries(parameters).map(([type, p]) => [type, shape(t.Literal(type), p)]));
  const other = shape(t.String({ minLength: 1, maxLength: 64, not: { enum: Object.keys(parameters) } }), FreeForm);
  return t.Object(
    { ...head, type: NonEmpty(64), parameters: FreeForm },
    { ...Strict, [DOCUMENTED_AS]: oneShapePer("type", prefix, shapes, other) },
  );
}

const ExtensionIn = oneShapePerType(
  { id: OptionalNullable(Uuid), name: extensionName },
  extensionParameters,
  "Extension",
);
const HookIn = oneShapePerType(
  { id: OptionalNullable(Uuid) },
  Object.fromEntries(callEventTypes.map((type) => [type, CallHookParameters])),
  "CallEventHook",
);

const fields = {
  name: NonEmpty(),
  systemPrompt: OptionalNullable(t.String({ maxLength: 100_000 })),
  systemPromptGreeting: OptionalNullable(t.String({ maxLength: 10_000 })),
  llmAudioContentGenerationStrategyId: OptionalNullable(Uuid),
  telephoneNumberId: OptionalNullable(Uuid),
  extensions: t.Optional(t.Array(ExtensionIn, { maxItems: 64 })),
  callEventHooks: t.Optional(t.Array(HookIn, { maxItems: 64 })),
};

export const AssistantModel = {
  create: t.Object(fields, Strict),
  // a read-back body may be sent as is: its id, if present, must be the path's
  update: t.Object({ id: t.Optional(Uuid), ...fields }, Strict),
  out: t.Object({
    id: Uuid,
    name: t.String(),
    systemPrompt: Nullable(t.String()),
    systemPromptGreeting: Nullable(t.String()),
    llmAudioContentGenerationStrategyId: Nullable(Uuid),
    telephoneNumberId: Nullable(Uuid),
    extensions: t.Array(t.Object({ id: Uuid, type: t.String(), name: Nullable(t.String()), parameters: FreeForm })),
    callEventHooks: t.Array(t.Object({ id: Uuid, type: t.String(), parameters: FreeForm })),
  }),
};

export type AssistantInput = typeof AssistantModel.update.static;
export type ExtensionInput = typeof ExtensionIn.static;
export type HookInput = typeof HookIn.static;
