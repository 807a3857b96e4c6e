// bench/calls-ws/conclude-loop (by hand, not CI): how long building the call_concluded bodies of CALLS
// calls at once holds the event loop that paces audio. A 5 ms interval timer (like the frame ticker)
// measures its own lateness while the bodies are built, side by side in one run:
//   inline: read the WAV, base64 and JSON on the event loop (what the bridge did before),
//   worker: the same through concluded-body.ts (a worker thread), as the bridge does now.
//   bun bench/calls-ws/conclude-loop.ts [--calls 50] [--minutes 30] [--format ulaw|pcm16] [--rate 16000]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wavHeader } from "../../src/audio/wav";
import { buildConcludedBody } from "../../src/calls/concluded-body";
import { createLimiter } from "../../src/lib/limiter";
import { serializePayload, type CallConcludedPayload } from "../../src/events/payloads";
import { percentile as pct } from "../lib/harness";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "50" },
    minutes: { type: "string", default: "30" },
    format: { type: "string", default: "ulaw" },
    rate: { type: "string", default: "16000" },
  },
});
const calls = Number(values.calls);
const seconds = Number(values.minutes) * 60;
const ulaw = values.format === "ulaw";
const fileRate = ulaw ? 8000 : Number(values.rate);
const dataBytes = seconds * fileRate * (ulaw ? 1 : 2);

const dir = mkdtempSync(join(tmpdir(), "conclude-loop-"));
const audio = Buffer.alloc(dataBytes);
for (let i = 0; i < audio.length; i++) audio[i] = (i * 31) & 0xff; // not all zeros: base64 has real work
const files = Array.from({ length: calls }, (_, i) => {
  const path = join(dir, `${i}.wav`);
  writeFileSync(path, Buffer.concat([wavHeader(ulaw ? "ulaw" : "pcm16", fileRate, dataBytes), audio]));
  return path;
});
const event = (i: number): CallConcludedPayload => ({
  type: "call_concluded",
  callId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
  startedAt: 1,
  endedAt: 2,
  shortSummary: "s",
  summary: "s",
  callRecording: null,
  transport: { type: "websocket" },
  messages: Array.from({ length: 40 }, (_, k) => ({
    type: "text" as const,
    role: "USER" as const,
    timestamp: k,
    text: "a sentence of the call ".repeat(4),
  })),
});

/** Runs `work` while a 5 ms timer records its lateness; returns the lateness p99, max and the wall time. */
async function measure(work: () => Promise<unknown>) {
  const lags: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - 5));
    last = now;
  }, 5);
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  clearInterval(timer);
  return { p99: pct(lags, 99), max: pct(lags, 100), wallMs };
}

const inline = async () => {
  for (let i = 0; i < calls; i++) {
    const wav = readFileSync(files[i]!);
    serializePayload({ ...event(i), callRecording: wav.toString("base64") });
    await Bun.sleep(0); // as concurrent conclusions would interleave
  }
};
// as the conclusion writer does: a few bodies at a time (each is tens of MB until written)
const limited = createLimiter(4);
const worker = () =>
  Promise.all(files.map((path, i) => limited(() => buildConcludedBody(event(i), path).then(() => {}))));

try {
  await measure(worker); // start the worker thread and warm both paths once
  await measure(inline);
  const results = { inline: await measure(inline), worker: await measure(worker) };
  const mb = (dataBytes / 1e6).toFixed(1);
  console.log(
    `bench/calls-ws/conclude-loop: ${calls} calls of ${values.minutes} min, ${values.format} recordings of ${mb} MB each`,
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(
      `${name.padEnd(7)} event-loop lateness p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms; all bodies built in ${(r.wallMs / 1000).toFixed(1)} s`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
