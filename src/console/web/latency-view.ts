// Latency per turn as the console shows it: on the call page a bar per turn, its stages side by side
// in proportion (endpointing, LLM to first token, TTS to first audio, and the rest of voice-to-voice:
// speech-to-text, our own hops, the playout), on the call list the call's voice-to-voice p50.
import type { AgentTask } from "./api";
import { h } from "./dom";

const stages = [
  ["endpointing", "endpointingMs", "endpointing"],
  ["llm", "llmFirstTokenMs", "LLM first token"],
  ["tts", "ttsFirstAudioMs", "TTS first audio"],
] as const;

type Segment = { stage: string; label: string; ms: number };
type Latency = AgentTask["latency"];
type Turn = NonNullable<Latency>["turns"][number];

/** A turn's segments in order; `other` fills up to its voice-to-voice time. */
function segmentsOf(turn: Turn): Segment[] {
  const known = stages.flatMap(([stage, field, label]) =>
    turn[field] === null ? [] : [{ stage, label, ms: turn[field] }],
  );
  if (turn.voiceToVoiceMs === null) return known;
  const rest = turn.voiceToVoiceMs - known.reduce((sum, s) => sum + s.ms, 0);
  return rest > 0 ? [...known, { stage: "other", label: "the rest (STT, our hops, playout)", ms: rest }] : known;
}

/** The call page's bars, one per turn, on one scale; null when the call has no turns. */
export function latencyBars(latency: Latency): HTMLElement | null {
  const turns = latency?.turns ?? [];
  if (turns.length === 0) return null;
  const rows = turns.map((turn) => ({ turn, segments: segmentsOf(turn) }));
  const scaleMs = Math.max(1, ...rows.map((r) => r.segments.reduce((sum, s) => sum + s.ms, 0)));
  const summary = latency?.voiceToVoiceMs;
  return h(
    "div",
    { id: "call-latency" },
    summary
      ? h("p", {}, `Voice-to-voice p50 ${summary.p50} ms, p95 ${summary.p95} ms, max ${summary.max} ms.`)
      : h("p", { className: "note" }, "No turn has a voice-to-voice time (a text call, or no answer was heard)."),
    h(
      "div",
      { className: "latency-legend" },
      [...stages.map(([stage, , label]) => [stage, label]), ["other", "the rest (STT, our hops, playout)"]].map(
        ([stage, label]) => h("span", {}, h("span", { className: `swatch stage-${stage}` }), label),
      ),
    ),
    rows.map(({ turn, segments }) =>
      h(
        "div",
        { className: "latency-turn", "data-turn": turn.index },
        h(
          "span",
          { className: "latency-label" },
          `Turn ${turn.index}: `,
          turn.voiceToVoiceMs === null ? "no answer heard" : `${turn.voiceToVoiceMs} ms`,
          turn.interrupted ? " (cut off)" : "",
          turn.preemptive ? " (preemptive)" : "",
        ),
        h(
          "div",
          { className: "latency-bar" },
          segments.map((s) =>
            h("span", {
              className: `stage-${s.stage}`,
              title: `${s.label}: ${s.ms} ms`,
              "data-ms": s.ms,
              style: `width: ${((s.ms / scaleMs) * 100).toFixed(2)}%`,
            }),
          ),
        ),
      ),
    ),
  );
}

/** The call list's cell: voice-to-voice p50, or nothing for a call without it. */
export const latencyP50 = (latency: Latency | undefined) =>
  latency?.voiceToVoiceMs ? `${latency.voiceToVoiceMs.p50} ms` : "";
