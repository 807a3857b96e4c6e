// The turn-taking policy's settings: the assistant's `turn_taking` extension with every default filled
// in (docs/voice.md, "Turn-taking"). One resolved value per call reaches both engines and the call
// session, which ask this module's parts, not their own copies, when a turn ends (endpointing.ts),
// when the caller may cut in (interruption) and when to prompt a quiet caller (idle).
import {
  eagernessLevels,
  endpointingRefusal,
  endpointingModes,
  TURN_TAKING,
  type EndpointingMode,
  type StrategyShape,
} from "../../models/turn-taking";

export type Eagerness = (typeof eagernessLevels)[number];

export type EndpointingSettings = {
  mode: EndpointingMode;
  onPunctuationMs: number;
  onNoPunctuationMs: number;
  eotThreshold: number;
  eotTimeoutMs: number;
  eagerness: Eagerness;
};

export type InterruptionSettings = {
  /** false: the agent is never cut off; what the caller says meanwhile is answered after the reply */
  enabled: boolean;
  minDurationMs: number;
  minWords: number;
  /** lowercased, without punctuation, as a heard phrase is compared */
  acknowledgements: string[];
  /** 0: off */
  falseInterruptionMs: number;
};

export type IdleSettings = { timeoutMs: number; messages: string[]; maxPrompts: number; hangupAfterMs: number };

export type TurnTaking = {
  endpointing: EndpointingSettings;
  preemptiveGeneration: boolean;
  interruption: InterruptionSettings;
  /** null: a quiet caller is never prompted (no `idle` in the extension) */
  idle: IdleSettings | null;
};

export const defaultAcknowledgements = [
  "okay",
  "ok",
  "uh-huh",
  "mm-hmm",
  "mhm",
  "yeah",
  "yes",
  "right",
  "sure",
  "got it",
  "i see",
];

const endpointingDefaults: EndpointingSettings = {
  mode: "silence",
  onPunctuationMs: 100,
  onNoPunctuationMs: 1500,
  eotThreshold: 0.7,
  eotTimeoutMs: 5000,
  eagerness: "auto",
};

/** What a call does without the extension: exactly what it did before turn-taking could be tuned. */
export const turnTakingWithoutExtension: TurnTaking = {
  endpointing: endpointingDefaults,
  preemptiveGeneration: false,
  // the VAD's start (startDuration) stops the agent, whatever was said
  interruption: { enabled: true, minDurationMs: 0, minWords: 0, acknowledgements: [], falseInterruptionMs: 0 },
  idle: null,
};

type Parameters = Record<string, unknown>;
const obj = (v: unknown): Parameters =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Parameters) : {};
const num = (v: unknown, fallback: number) => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const bool = (v: unknown, fallback: boolean) => (typeof v === "boolean" ? v : fallback);
const oneOf = <T extends string>(values: readonly T[], v: unknown, fallback: T): T =>
  values.includes(v as T) ? (v as T) : fallback;
const strings = (v: unknown, fallback: string[]) =>
  Array.isArray(v) && v.every((s) => typeof s === "string") ? (v as string[]) : fallback;

/** A phrase as heard phrases are compared: lowercased, punctuation dropped, single spaces. */
export const normalizedPhrase = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s'-]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();

/**
 * The call's turn-taking: the first turn_taking extension with its defaults, on `strategy`. A mode the
 * strategy cannot run (it was changed after the extension was saved) falls back to silence.
 */
export function turnTakingOf(extensions: { type: string; parameters: Parameters }[], strategy: StrategyShape) {
  const p = extensions.find((e) => e.type === TURN_TAKING)?.parameters;
  if (!p) return turnTakingWithoutExtension;
  const e = obj(p.endpointing);
  const i = obj(p.interruption);
  const mode = oneOf(endpointingModes, e.mode, endpointingDefaults.mode);
  const turnTaking: TurnTaking = {
    endpointing: {
      mode: endpointingRefusal(mode, strategy) ? "silence" : mode,
      onPunctuationMs: num(e.onPunctuationMs, endpointingDefaults.onPunctuationMs),
      onNoPunctuationMs: num(e.onNoPunctuationMs, endpointingDefaults.onNoPunctuationMs),
      eotThreshold: num(e.eotThreshold, endpointingDefaults.eotThreshold),
      eotTimeoutMs: num(e.eotTimeoutMs, endpointingDefaults.eotTimeoutMs),
      eagerness: oneOf(eagernessLevels, e.eagerness, endpointingDefaults.eagerness),
    },
    preemptiveGeneration: bool(p.preemptiveGeneration, false),
    interruption: {
      enabled: bool(i.enabled, true),
      minDurationMs: num(i.minDurationMs, 300),
      minWords: num(i.minWords, 0),
      acknowledgements: strings(i.acknowledgements, defaultAcknowledgements).map(normalizedPhrase),
      falseInterruptionMs: num(i.falseInterruptionMs, 2000),
    },
    idle: null,
  };
  if (p.idle !== undefined) {
    const idle = obj(p.idle);
    turnTaking.idle = {
      timeoutMs: num(idle.timeoutMs, 7500),
      messages: strings(idle.messages, ["Are you still there?"]),
      maxPrompts: num(idle.maxPrompts, 2),
      hangupAfterMs: num(idle.hangupAfterMs, 10_000),
    };
  }
  return turnTaking;
}
