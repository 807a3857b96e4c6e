// Audio checked by content in SIP tests: how many 20 ms frames of 8 kHz audio hold one tone.
import { strongestTone } from "../../../src/audio/tone-frame";

const holdsTone = (frame: Int16Array, hz: number) => {
  const tone = strongestTone(frame, 8000, { lowHz: 300, highHz: 1500, stepHz: 50 });
  return Math.abs(tone.hz - hz) <= 50 && tone.purity > 0.8;
};

/** 20 ms frames of `heard` whose strongest tone in 300–1500 Hz is `hz` and nearly pure. */
export function toneFrames(heard: Int16Array, hz: number): number {
  let count = 0;
  for (let i = 0; i + 160 <= heard.length; i += 160) if (holdsTone(heard.subarray(i, i + 160), hz)) count++;
  return count;
}

/**
 * How long the tone lasts in `samples`, in 20 ms frames, wherever its pieces start: the samples covered by
 * a 160-sample window holding it, the windows tried every 20 samples. A recording places each burst of
 * frames where it arrived, so a tone may come in pieces misaligned to any fixed 20 ms grid, and
 * `toneFrames` there misses the two partial frames at each piece's edges.
 */
export function toneLength(samples: Int16Array, hz: number): number {
  let covered = 0;
  let coveredUntil = 0;
  for (let i = 0; i + 160 <= samples.length; i += 20)
    if (holdsTone(samples.subarray(i, i + 160), hz)) {
      covered += i + 160 - Math.max(i, coveredUntil);
      coveredUntil = i + 160;
    }
  return covered / 160;
}

/** The first 20 ms frame of `heard` holding the tone (-1: none). */
export function firstToneFrame(heard: Int16Array, hz: number): number {
  for (let f = 0; (f + 1) * 160 <= heard.length; f++)
    if (holdsTone(heard.subarray(f * 160, (f + 1) * 160), hz)) return f;
  return -1;
}

/** The last 20 ms frame of `heard` holding the tone (-1: none). */
export function lastToneFrame(heard: Int16Array, hz: number): number {
  for (let f = Math.floor(heard.length / 160) - 1; f >= 0; f--)
    if (holdsTone(heard.subarray(f * 160, (f + 1) * 160), hz)) return f;
  return -1;
}

/**
 * The tone was heard and is over: `framesAfter` frames without it followed its last frame. A stream's
 * packets arrive in order, so every frame of the tone sent before those came is in `heard`.
 */
export function toneOver(heard: Int16Array, hz: number, framesAfter = 10): boolean {
  const last = lastToneFrame(heard, hz);
  return last >= 0 && Math.floor(heard.length / 160) - 1 - last >= framesAfter;
}
