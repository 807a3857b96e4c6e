import { expect, test } from "bun:test";
import { createCallRecorder } from "../../src/audio/call-recorder";
import { rms } from "../../src/audio/pcm";
import { parseWav } from "../../src/audio/wav";
import { sine } from "./signals";

const rate = 8000;
const frame = (amplitude: number, frequency = 440) => sine(frequency, rate, 0.02, amplitude);
const window = (samples: Int16Array, fromMs: number, toMs: number) => samples.subarray((fromMs * rate) / 1000, (toMs * rate) / 1000);

function clock() {
  let t = 5_000; // any origin: positions are relative to the recorder's creation
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test("the recording lasts as long as the call and each side sits where it was heard", () => {
  const c = clock();
  const recorder = createCallRecorder({ sampleRate: rate, now: c.now });
  // caller talks for 1 s in 20 ms frames, then is silent (sends nothing) for 1 s, then talks 0.5 s
  for (let i = 0; i < 50; i++, c.advance(20)) recorder.add("caller", frame(8000));
  c.advance(1000);
  for (let i = 0; i < 25; i++, c.advance(20)) recorder.add("caller", frame(8000));
  // the agent's 0.6 s reply is handed over in one burst at 2.5 s and must stay contiguous
  for (let i = 0; i < 30; i++) recorder.add("agent", frame(6000, 1000));
  c.advance(1000);
  const wav = parseWav(recorder.finish());
  expect(wav.sampleRate).toBe(rate);
  expect(wav.samples.length).toBe(3.5 * rate);
  const level = (from: number, to: number) => rms(window(wav.samples, from, to));
  expect(level(0, 1000)).toBeGreaterThan(5000);
  expect(level(1000, 2000)).toBe(0);
  expect(level(2000, 2500)).toBeGreaterThan(5000);
  expect(level(2500, 3100)).toBeGreaterThan(4000);
  expect(level(3100, 3500)).toBe(0);
});

test("jittery frames are laid end to end, not on top of each other", () => {
  const c = clock();
  const recorder = createCallRecorder({ sampleRate: rate, now: c.now });
  for (let i = 0; i < 50; i++) {
    c.advance(i % 2 ? 35 : 5); // 20 ms on average, arriving in pairs
    recorder.add("caller", frame(8000));
  }
  const samples = parseWav(recorder.finish()).samples;
  expect(samples.length).toBe(rate); // 1 s of call
  expect(rms(window(samples, 10, 990))).toBeCloseTo(8000 / Math.SQRT2, -2);
});

test("both sides overlapping are summed and saturate instead of wrapping", () => {
  const c = clock();
  const recorder = createCallRecorder({ sampleRate: rate, now: c.now });
  const loud = new Int16Array(160).fill(30000);
  recorder.add("caller", loud);
  recorder.add("agent", loud);
  recorder.add("agent", Int16Array.from({ length: 160 }, () => -30000));
  c.advance(40);
  const samples = parseWav(recorder.finish()).samples;
  expect(samples.length).toBe(320);
  expect(samples[0]).toBe(32767);
  expect(samples[200]).toBe(-30000);
});
