import { t, type TSchema } from "elysia";
import { schemaErrors, type FieldError } from "../errors";
import { Integer, NonEmpty, Strict, Uuid } from "./common";
import { documentedAs, oneShapePer } from "./documented-as";

/** Output rates each engine can deliver (ElevenLabs raw formats; the Realtime API's g711_ulaw and pcm16). */
export const pipelineOutputRates = [8000, 16000, 22050, 24000, 44100] as const;
export const realtimeOutputRates = [8000, 24000] as const;

/**
 * Voices the Realtime API accepts; any other id (an ElevenLabs one, say) would make it refuse the whole
 * session, so the API refuses it unless `voice.provider` is "openai" (a voice newer than this list).
 */
export const realtimeVoices = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"];

const unit = (description: string) => t.Optional(t.Number({ minimum: 0, maximum: 1, description }));
const ms = (description: string) =>
  t.Optional(t.Number({ minimum: 0, maximum: 60_000, description: `${description}, in milliseconds` }));
const name = (description: string) => t.Optional(t.String({ minLength: 1, maxLength: 100, description }));
const rate = (rates: readonly number[]) =>
  t.Optional(
    t.Union(
      rates.map((r) => t.Literal(r)),
      { description: `one of ${rates.join(", ")}` },
    ),
  );

// the spec's voice and vad shapes; fields an engine does not use are accepted and documented as unused
const voice = (speed: { minimum: number; maximum: number }) =>
  t.Optional(
    t.Object(
      {
        provider: name("informational: the engine decides the provider"),
        voiceId: name("voice id"),
        modelId: name("TTS model id"),
        speed: t.Optional(t.Number({ ...speed, description: "speaking rate, 1 = normal" })),
        stability: unit("ElevenLabs stability"),
        similarityBoost: unit("ElevenLabs similarity_boost"),
        style: unit("ElevenLabs style"),
        useSpeakerBoost: t.Optional(t.Boolean()),
      },
      Strict,
    ),
  );
const vad = t.Optional(
  t.Object(
    {
      confidenceThreshold: unit("speech probability threshold"),
      minVolume: unit("RMS volume gate (full scale = 1)"),
      startDuration: ms("speech needed to start a turn"),
      stopDuration: ms("silence needed to end a turn"),
      backbufferDuration: ms("audio kept from before the start"),
    },
    Strict,
  ),
);
const temperature = t.Optional(t.Number({ minimum: 0, maximum: 2 }));

// checked by realtimeVoiceErrors; documented as what it accepts: a Realtime voice, or provider "openai"
const realtimeVoice = () => {
  const schema = voice({ minimum: 0.25, maximum: 1.5 });
  const { voiceId: _, provider: __, ...rest } = schema.properties;
  const listed = t.String({ enum: realtimeVoices, description: "a Realtime voice" });
  const openai = t.String({ pattern: "^[oO][pP][eE][nN][aA][iI]$", description: "openai: any voice id the API takes" });
  return documentedAs(schema, {
    anyOf: [
      t.Object({ ...rest, provider: schema.properties.provider, voiceId: t.Optional(listed) }, Strict),
      t.Object({ ...rest, provider: openai, voiceId: schema.properties.voiceId }, Strict),
    ],
  });
};

/** The parameters each strategy type accepts (docs/voice.md says where each one goes). */
export const strategyParameters = {
  pipeline: t.Object(
    {
      temperature,
      outputSampleRate: rate(pipelineOutputRates),
      voice: voice({ minimum: 0.7, maximum: 1.2 }),
      vad,
      llm: t.Optional(t.Object({ model: name("chat completions model") }, Strict)),
      stt: t.Optional(
        t.Object({ model: name("Deepgram model"), language: name("Deepgram language, e.g. en or de") }, Strict),
      ),
      toolFiller: t.Optional(
        t.Object(
          {
            text: t.String({ minLength: 1, maxLength: 200, description: "what the agent says, e.g. One moment." }),
            afterMs: t.Optional(
              Integer({
                minimum: 0,
                maximum: 10_000,
                description: "said once a tool has run this long, in milliseconds (default 800)",
              }),
            ),
          },
          { ...Strict, description: "a short filler while a slow tool (a knowledge search) runs; off when absent" },
        ),
      ),
    },
    Strict,
  ),
  openai_realtime: t.Object(
    {
      temperature,
      outputSampleRate: rate(realtimeOutputRates),
      voice: realtimeVoice(),
      vad,
      model: name("Realtime model"),
      transcriptionModel: name("input transcription model"),
    },
    Strict,
  ),
} satisfies Record<string, TSchema>;

export const strategyTypes = Object.keys(strategyParameters) as (keyof typeof strategyParameters)[];

// what strategyErrors accepts, one shape per type, for the OpenAPI document
const shapes = Object.fromEntries(
  strategyTypes.map((type) => [
    type,
    t.Object({ name: NonEmpty(), type: t.Literal(type), parameters: strategyParameters[type] }, Strict),
  ]),
);

// validated loosely here, then by strategyErrors, which names every wrong field (a union would not)
const write = documentedAs(
  t.Object(
    {
      name: NonEmpty(),
      type: NonEmpty(64),
      parameters: t.Record(t.String(), t.Unknown(), {
        description: `structure depends on type (${strategyTypes.join(", ")}); see docs/voice.md`,
      }),
    },
    Strict,
  ),
  oneShapePer("type", "StrategyWrite", shapes),
);

export const StrategyModel = {
  create: write,
  update: write,
  out: t.Object({
    id: Uuid,
    name: t.String(),
    type: t.String(),
    organizationId: Uuid,
    parameters: t.Record(t.String(), t.Unknown()),
  }),
};
export type StrategyInput = typeof write.static;

/** What is wrong with a strategy: an unknown type, or parameters its engine does not accept (every field named). */
export function strategyErrors(input: StrategyInput): FieldError[] {
  if (!Object.hasOwn(strategyParameters, input.type))
    return [{ field: "type", message: `unknown strategy type; known types: ${strategyTypes.join(", ")}` }];
  const schema = strategyParameters[input.type as keyof typeof strategyParameters];
  const errors = schemaErrors(schema, input.parameters, "parameters");
  if (input.type === "openai_realtime" && errors.length === 0) errors.push(...realtimeVoiceErrors(input.parameters));
  return errors;
}

function realtimeVoiceErrors(parameters: Record<string, unknown>): FieldError[] {
  const voice = (parameters.voice ?? {}) as { voiceId?: string; provider?: string };
  if (voice.voiceId === undefined || voice.provider?.toLowerCase() === "openai") return [];
  if (realtimeVoices.includes(voice.voiceId.toLowerCase())) return [];
  const message = `not a Realtime voice (one of ${realtimeVoices.join(", ")}; provider "openai" passes a newer one)`;
  return [{ field: "parameters.voice.voiceId", message }];
}
