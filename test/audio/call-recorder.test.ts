import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCallRecorder, type CallRecorderOptions } from "../../src/audio/call-recorder";
import { rms } from "../../src/audio/pcm";
import { parseWav } from "../../src/audio/wav";
import { sine } from "./signals";

const dir = mkdtempSync(join(tmpdir(), "recorder-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** A recorder writing PCM16 at the call's rate (unless `options` say otherwise) to a fresh file. */
function recorderFor(now: () => number, options: Partial<CallRecorderOptions> = {}) {
  return createCallRecorder({
    sampleRate: rate,
    path: join(dir, `${++files}.wav`),
    format: "pcm16",
    maxBytes: 1 << 30,
    now,
    ...options,
  });
}

const finished = async (recorder: ReturnType<typeof recorderFor>) =>
  parseWav(readFileSync((await recorder.finish()).path));

const rate = 8000;
const frame = (amplitude: number, frequency = 440) => sine(frequency, rate, 0.02, amplitude);
const window = (samples: Int16Array, fromMs: number, toMs: number) =>
  samples.subarray((fromMs * rate) / 1000, (toMs * rate) / 1000);

function clock() {
  let t = 5_000; // any origin: positions are relative to the recorder's creation
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test("the recording lasts as long as the call and each side sits where it was heard", async () => {
  const c = clock();
  const recorder = recorderFor(c.now);
  // caller talks for 1 s in 20 ms frames, then is silent (sends nothing) for 1 s, then talks 0.5 s
  for (let i = 0; i < 50; i++, c.advance(20)) recorder.add("caller", frame(8000));
  c.advance(1000);
  for (let i = 0; i < 25; i++, c.advance(20)) recorder.add("caller", frame(8000));
  // the agent's 0.6 s reply is handed over in one burst at 2.5 s and must stay contiguous
  for (let i = 0; i < 30; i++) recorder.add("agent", frame(6000, 1000));
  c.advance(1000);
  const wav = await finished(recorder);
  expect(wav.sampleRate).toBe(rate);
  expect(wav.samples.length).toBe(3.5 * rate);
  const level = (from: number, to: number) => rms(window(wav.samples, from, to));
  expect(level(0, 1000)).toBeGreaterThan(5000);
  expect(level(1000, 2000)).toBe(0);
  expect(level(2000, 2500)).toBeGreaterThan(5000);
  expect(level(2500, 3100)).toBeGreaterThan(4000);
  expect(level(3100, 3500)).toBe(0);
});

test("agent frames handed over ahead of their play time are recorded where they play", async () => {
  const c = clock();
  const recorder = recorderFor(c.now);
  c.advance(1000);
  // a transport that paces frames itself takes them 200 ms early: the reply starts at 1.2 s, not 1 s
  for (let i = 0; i < 10; i++, c.advance(20)) recorder.add("agent", frame(6000, 1000), 200);
  c.advance(800);
  const wav = await finished(recorder);
  const level = (from: number, to: number) => rms(window(wav.samples, from, to));
  expect(level(1000, 1200)).toBe(0);
  expect(level(1200, 1400)).toBeGreaterThan(4000);
  expect(level(1400, 2000)).toBe(0);
});

test("jittery frames are laid end to end, not on top of each other", async () => {
  const c = clock();
  const recorder = recorderFor(c.now);
  for (let i = 0; i < 50; i++) {
    c.advance(i % 2 ? 35 : 5); // 20 ms on average, arriving in pairs
    recorder.add("caller", frame(8000));
  }
  const samples = (await finished(recorder)).samples;
  expect(samples.length).toBe(rate); // 1 s of call
  expect(rms(window(samples, 10, 990))).toBeCloseTo(8000 / Math.SQRT2, -2);
});

test("both sides overlapping are summed and saturate instead of wrapping", async () => {
  const c = clock();
  const recorder = recorderFor(c.now);
  const loud = new Int16Array(160).fill(30000);
  recorder.add("caller", loud);
  recorder.add("agent", loud);
  recorder.add(
    "agent",
    Int16Array.from({ length: 160 }, () => -30000),
  );
  c.advance(40);
  const samples = (await finished(recorder)).samples;
  expect(samples.length).toBe(320);
  expect(samples[0]).toBe(32767);
  expect(samples[200]).toBe(-30000);
});

test("the call is written to the file as it runs: what is on disk grows with the call, not with memory", async () => {
  const c = clock();
  const recorder = recorderFor(c.now, { sampleRate: 16000 });
  const file = () => statSync(join(dir, `${files}.wav`)).size;
  const talk = sine(440, 16000, 0.02, 8000);
  for (let second = 1; second <= 120; second++) {
    for (let i = 0; i < 50; i++, c.advance(20)) recorder.add("caller", talk);
    await Bun.sleep(0); // the writes are asynchronous
  }
  await Bun.sleep(20);
  // all but the last second or so is already in the file (PCM16 at 16 kHz: 32 000 bytes a second)
  expect(file()).toBeGreaterThan(118 * 32_000);
  const wav = await finished(recorder);
  expect(wav.samples.length).toBe(120 * 16000);
});

test("mu-law at 8 kHz: a quarter of PCM16 at 16 kHz, the speech band intact", async () => {
  const c = clock();
  const recorder = recorderFor(c.now, { sampleRate: 16000, format: "ulaw" });
  for (let i = 0; i < 100; i++, c.advance(20)) recorder.add("caller", sine(440, 16000, 0.02, 8000));
  const done = await recorder.finish();
  const bytes = readFileSync(done.path);
  expect(bytes.readUInt16LE(20)).toBe(7); // WAVE_FORMAT_MULAW
  expect(done.bytes).toBe(58 + 2 * 8000);
  const wav = parseWav(bytes);
  expect(wav.sampleRate).toBe(8000);
  expect(wav.samples.length).toBe(2 * 8000);
  expect(rms(wav.samples.subarray(800))).toBeCloseTo(8000 / Math.SQRT2, -3);
});

test("above the size cap the file keeps the start of the call and says it was truncated", async () => {
  const c = clock();
  const recorder = recorderFor(c.now, { format: "ulaw", maxBytes: 8000 }); // one second at 8 kHz
  for (let i = 0; i < 150; i++, c.advance(20)) recorder.add("caller", frame(8000));
  const done = await recorder.finish();
  expect(done).toMatchObject({ truncated: true, bytes: 58 + 8000 });
  expect(parseWav(readFileSync(done.path)).samples.length).toBe(8000);
});
