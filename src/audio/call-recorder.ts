// Mixes both sides of a call onto one timeline at one rate and renders the whole call as a WAV.
// Each side is placed by frame position (frames follow each other without gaps), re-anchored to the
// wall clock when it falls behind by more than `slackMs` (the side sent nothing for a while), so
// silences keep their real length and the recording lasts exactly as long as the call.
import { encodeWav } from "./wav";

export type CallSide = "caller" | "agent";

export interface CallRecorder {
  readonly sampleRate: number;
  /** Adds a frame of one side (PCM16 at the recorder's rate) that started playing/arriving now. */
  add(side: CallSide, samples: Int16Array): void;
  /** Renders the call from start to now (or `endedAt`, same clock as `now`) as a WAV file. */
  finish(endedAt?: number): Buffer;
}

export type CallRecorderOptions = {
  sampleRate: number;
  /** Monotonic clock in ms; injectable for tests. */
  now?: () => number;
  slackMs?: number;
};

const chunkSeconds = 1;

export function createCallRecorder({ sampleRate, now = () => performance.now(), slackMs = 100 }: CallRecorderOptions): CallRecorder {
  const startedAt = now();
  const chunkSize = sampleRate * chunkSeconds;
  // the mix, in 1 s chunks so a long call never reallocates one huge buffer
  const chunks: Int16Array[] = [];
  const cursor: Record<CallSide, number> = { caller: 0, agent: 0 };
  const slack = Math.round((slackMs * sampleRate) / 1000);
  const positionAt = (time: number) => Math.max(0, Math.round(((time - startedAt) * sampleRate) / 1000));

  function mixAt(position: number, samples: Int16Array) {
    for (let i = 0; i < samples.length; i++) {
      const at = position + i;
      const c = Math.floor(at / chunkSize);
      while (chunks.length <= c) chunks.push(new Int16Array(chunkSize));
      const chunk = chunks[c]!;
      const sum = chunk[at - c * chunkSize]! + samples[i]!;
      // saturate instead of wrapping around when both sides are loud at once
      chunk[at - c * chunkSize] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
    }
  }

  return {
    sampleRate,
    add(side, samples) {
      const wall = positionAt(now());
      const position = wall - cursor[side] > slack ? wall : cursor[side];
      mixAt(position, samples);
      cursor[side] = position + samples.length;
    },
    finish(endedAt = now()) {
      const length = positionAt(endedAt);
      const mix = new Int16Array(length);
      chunks.forEach((chunk, c) => {
        const offset = c * chunkSize;
        if (offset < length) mix.set(chunk.subarray(0, Math.min(chunkSize, length - offset)), offset);
      });
      return encodeWav(mix, sampleRate);
    },
  };
}
