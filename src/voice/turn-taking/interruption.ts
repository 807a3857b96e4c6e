// Whether caller speech heard while the agent speaks cuts it off (the turn_taking extension's
// `interruption`, docs/voice.md "Turn-taking"). An engine opens a CutIn when the caller starts
// speaking over the agent and tells it how long the speech has lasted and what has been transcribed;
// the CutIn says when to pause the agent, resume it, or cut it off. Speech shorter than minDurationMs
// does nothing; longer speech pauses the agent until its words decide (at least minWords, and not an
// acknowledgement said alone); no word within falseInterruptionMs of the pause resumes the agent.
import { normalizedPhrase, type InterruptionSettings } from "./turn-taking";

export type CutInEvents = {
  /** hold the agent's audio where the caller is in it */
  pause: () => void;
  /** no interruption: the agent goes on from where it paused */
  resume: () => void;
  /** an interruption: the agent stops, what was not heard is dropped */
  interrupt: () => void;
};

/**
 * Whether `text` cuts the agent off: enough words, and not an acknowledgement (while the caller still
 * speaks, `final` false, not the start of one either: "got" may become "got it").
 */
export function isInterruption(text: string, settings: InterruptionSettings, final: boolean): boolean {
  const phrase = normalizedPhrase(text);
  if (!phrase) return false;
  const acknowledged = settings.acknowledgements.some((a) => a === phrase || (!final && a.startsWith(phrase)));
  return !acknowledged && phrase.split(" ").length >= Math.max(1, settings.minWords);
}

/** Settings under which sound alone decides, at minDurationMs (no words to wait for). */
const decidedBySound = (s: InterruptionSettings) =>
  s.minWords === 0 && s.acknowledgements.length === 0 && s.falseInterruptionMs === 0;

/** Any speech cuts the agent off at once, as without the extension: no CutIn to open. */
export const cutsOffAtOnce = (s: InterruptionSettings) => s.enabled && s.minDurationMs === 0 && decidedBySound(s);

/** The settings as an engine that hears no words applies them (openai_realtime): sound alone decides. */
export const withoutWords = (s: InterruptionSettings): InterruptionSettings => ({
  ...s,
  minWords: 0,
  acknowledgements: [],
  falseInterruptionMs: 0,
});

/** The caller's speech over the agent, from its first sound until its turn ends. */
export class CutIn {
  /** the stretch of speech under way: ms heard since its onset, and up to its latest sound */
  private heardMs = 0;
  /** the latest interim transcript: words heard before minDurationMs decide once the speech lasts it */
  private words = "";
  private sustained = false;
  private paused = false;
  private interrupted = false;
  private falseTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly settings: InterruptionSettings,
    private readonly on: CutInEvents,
  ) {}

  /** A stretch of speech began, `ms` of it already heard (the VAD's start needs that much). */
  speechStarted(ms: number) {
    this.heardMs = ms;
    this.lasted(ms);
  }

  /** `ms` more of the stretch was heard; `speech`: it counted as speech (not the silence before a stop). */
  window(ms: number, speech: boolean) {
    this.heardMs += ms;
    if (speech) this.lasted(this.heardMs);
  }

  /** The speech has lasted `ms`, from its onset to its latest sound. */
  lasted(ms: number) {
    if (this.sustained || ms < this.settings.minDurationMs) return;
    this.sustained = true;
    if (decidedBySound(this.settings) || isInterruption(this.words, this.settings, false)) return this.interrupt();
    this.paused = true;
    this.on.pause();
    const { falseInterruptionMs } = this.settings;
    if (falseInterruptionMs > 0) this.falseTimer = setTimeout(() => this.resume(), falseInterruptionMs);
  }

  /** What the caller has said so far (interim). */
  heard(text: string) {
    this.words = text;
    if (this.sustained && isInterruption(text, this.settings, false)) this.interrupt();
  }

  /** The turn ended with `text` (blank: no words). True when it cut the agent off (it is answered then). */
  finish(text: string): boolean {
    this.clearTimer();
    if (this.sustained && !this.interrupted) {
      if (isInterruption(text, this.settings, true)) this.interrupt();
      // falseInterruptionMs 0: sound that paused the agent stands as an interruption, words or not
      else if (!normalizedPhrase(text) && this.settings.falseInterruptionMs === 0 && this.paused) this.interrupt();
      else this.resume();
    }
    return this.interrupted;
  }

  /** The session is over. */
  close() {
    this.clearTimer();
  }

  private interrupt() {
    if (this.interrupted) return;
    this.clearTimer();
    this.interrupted = true;
    this.paused = false;
    this.on.interrupt();
  }

  private resume() {
    this.clearTimer();
    if (!this.paused) return;
    this.paused = false;
    this.on.resume();
  }

  private clearTimer() {
    if (this.falseTimer) clearTimeout(this.falseTimer);
    this.falseTimer = null;
  }
}
