import { describe, expect, test } from "bun:test";
import { concatPcm, rms } from "../../src/audio/pcm";
import { createResampler } from "../../src/audio/resampler";
import { estimateFrequency, frames, sine } from "./signals";

const pairs: [number, number][] = [
  [8000, 16000],
  [8000, 24000],
  [16000, 24000],
  [24000, 16000],
  [24000, 8000],
  [16000, 8000],
  [48000, 24000],
  [24000, 48000],
];

// odd, varying frame sizes so frame edges fall at every filter phase
const frameSizes = [160, 97, 1, 333, 240, 50];

describe.each(pairs)("%d Hz -> %d Hz", (from, to) => {
  const tone = sine(440, from, 1);
  const whole = createResampler(from, to).process(tone);
  const stepwise = createResampler(from, to);
  const framed = concatPcm(frames(tone, frameSizes).map((f) => stepwise.process(f)));

  test("frame by frame equals one go, and the length follows the rate ratio", () => {
    expect(framed.length).toBe(whole.length);
    expect(Math.abs(whole.length - (tone.length * to) / from)).toBeLessThanOrEqual(1);
    let maxDiff = 0;
    for (let i = 0; i < whole.length; i++) maxDiff = Math.max(maxDiff, Math.abs(whole[i]! - framed[i]!));
    expect(maxDiff).toBeLessThanOrEqual(1);
  });

  test("frequency and level are preserved", () => {
    const steady = framed.subarray(Math.round(to * 0.05));
    expect(estimateFrequency(steady, to)).toBeCloseTo(440, 0);
    expect(rms(steady) / rms(tone)).toBeGreaterThan(0.98);
    expect(rms(steady) / rms(tone)).toBeLessThan(1.02);
  });

  test("no discontinuity at frame edges: the biggest step is the sine's own slope", () => {
    const maxSlope = (2 * Math.PI * 440 * 10000) / to;
    let maxStep = 0;
    // after the filter's warm-up on the tone's abrupt start
    for (let i = Math.round(to * 0.01); i < framed.length; i++)
      maxStep = Math.max(maxStep, Math.abs(framed[i]! - framed[i - 1]!));
    expect(maxStep).toBeLessThanOrEqual(maxSlope * 1.02 + 2);
  });
});

describe("low-pass when downsampling", () => {
  test("a 6 kHz tone does not alias into 24 kHz -> 8 kHz output", () => {
    const out = createResampler(24000, 8000).process(sine(6000, 24000, 0.5));
    expect(rms(out.subarray(400))).toBeLessThan(10000 * 0.01); // below -40 dB
  });

  test("telephone-band speech frequencies pass (3 kHz kept within 1 dB)", () => {
    const out = createResampler(24000, 8000).process(sine(3000, 24000, 0.5));
    expect(rms(out.subarray(400)) / (10000 / Math.SQRT2)).toBeGreaterThan(0.89);
  });
});

test("same rate passes frames through untouched, bad rates are refused", () => {
  const frame = sine(440, 8000, 0.02);
  expect(createResampler(8000, 8000).process(frame)).toBe(frame);
  expect(() => createResampler(0, 8000)).toThrow("invalid sample rate");
});
