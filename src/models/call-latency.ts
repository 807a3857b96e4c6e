// Latency per turn of a call (design.md, "Latency per turn"): the agent task's `latency`, stored as
// it is shown (times in ms, callerEndedAt an ISO 8601 time).
import { t } from "elysia";
import { Integer, Nullable } from "./common";

const ms = (description: string) =>
  Nullable(Integer({ minimum: 0, description: `${description}, in ms; null when the stage does not apply` }));

export const TurnLatencyModel = t.Object({
  index: Integer({ minimum: 1, description: "the caller's turn, counted from 1" }),
  callerEndedAt: t.String({
    format: "date-time",
    description: "the end of the caller's last speech of the turn (a text turn: when its text arrived)",
  }),
  endpointingMs: ms("from callerEndedAt to the turn being decided"),
  llmFirstTokenMs: ms("from the LLM request (Realtime: the response being requested) to its first token or audio"),
  ttsFirstAudioMs: ms("from the first text sent to TTS to its first audio"),
  voiceToVoiceMs: ms("from callerEndedAt to the first frame of the reply sent to the caller"),
  interrupted: t.Boolean({ description: "the caller cut the reply off" }),
  preemptive: t.Boolean({ description: "the answer was started before the turn was decided" }),
});

export const VoiceToVoiceModel = t.Object(
  { p50: Integer({ minimum: 0 }), p95: Integer({ minimum: 0 }), max: Integer({ minimum: 0 }) },
  { description: "voiceToVoiceMs over the turns that have one (nearest rank); null when none has" },
);

export const CallLatencyModel = t.Object({
  turns: t.Array(TurnLatencyModel),
  voiceToVoiceMs: Nullable(VoiceToVoiceModel),
});

export type TurnLatency = typeof TurnLatencyModel.static;
export type VoiceToVoice = typeof VoiceToVoiceModel.static;
export type CallLatency = typeof CallLatencyModel.static;
