// Latency per turn (design.md, "Latency per turn"), free of sockets: a turn opens with the voice
// session's callerTurn (or a text turn), takes the stages its answer reports (replyStage) until that
// answer is over, and its voice-to-voice time ends when the playout sends the answer's first frame to
// the caller. Each stage is also a sample of its /metrics histogram as soon as it is known.
import { percentile } from "../lib/percentile";
import { recordTurnStage, type TurnStage } from "../metrics/metrics";
import type { CallLatency, TurnLatency } from "../models/call-latency";
import type { CallerTurnEvent, ReplyStageEvent } from "../voice/engine";

/**
 * `endedAt`: callerEndedAt on performance.now()'s clock, which every stage boundary is read on;
 * `audioQueued`: its answer's first audio has gone to the playout
 */
type Turn = TurnLatency & { endedAt: number; audioQueued: boolean };

const stages = {
  llm: { field: "llmFirstTokenMs", metric: "llmFirstToken" },
  tts: { field: "ttsFirstAudioMs", metric: "ttsFirstAudio" },
} as const;

export class TurnLatencyRecorder {
  private readonly turns: Turn[] = [];
  /** the turn whose answer is under way: the stages reported are its own */
  private current: Turn | null = null;
  /** the turn whose answer's first audio is awaited (from its first stage on: a greeting has no LLM's) */
  private awaitingAudio: Turn | null = null;

  /** `audio`: the call has audio (a text call's turns have no audio stages) */
  constructor(private readonly audio: boolean) {}

  callerTurn({ endedAt, decidedAt, preemptive }: CallerTurnEvent) {
    this.open(endedAt, measure("endpointing", decidedAt - endedAt), preemptive);
  }

  /** The caller's turn as text, arrived `at`: nothing to endpoint. */
  textTurn(at = performance.now()) {
    this.open(at, null, false);
  }

  replyStage({ stage, startedAt, at }: ReplyStageEvent) {
    const turn = this.current;
    const { field, metric } = stages[stage];
    if (!turn || turn[field] !== null) return;
    turn[field] = measure(metric, at - startedAt);
    if (this.audio && !turn.audioQueued) this.awaitingAudio = turn;
  }

  /**
   * Agent audio about to be queued for the caller: when it is the first of an awaited answer, the
   * callback the playout calls with the moment its first frame is sent.
   */
  replyAudio(): ((sentAt: number) => void) | null {
    const turn = this.awaitingAudio;
    if (!turn) return null;
    this.awaitingAudio = null;
    turn.audioQueued = true;
    return (sentAt) => {
      turn.voiceToVoiceMs = measure("voiceToVoice", sentAt - turn.endedAt);
    };
  }

  /** The engine's turnDone: the answer is over, unless only a tool call has come of it yet. */
  replyDone({ interrupted }: { interrupted: boolean }) {
    const turn = this.current;
    if (!turn) return;
    // an answer that began with a tool call speaks once the result is in (Realtime: in a response of its own)
    const answered = this.audio ? turn.audioQueued : turn.llmFirstTokenMs !== null;
    if (interrupted) turn.interrupted = true;
    else if (!answered) return;
    this.current = null;
    if (this.awaitingAudio === turn) this.awaitingAudio = null;
  }

  /** The call's latency: every turn, and voice-to-voice over the turns that have it. */
  finish(): CallLatency {
    const turns = this.turns.map(({ endedAt, audioQueued, ...turn }) => turn);
    const samples = turns.flatMap((t) => (t.voiceToVoiceMs === null ? [] : [t.voiceToVoiceMs]));
    const voiceToVoiceMs =
      samples.length === 0
        ? null
        : { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95), max: Math.max(...samples) };
    return { turns, voiceToVoiceMs };
  }

  private open(endedAt: number, endpointingMs: number | null, preemptive: boolean) {
    const turn: Turn = {
      index: this.turns.length + 1,
      callerEndedAt: new Date(Date.now() - (performance.now() - endedAt)).toISOString(),
      endpointingMs,
      llmFirstTokenMs: null,
      ttsFirstAudioMs: null,
      voiceToVoiceMs: null,
      interrupted: false,
      preemptive,
      endedAt,
      audioQueued: false,
    };
    this.turns.push(turn);
    this.current = turn;
    this.awaitingAudio = null;
  }
}

function measure(stage: TurnStage, ms: number) {
  const rounded = Math.round(ms);
  recordTurnStage(stage, rounded);
  return rounded;
}
