// The `turn_taking` extension's parameters (docs/voice.md, "Turn-taking") and the one rule that needs
// the strategy too: an endpointing mode the engine cannot do. The defaults live with the policy that
// applies them (src/voice/turn-taking/).
import { t } from "elysia";
import { Enum, Integer, Strict } from "./common";

export const TURN_TAKING = "turn_taking";
export const endpointingModes = ["silence", "punctuation", "model"] as const;
export const eagernessLevels = ["low", "medium", "high", "auto"] as const;

export const TurnTakingParameters = t.Object(
  {
    endpointing: t.Optional(
      t.Object(
        {
          mode: t.Optional(
            Enum(endpointingModes, {
              description:
                "default silence (the VAD's stop ends the turn); punctuation (pipeline); model (Deepgram Flux in the pipeline, semantic_vad in openai_realtime)",
            }),
          ),
          onPunctuationMs: t.Optional(
            Integer({
              minimum: 0,
              maximum: 3000,
              description:
                "punctuation: the wait after the VAD's stop when the transcript ends with . ? or !; default 100",
            }),
          ),
          onNoPunctuationMs: t.Optional(
            Integer({ minimum: 0, maximum: 5000, description: "punctuation: the wait otherwise; default 1500" }),
          ),
          eotThreshold: t.Optional(
            t.Number({ minimum: 0.5, maximum: 0.9, description: "model (Flux): eot_threshold; default 0.7" }),
          ),
          eotTimeoutMs: t.Optional(
            Integer({ minimum: 500, maximum: 10_000, description: "model (Flux): eot_timeout_ms; default 5000" }),
          ),
          eagerness: t.Optional(
            Enum(eagernessLevels, { description: "model (openai_realtime): semantic_vad eagerness; default auto" }),
          ),
        },
        Strict,
      ),
    ),
    preemptiveGeneration: t.Optional(
      t.Boolean({
        description: "pipeline: start the LLM before the turn is decided (punctuation, model); default false",
      }),
    ),
    interruption: t.Optional(
      t.Object(
        {
          enabled: t.Optional(t.Boolean({ description: "default true; false: the agent is never cut off" })),
          minDurationMs: t.Optional(
            Integer({ minimum: 0, maximum: 2000, description: "caller speech needed to stop the agent; default 300" }),
          ),
          minWords: t.Optional(
            Integer({ minimum: 0, maximum: 10, description: "pipeline: words needed to stop the agent; default 0" }),
          ),
          acknowledgements: t.Optional(
            t.Array(t.String({ minLength: 1, maxLength: 100 }), {
              maxItems: 50,
              description: "pipeline: phrases that neither stop the agent nor get an answer; default okay, uh-huh, …",
            }),
          ),
          falseInterruptionMs: t.Optional(
            Integer({
              minimum: 0,
              maximum: 5000,
              description: "pipeline: sound without words for this long resumes the agent; default 2000, 0 = off",
            }),
          ),
        },
        Strict,
      ),
    ),
    idle: t.Optional(
      t.Object(
        {
          timeoutMs: t.Optional(
            Integer({ minimum: 1000, maximum: 60_000, description: "caller silence before a prompt; default 7500" }),
          ),
          messages: t.Optional(
            t.Array(t.String({ minLength: 1, maxLength: 1000 }), {
              minItems: 1,
              maxItems: 5,
              description: "templates said in order, the last repeated; default Are you still there?",
            }),
          ),
          maxPrompts: t.Optional(Integer({ minimum: 0, maximum: 10, description: "prompts in a row; default 2" })),
          hangupAfterMs: t.Optional(
            Integer({
              minimum: 1000,
              maximum: 60_000,
              description: "silence after the last prompt that ends the call (silence-timeout); default 10000",
            }),
          ),
        },
        Strict,
      ),
    ),
  },
  Strict,
);

export type TurnTakingInput = typeof TurnTakingParameters.static;
export type EndpointingMode = (typeof endpointingModes)[number];

/** A strategy as far as endpointing cares: its engine and, for the pipeline, its STT model. */
export type StrategyShape = { type: string; parameters: Record<string, unknown> } | null;

/** Deepgram's Flux models (`flux-general-en`, …) speak /v2/listen and decide the end of a turn. */
export const isFluxModel = (model: unknown) => typeof model === "string" && model.startsWith("flux-");

/** Why `mode` cannot run on `strategy` (null: it can). Without a strategy nothing is refused yet. */
export function endpointingRefusal(mode: EndpointingMode, strategy: StrategyShape): string | null {
  if (!strategy || mode === "silence") return null;
  if (strategy.type === "openai_realtime")
    return mode === "punctuation"
      ? "punctuation needs a pipeline strategy (openai_realtime has no transcript to wait on)"
      : null;
  if (strategy.type !== "pipeline") return null;
  if (mode === "model" && !isFluxModel((strategy.parameters.stt as { model?: unknown } | undefined)?.model))
    return "model needs a Deepgram Flux model (stt.model starting with flux-) in the pipeline strategy";
  return null;
}
