// Maps a pipeline strategy's parameters onto what each provider is sent (docs/voice.md has the table).
// The API validates the ranges; values are read defensively anyway, since a strategy may predate that.
import type { Config } from "../../config";
import type { VadSettings } from "./turn-detector";

type Parameters = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const obj = (v: unknown): Parameters =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Parameters) : {};

// Deepslate's SDK defaults (the spec's strategy shape is theirs); durations in milliseconds
export const vadDefaults: VadSettings = {
  confidenceThreshold: 0.4,
  minVolume: 0,
  startDurationMs: 150,
  stopDurationMs: 390,
  backbufferDurationMs: 1000,
};
export const defaultVoiceId = "21m00Tcm4TlvDq8ikWAM"; // ElevenLabs' premade "Rachel"
export const defaultTtsModel = "eleven_flash_v2_5";
export const defaultSttModel = "nova-3";

export const defaultFillerAfterMs = 800;

export type VoiceSettings = {
  stability?: number;
  similarity_boost?: number;
  style?: number;
  use_speaker_boost?: boolean;
  speed?: number;
};

export type PipelineSettings = {
  vad: VadSettings;
  stt: { model: string; language: string | null };
  llm: { model: string; temperature: number | null };
  /** Said while tools run longer than afterMs; null: never. */
  toolFiller: { text: string; afterMs: number } | null;
  tts: {
    voiceId: string;
    modelId: string;
    voiceSettings: VoiceSettings | null;
    outputFormat: string;
    outputRate: number;
  };
};

export function pipelineSettings(parameters: Parameters, config: Config, callRate: number): PipelineSettings {
  const vad = obj(parameters.vad);
  const voice = obj(parameters.voice);
  const stt = obj(parameters.stt);
  const llm = obj(parameters.llm);
  const filler = obj(parameters.toolFiller);
  const outputRate = num(parameters.outputSampleRate) ?? callRate;
  const voiceSettings: VoiceSettings = {
    ...(num(voice.stability) !== undefined && { stability: num(voice.stability) }),
    ...(num(voice.similarityBoost) !== undefined && { similarity_boost: num(voice.similarityBoost) }),
    ...(num(voice.style) !== undefined && { style: num(voice.style) }),
    ...(typeof voice.useSpeakerBoost === "boolean" && { use_speaker_boost: voice.useSpeakerBoost }),
    ...(num(voice.speed) !== undefined && { speed: num(voice.speed) }),
  };
  return {
    vad: {
      confidenceThreshold: num(vad.confidenceThreshold) ?? vadDefaults.confidenceThreshold,
      minVolume: num(vad.minVolume) ?? vadDefaults.minVolume,
      startDurationMs: num(vad.startDuration) ?? vadDefaults.startDurationMs,
      stopDurationMs: num(vad.stopDuration) ?? vadDefaults.stopDurationMs,
      backbufferDurationMs: num(vad.backbufferDuration) ?? vadDefaults.backbufferDurationMs,
    },
    stt: { model: str(stt.model) ?? defaultSttModel, language: str(stt.language) ?? null },
    llm: { model: str(llm.model) ?? config.voice.pipelineLlmModel, temperature: num(parameters.temperature) ?? null },
    toolFiller: str(filler.text)
      ? { text: str(filler.text)!, afterMs: num(filler.afterMs) ?? defaultFillerAfterMs }
      : null,
    tts: {
      voiceId: str(voice.voiceId) ?? defaultVoiceId,
      modelId: str(voice.modelId) ?? defaultTtsModel,
      voiceSettings: Object.keys(voiceSettings).length > 0 ? voiceSettings : null,
      // 8 kHz as mu-law: what a phone line carries, so SIP and Twilio calls need no resampling
      outputFormat: outputRate === 8000 ? "ulaw_8000" : `pcm_${outputRate}`,
      outputRate,
    },
  };
}
