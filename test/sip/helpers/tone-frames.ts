// Audio checked by content in SIP tests: how many 20 ms frames of 8 kHz audio hold one tone.
import { strongestTone } from "../../../src/audio/tone-frame";

/** 20 ms frames of `heard` whose strongest tone in 300–1500 Hz is `hz` and nearly pure. */
export function toneFrames(heard: Int16Array, hz: number): number {
  let count = 0;
  for (let i = 0; i + 160 <= heard.length; i += 160) {
    const tone = strongestTone(heard.subarray(i, i + 160), 8000, { lowHz: 300, highHz: 1500, stepHz: 50 });
    if (Math.abs(tone.hz - hz) <= 50 && tone.purity > 0.8) count++;
  }
  return count;
}

/** The first 20 ms frame of `heard` holding the tone (-1: none). */
export function firstToneFrame(heard: Int16Array, hz: number): number {
  for (let f = 0; (f + 1) * 160 <= heard.length; f++)
    if (toneFrames(heard.subarray(f * 160, (f + 1) * 160), hz)) return f;
  return -1;
}
