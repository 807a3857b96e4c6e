// bench/calls-ws/conclude-loop (by hand, not CI): how long writing the ends of CALLS recorded calls at
// once holds the event loop that paces audio. A 5 ms interval timer (like the frame ticker) measures its
// own lateness while the ends are written (WAV read, base64, JSON, the conclusion's transaction with the
// recording and the stored call_concluded body), side by side in one run:
//   inline: writeCallEnd on the event loop (what the bridge did before),
//   thread: the same through conclusion-thread.ts, as the bridge does now.
//   bun bench/calls-ws/conclude-loop.ts [--calls 50] [--minutes 30] [--format ulaw|pcm16] [--rate 16000]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wavHeader } from "../../src/audio/wav";
import type { PendingEnd } from "../../src/calls/conclusion-spool";
import { writeRecordedCallEnd } from "../../src/calls/conclusion-thread";
import { writeCallEnd } from "../../src/calls/write-call-end";
import { createDb } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { createLimiter } from "../../src/lib/limiter";
import { createAssistantWithHooks } from "../../test/hooks/fixtures";
import { createBench, percentile as pct } from "../lib/harness";
import { openRecordedEnd } from "../lib/recorded-end";

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

const { say, databaseUrl, finish } = createBench("conclude-loop");
const dir = mkdtempSync(join(tmpdir(), "conclude-loop-"));

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

try {
  await migrateDatabase(databaseUrl);
  const { db, close } = createDb(databaseUrl, { max: 4 });
  const owner = await createAssistantWithHooks(db, [{ url: "http://127.0.0.1:9/hook" }]);
  const audio = Buffer.alloc(dataBytes);
  for (let i = 0; i < audio.length; i++) audio[i] = (i * 31) & 0xff; // not all zeros: base64 has real work
  const wav = Buffer.concat([wavHeader(ulaw ? "ulaw" : "pcm16", fileRate, dataBytes), audio]);
  say(`${calls} calls of ${values.minutes} min: recordings of ${(wav.length / 1e6).toFixed(1)} MB`);

  /** `n` open calls with their recordings on disk, as they are when they end. */
  const messages = Array.from({ length: 40 }, (_, k) => ({
    type: "text" as const,
    role: "USER" as const,
    timestamp: k,
    text: "a sentence of the call ".repeat(4),
  }));
  const openCalls = (n: number): Promise<PendingEnd[]> =>
    Promise.all(Array.from({ length: n }, () => openRecordedEnd(db, owner, dir, wav, messages)));
  // as the conclusion writer does: a few at a time (each is tens of MB until written)
  const run = async (write: (pending: PendingEnd) => Promise<void>, n = calls) => {
    const ends = await openCalls(n);
    const limited = createLimiter(4);
    return measure(() => Promise.all(ends.map((end) => limited(() => write(end)))));
  };
  const fileOf = (end: PendingEnd) => ({ store: "postgres" as const, ...end.recording! });
  const inline = (end: PendingEnd) => writeCallEnd(db, end, fileOf(end));
  const thread = (end: PendingEnd) => writeRecordedCallEnd(databaseUrl, end, fileOf(end));

  say("warming both paths");
  await run(thread, 2);
  await run(inline, 2);
  say("measuring");
  const results = { inline: await run(inline), thread: await run(thread) };
  console.log(`bench/calls-ws/conclude-loop: ${calls} calls of ${values.minutes} min, ${values.format} recordings`);
  for (const [name, r] of Object.entries(results))
    console.log(
      `${name.padEnd(7)} event-loop lateness p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms; all ends written in ${(r.wallMs / 1000).toFixed(1)} s`,
    );
  await close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await finish();
}
