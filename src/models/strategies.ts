import { t } from "elysia";
import { Integer, NonEmpty, Strict, Uuid } from "./common";

const Open = { additionalProperties: true } as const;
const num = () => t.Optional(t.Number());
const str = () => t.Optional(t.String());

// The spec's voice/vad shape is checked where present; other keys (a provider's `model`, `url`...) pass.
const Parameters = t.Object(
  {
    temperature: num(),
    outputSampleRate: t.Optional(Integer({ minimum: 1 })),
    voice: t.Optional(
      t.Object(
        {
          provider: str(),
          voiceId: str(),
          modelId: str(),
          speed: num(),
          stability: num(),
          similarityBoost: num(),
          style: num(),
          useSpeakerBoost: t.Optional(t.Boolean()),
        },
        Open,
      ),
    ),
    vad: t.Optional(
      t.Object(
        { confidenceThreshold: num(), minVolume: num(), startDuration: num(), stopDuration: num(), backbufferDuration: num() },
        Open,
      ),
    ),
  },
  { ...Open, description: "structure depends on type; for openai_realtime also model and url" },
);

const write = t.Object({ name: NonEmpty(), type: NonEmpty(64), parameters: Parameters }, Strict);

export const StrategyModel = {
  create: write,
  update: write,
  out: t.Object({ id: Uuid, name: t.String(), type: t.String(), organizationId: Uuid, parameters: t.Record(t.String(), t.Unknown()) }),
};
export type StrategyInput = typeof write.static;
