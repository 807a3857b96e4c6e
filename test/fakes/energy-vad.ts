// The fake provider's server VAD: speech starts when a frame's energy rises above a threshold and
// stops after silence_duration_ms of quiet frames, like the provider's server_vad (minus the model).
import { rms } from "../../src/audio/pcm";

export type VadSettings = { prefix_padding_ms?: number; silence_duration_ms?: number };
export type VadEvent =
  | { type: "speech_started"; audioStartMs: number }
  | { type: "speech_stopped"; audioEndMs: number };

export class EnergyVad {
  private speaking = false;
  private silenceMs = 0;
  private audioMs = 0;

  constructor(
    readonly sampleRate: number,
    private readonly threshold: number,
  ) {}

  /** Feeds one frame; returns the transition it caused, if any. */
  feed(samples: Int16Array, settings: VadSettings): VadEvent | null {
    const ms = (samples.length * 1000) / this.sampleRate;
    this.audioMs += ms;
    const loud = rms(samples) > this.threshold;
    if (loud && !this.speaking) {
      this.speaking = true;
      this.silenceMs = 0;
      return {
        type: "speech_started",
        audioStartMs: Math.max(0, Math.round(this.audioMs - ms - (settings.prefix_padding_ms ?? 300))),
      };
    }
    if (!this.speaking) return null;
    this.silenceMs = loud ? 0 : this.silenceMs + ms;
    if (this.silenceMs < (settings.silence_duration_ms ?? 500)) return null;
    this.speaking = false;
    return { type: "speech_stopped", audioEndMs: Math.round(this.audioMs) };
  }
}
