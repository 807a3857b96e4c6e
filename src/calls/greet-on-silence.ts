// An outbound call's opening: the callee usually answers with "Hello?", so the assistant listens
// first. If the callee says nothing for `silenceMs` after the answer, the assistant greets; once the
// callee has spoken, the voice says the greeting as its answer to their first words instead
// (VoiceSessionOptions.greetingWaitsForCallee), and this timer is done. Only words the voice heard
// count: said before it was ready, nobody heard them, and the silence's greeting still comes.
import { rms } from "../audio/pcm";

// speech on a phone line is well above this (PCM16 RMS); line noise and comfort noise are below
const speechRms = 500;
// this much speech in a row counts as the callee talking (a click or a pop does not)
const speechMs = 100;

export class GreetOnSilence {
  private timer: ReturnType<typeof setTimeout> | null;
  private speechSamples = 0;
  private due = false;
  private greet: (() => void) | null = null;
  /** true once the callee spoke before the silence ran out */
  calleeFirst = false;

  constructor(
    private readonly sampleRate: number,
    silenceMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.due = true;
      this.fire();
    }, silenceMs);
  }

  /** The voice is ready: `greet` runs now if the silence already ran out, else when it does. */
  ready(greet: () => void) {
    this.greet = greet;
    this.fire();
  }

  /** Caller audio (PCM16 at the call's rate). */
  feed(samples: Int16Array) {
    // words said before the voice listened (it was still connecting) were heard by nobody: no turn of
    // theirs will ask for the greeting, so they do not stop the timer
    if (this.timer === null || this.greet === null) return;
    this.speechSamples = rms(samples) >= speechRms ? this.speechSamples + samples.length : 0;
    if (this.speechSamples * 1000 < speechMs * this.sampleRate) return;
    this.calleeFirst = true;
    this.stop();
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private fire() {
    if (!this.due || !this.greet) return;
    const greet = this.greet;
    this.greet = null;
    greet();
  }
}
