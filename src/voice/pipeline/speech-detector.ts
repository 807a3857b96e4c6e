// The caller's side of the pipeline: call audio cut into VAD windows (resampled to 16 kHz when the
// call is 24 kHz, since Silero knows 8 and 16 kHz only), scored one window at a time, and turned into
// turn events plus the speech audio that goes on to STT (at the VAD's rate).
import { concatPcm, rms } from "../../audio/pcm";
import { createResampler, type Resampler } from "../../audio/resampler";
import { coalescingRunner, type CoalescingRunner } from "../../lib/coalescing-runner";
import { InputTimeline } from "../input-timeline";
import { SileroVad, type VadRate } from "./silero-vad";
import { TurnDetector, type VadSettings } from "./turn-detector";

export type SpeechEvent =
  /** the turn started: `audio` holds the backbuffer and the start's windows */
  | { type: "start"; audio: Int16Array }
  /** a window heard while the caller is speaking (stop window included); `speech`: it counted as speech */
  | { type: "audio"; audio: Int16Array; speech: boolean }
  /** the turn ended: `lastSpeechAt` is when the caller's last speech window reached the bridge (performance.now()) */
  | { type: "end"; lastSpeechAt: number }
  /**
   * In a turn, the caller went quiet (`on`: the turn ends with the frame that completes stopDuration, so
   * each frame is wanted as it arrives), or the pause is over (they went on, or the turn ended)
   */
  | { type: "pausing"; on: boolean };

/** RMS (full scale 1) under which a window is silence, not speech: -60 dBFS, below a quiet line's noise. */
const silenceFloor = 0.001;

export const vadRateFor = (callRate: number): VadRate => (callRate === 8000 ? 8000 : 16000);

export class SpeechDetector {
  private readonly resampler: Resampler;
  private readonly turns: TurnDetector;
  private readonly runner: CoalescingRunner;
  private readonly gate: number;
  private pending: Int16Array[] = [];
  private pendingSamples = 0;
  private readonly arrivals = new InputTimeline();
  /** ms of audio scored so far: where the next window begins in the stream */
  private scoredMs = 0;
  /** the last `pausing` told */
  private pausing = false;

  private constructor(
    private readonly vad: SileroVad,
    private readonly callRate: number,
    settings: VadSettings,
    private readonly onEvent: (event: SpeechEvent) => void,
    onError: (error: unknown) => void,
    private readonly onAudio: ((audio: Int16Array) => void) | null,
  ) {
    this.resampler = createResampler(callRate, vad.sampleRate);
    this.turns = new TurnDetector(settings, vad.sampleRate);
    this.gate = Math.max(settings.minVolume, silenceFloor);
    this.runner = coalescingRunner(() => this.drain(), onError);
  }

  /**
   * `onAudio`: all the caller's audio, silence too, at the VAD's rate, as it arrives (an STT that
   * decides the turns hears it all, and not a window late: its end of turn waits for the audio).
   */
  static async create(
    callRate: number,
    settings: VadSettings,
    onEvent: (event: SpeechEvent) => void,
    onError: (error: unknown) => void,
    onAudio: ((audio: Int16Array) => void) | null = null,
  ) {
    const vad = await SileroVad.create(vadRateFor(callRate));
    return new SpeechDetector(vad, callRate, settings, onEvent, onError, onAudio);
  }

  /** Rate of the audio in the events. */
  get sampleRate(): VadRate {
    return this.vad.sampleRate;
  }

  /** Caller audio that arrived `at` (performance.now(); tests give their stream's own clock). */
  push(samples: Int16Array, at = performance.now()) {
    this.arrivals.add((samples.length * 1000) / this.callRate, at);
    const audio = this.resampler.process(samples);
    this.onAudio?.(audio);
    this.pending.push(audio);
    this.pendingSamples += audio.length;
    // while the caller may be stopping, every frame: the stop can come before the window is complete
    if (this.pendingSamples >= this.vad.windowSamples || this.turns.speaking) this.runner.request();
  }

  /** Resolves once every window pushed so far has been scored (tests, benches). */
  settled() {
    return this.runner.settled();
  }

  stop() {
    void this.runner.stop();
    this.pausing = false;
    this.pending = [];
    this.pendingSamples = 0;
  }

  private async drain() {
    const size = this.vad.windowSamples;
    while (this.pendingSamples >= size) {
      const window = this.take(size);
      const probability = await this.score(window);
      const wasSpeaking = this.turns.speaking;
      const event = this.turns.push(window, probability, wasSpeaking ? this.quietTailMs(window) : 0);
      this.scoredMs += this.msOf(size);
      // the end's own window too, before it
      if (wasSpeaking) this.onEvent({ type: "audio", audio: window, speech: this.turns.voiced });
      if (event?.type === "end") this.end(event.silenceMs, 0);
      else if (event) this.onEvent(event);
    }
    this.endEarly();
    if (this.turns.pausing !== this.pausing) {
      this.pausing = !this.pausing;
      this.onEvent({ type: "pausing", on: this.pausing });
    }
  }

  /**
   * The audio of the window under way, when all of it is under the volume gate, counts to the stop
   * as it arrives: the turn ends with the frame that completes stopDuration (ms after the caller's last
   * sound), not up to a window (32 ms) later.
   */
  private endEarly() {
    if (!this.turns.speaking || this.pendingSamples === 0) return;
    const partial = concatPcm(this.pending);
    const ms = this.msOf(partial.length);
    if (this.quietTailMs(partial) < ms) return;
    const event = this.turns.quietFor(ms);
    if (event?.type === "end") this.end(event.silenceMs, ms);
  }

  /** `beyondMs`: audio past the last scored window that the turn's end counted */
  private end(silenceMs: number, beyondMs: number) {
    this.onEvent({ type: "end", lastSpeechAt: this.arrivedAt(this.scoredMs + beyondMs - silenceMs) });
  }

  /** How much of the end of `samples` is under the volume gate, in 4 ms blocks (a short first block at the start). */
  private quietTailMs(samples: Int16Array) {
    const block = this.vad.sampleRate / 250;
    let end = samples.length;
    while (end > 0 && rms(samples.subarray(Math.max(0, end - block), end)) / 32768 < this.gate) end -= block;
    return this.msOf(samples.length - Math.max(0, end));
  }

  private msOf(samples: number) {
    return (samples * 1000) / this.vad.sampleRate;
  }

  /**
   * A window below the volume gate (minVolume, or the silence floor when that is lower) cannot count as
   * speech whatever the model says: it is not scored, which saves most of the VAD's CPU while the caller
   * listens. The model then starts again from a new stream's state, as it does at the start of a call.
   */
  private async score(window: Int16Array): Promise<number> {
    if (rms(window) / 32768 < this.gate) {
      this.vad.reset();
      return 0;
    }
    return this.vad.probability(window);
  }

  /** When the audio at `offsetMs` reached the bridge (now, for a moment too old to be known). */
  private arrivedAt(offsetMs: number) {
    return this.arrivals.timeOf(offsetMs) ?? performance.now();
  }

  private take(size: number): Int16Array {
    const window = new Int16Array(size);
    let filled = 0;
    while (filled < size) {
      const head = this.pending[0]!;
      const n = Math.min(size - filled, head.length);
      window.set(head.subarray(0, n), filled);
      filled += n;
      if (n === head.length) this.pending.shift();
      else this.pending[0] = head.subarray(n);
    }
    this.pendingSamples -= size;
    return window;
  }
}
