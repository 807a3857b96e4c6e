// When the caller's turn ends: the one decision both engines take from the turn_taking settings.
//
// The pipeline feeds an Endpointer what it hears (the VAD's starts and stops, each stop's transcript,
// and with a Flux model the provider's turn events) and is told when the turn has ended, with its text;
// with preemptiveGeneration also when it may have ended (start the LLM) and when the caller went on
// (cancel it). The Realtime engine's provider decides by itself: realtimeTurnDetection says how.
import { cutsOffAtOnce, withoutWords } from "./interruption";
import type { EndpointingSettings, InterruptionSettings } from "./turn-taking";

export type EndpointerEvents = {
  /** The turn is over: answer `text` (blank: nothing was understood, nothing to answer). */
  ended: (text: string) => void;
  /** preemptiveGeneration: the turn may be over with `text`; a reply may be prepared, never heard yet. */
  tentative: (text: string) => void;
  /** The caller went on after a tentative end: what was prepared is void. */
  resumed: () => void;
};

/** A Flux model's TurnInfo events as far as the end of a turn goes. */
export type ProviderTurnEvent =
  | { event: "EagerEndOfTurn" | "EndOfTurn"; transcript: string }
  | { event: "TurnResumed" };

const endsWithPunctuation = (text: string) => /[.?!]["')\]]*$/.test(text.trim());

export class Endpointer {
  private segments: string[] = [];
  /** VAD stops whose transcript has not come yet */
  private awaiting = 0;
  private speaking = false;
  /** a turn has begun and not ended (punctuation, model: speech may continue it) */
  private open = false;
  private wait: ReturnType<typeof setTimeout> | null = null;
  private tentativeText: string | null = null;

  constructor(
    private readonly settings: EndpointingSettings,
    private readonly preemptive: boolean,
    private readonly on: EndpointerEvents,
  ) {}

  /** The STT stream decides (Flux): the VAD's stops end nothing, the provider's EndOfTurn does. */
  get byProvider() {
    return this.settings.mode === "model";
  }

  /** The VAD heard speech start. True when it opens a new turn; false when it continues the open one. */
  speechStarted(): boolean {
    this.speaking = true;
    this.clearWait();
    if (this.settings.mode !== "model") this.resume();
    if (this.settings.mode === "silence") return true; // every stop ends a turn: every start opens one
    const opens = !this.open;
    this.open = true;
    return opens;
  }

  /** The VAD heard the speech stop; its transcript follows with transcribed(). */
  speechStopped() {
    this.speaking = false;
    if (!this.byProvider) this.awaiting++;
  }

  /** The transcript of the speech up to the last stop (silence, punctuation). */
  transcribed(text: string) {
    this.awaiting = Math.max(0, this.awaiting - 1);
    if (this.settings.mode !== "punctuation") return this.end([text]);
    if (text.trim()) this.segments.push(text.trim());
    // speech went on meanwhile, or another stop's transcript is coming: not decided yet
    if (this.speaking || this.awaiting > 0) return;
    const turn = this.segments.join(" ");
    const waitMs = endsWithPunctuation(turn) ? this.settings.onPunctuationMs : this.settings.onNoPunctuationMs;
    if (this.preemptive && turn) this.offer(turn);
    this.wait = setTimeout(() => this.end(this.segments), waitMs);
  }

  /** A Flux TurnInfo event (model). */
  providerTurn(turn: ProviderTurnEvent) {
    if (turn.event === "TurnResumed") return this.resume();
    if (turn.event === "EagerEndOfTurn") {
      if (this.preemptive && turn.transcript.trim()) this.offer(turn.transcript.trim());
      return;
    }
    this.tentativeText = null;
    this.end([turn.transcript]);
  }

  /** Timers stop: the session is over. */
  close() {
    this.clearWait();
  }

  private offer(text: string) {
    this.tentativeText = text;
    this.on.tentative(text);
  }

  private resume() {
    if (this.tentativeText === null) return;
    this.tentativeText = null;
    this.on.resumed();
  }

  private end(segments: string[]) {
    this.clearWait();
    const text = segments
      .map((s) => s.trim())
      .filter(Boolean)
      .join(" ");
    this.segments = [];
    this.tentativeText = null;
    this.open = false;
    this.on.ended(text);
  }

  private clearWait() {
    if (this.wait) clearTimeout(this.wait);
    this.wait = null;
  }
}

/**
 * The Realtime API's turn_detection: `model` is semantic_vad with the eagerness; otherwise server_vad
 * from the strategy's vad (as without the extension). The provider cuts its own response short when
 * the caller speaks only where any speech cuts the agent off at once; otherwise the bridge decides
 * (after minDurationMs it cancels the response) or nothing does (interruption off).
 */
export function realtimeTurnDetection(
  endpointing: EndpointingSettings,
  interruption: InterruptionSettings,
  serverVad: Record<string, unknown>,
): Record<string, unknown> {
  const common = { create_response: true, interrupt_response: cutsOffAtOnce(withoutWords(interruption)) };
  if (endpointing.mode === "model") return { type: "semantic_vad", eagerness: endpointing.eagerness, ...common };
  return { type: "server_vad", ...serverVad, ...common };
}
