// Turn-taking from the VAD's per-window speech probability: a window counts as speech when the
// probability reaches confidenceThreshold AND its RMS volume reaches minVolume; startDuration of
// speech starts a turn, stopDuration of non-speech ends it. The audio of the backbufferDuration before
// the start (and the start's own windows) is handed over with the start, so STT hears the onset.
import { concatPcm, rms } from "../../audio/pcm";

export type VadSettings = {
  confidenceThreshold: number;
  /** RMS on a 0..1 scale (full scale = 1). */
  minVolume: number;
  startDurationMs: number;
  stopDurationMs: number;
  backbufferDurationMs: number;
};

/** `silenceMs`: the non-speech that ended the turn (the caller's last speech ended that long before the end's window did) */
export type TurnEvent = { type: "start"; audio: Int16Array } | { type: "end"; silenceMs: number };

type Phase = "quiet" | "starting" | "speaking" | "stopping";

export class TurnDetector {
  private phase: Phase = "quiet";
  private runMs = 0; // speech (starting) or non-speech (stopping) in a row
  // windows before the confirmed start: the backbuffer plus the start's own windows
  private history: Int16Array[] = [];
  private historySamples = 0;
  private readonly backbufferSamples: number;

  constructor(
    private readonly settings: VadSettings,
    private readonly sampleRate: number,
  ) {
    this.backbufferSamples = Math.round((settings.backbufferDurationMs * sampleRate) / 1000);
  }

  get speaking() {
    return this.phase === "speaking" || this.phase === "stopping";
  }

  /** In a turn, the caller has gone quiet: the turn ends if the quiet lasts stopDuration. */
  get pausing() {
    return this.phase === "stopping";
  }

  /** The last window pushed counted as speech, in a turn (how long the caller has spoken, by the windows). */
  get voiced() {
    return this.phase === "speaking";
  }

  /**
   * One window of audio with its speech probability; returns the turn event it causes, if any.
   * `quietTailMs`: how much of the window's end is under the volume gate, so cannot be speech: after
   * a speech window it is the first of the non-speech that ends the turn (the stop is not put off to
   * the end of the window the voice ended in).
   */
  push(window: Int16Array, probability: number, quietTailMs = 0): TurnEvent | null {
    const ms = (window.length * 1000) / this.sampleRate;
    const { confidenceThreshold, minVolume, startDurationMs, stopDurationMs } = this.settings;
    const speech = probability >= confidenceThreshold && rms(window) / 32768 >= minVolume;
    switch (this.phase) {
      case "quiet":
      case "starting":
        this.remember(window);
        if (!speech) {
          this.phase = "quiet";
          this.runMs = 0;
          this.trim();
          return null;
        }
        this.runMs = this.phase === "quiet" ? ms : this.runMs + ms;
        this.phase = "starting";
        if (this.runMs < startDurationMs) return null;
        return this.start();
      case "speaking":
      case "stopping":
        if (speech) {
          this.phase = "speaking";
          this.runMs = quietTailMs;
          return null;
        }
        this.runMs += ms;
        this.phase = "stopping";
        return this.runMs < stopDurationMs ? null : this.end(this.runMs);
    }
  }

  /**
   * `ms` of audio after the last window, all of it under the volume gate (not speech, whatever the
   * model would say), has arrived: the turn ends now if that completes stopDuration, instead of when
   * the window it begins is complete (up to a window later). That window is pushed as usual once it is.
   */
  quietFor(ms: number): TurnEvent | null {
    if (!this.speaking || this.runMs + ms < this.settings.stopDurationMs) return null;
    return this.end(this.runMs + ms);
  }

  private end(silenceMs: number): TurnEvent {
    this.phase = "quiet"; // its runMs starts again at the next window
    return { type: "end", silenceMs };
  }

  private start(): TurnEvent {
    const audio = concatPcm(this.history);
    this.history = [];
    this.historySamples = 0;
    this.phase = "speaking";
    this.runMs = 0;
    return { type: "start", audio };
  }

  private remember(window: Int16Array) {
    this.history.push(window);
    this.historySamples += window.length;
  }

  /** In the quiet, keep only the last backbufferDuration of audio. */
  private trim() {
    while (this.history.length > 0 && this.historySamples - (this.history[0]?.length ?? 0) >= this.backbufferSamples) {
      this.historySamples -= this.history.shift()?.length ?? 0;
    }
    if (this.backbufferSamples === 0) {
      this.history = [];
      this.historySamples = 0;
    }
  }
}
