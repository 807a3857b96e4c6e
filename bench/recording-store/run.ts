// bench/recording-store (by hand, not CI): what a call's end costs in each recording store, side by
// side in one run. CALLS ends of recorded calls (MINUTES of ulaw each) go through the bridge's own
// ConclusionWriter, AT_ONCE at a time, for each store:
//   postgres:       the WAV read, base64 in call_concluded, the bytes in call_recordings (as today);
//   s3:             uploaded to SeaweedFS (weed server -s3) from the spool, base64 and URL in the hook;
//   s3, no base64:  the same with RECORDING_IN_HOOKS=false (the hook carries the URL alone).
// Reports per recording the upload time (s3) and the time until the conclusion landed, p50 and p99, and
// the process's memory per concluding call: its peak RSS over the baseline while AT_ONCE ends are
// written, divided by AT_ONCE.
//   bun run bench recording-store [--calls 40] [--at-once 10] [--minutes 5]
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wavHeader } from "../../src/audio/wav";
import { ConclusionSpool } from "../../src/calls/conclusion-spool";
import { ConclusionWriter, objectStoreOf } from "../../src/calls/conclusion-writer";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { createAssistantWithHooks } from "../../test/hooks/fixtures";
import { startSeaweedFs } from "../../test/helpers/seaweedfs";
import { createBench, percentile as pct } from "../lib/harness";
import { openRecordedEnd } from "../lib/recorded-end";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "40" },
    "at-once": { type: "string", default: "10" },
    minutes: { type: "string", default: "5" },
  },
});
const calls = Number(values.calls);
const atOnce = Number(values["at-once"]);
const dataBytes = Number(values.minutes) * 60 * 8000;

const { say, databaseUrl, finish } = createBench("recording-store");
const dir = mkdtempSync(join(tmpdir(), "recording-store-"));
const rssMb = () => process.memoryUsage.rss() / 1e6;

try {
  await migrateDatabase(databaseUrl);
  const store = await startSeaweedFs();
  const { db, close } = createDb(databaseUrl, { max: 4 });
  const owner = await createAssistantWithHooks(db, [{ url: "http://127.0.0.1:9/hook" }]);
  const audio = Buffer.alloc(dataBytes);
  for (let i = 0; i < audio.length; i++) audio[i] = (i * 31) & 0xff; // not all zeros: base64 has real work
  const wav = Buffer.concat([wavHeader("ulaw", 8000, dataBytes), audio]);
  const wavBytes = wav.length;
  say(
    `${calls} ends per store, ${atOnce} at a time, recordings of ${(wavBytes / 1e6).toFixed(1)} MB (${values.minutes} min ulaw)`,
  );

  async function runStore(name: string, env: Record<string, string>) {
    const config = loadConfig({ ...process.env, ...env });
    const spool = new ConclusionSpool(join(dir, name, "spool"));
    const recordings = join(dir, name, "recordings");
    mkdirSync(recordings, { recursive: true });
    const writer = new ConclusionWriter(db, databaseUrl, spool, { objectStore: objectStoreOf(config) });
    const uploadMs: number[] = [];
    const landedMs: number[] = [];
    const perCallMb: number[] = [];
    for (let done = 0; done < calls; done += atOnce) {
      const ends = await Promise.all(
        Array.from({ length: Math.min(atOnce, calls - done) }, () => openRecordedEnd(db, owner, recordings, wav)),
      );
      Bun.gc(true);
      const baseline = rssMb();
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMb())), 5);
      await Promise.all(
        ends.map(async (end) => {
          const started = performance.now();
          const begun = await writer.beginUpload(end.task, end.recording, 20_000);
          void begun.upload?.key.then((key) => key && uploadMs.push(performance.now() - started));
          const landed = await writer.conclude({ ...end, recording: begun.recording }, begun.upload);
          if (!landed) throw new Error("an end did not land");
          landedMs.push(performance.now() - started);
        }),
      );
      clearInterval(sampler);
      perCallMb.push((peak - baseline) / ends.length);
    }
    writer.stop();
    return { name, uploadMs, landedMs, perCallMb };
  }

  const results = [];
  for (const [name, env] of [
    ["postgres", {}],
    ["s3", store.env],
    ["s3, no base64", { ...store.env, RECORDING_IN_HOOKS: "false" }],
  ] as const) {
    say(`measuring ${name}`);
    results.push(await runStore(name, env));
  }
  const load = loadavg()[0]!.toFixed(1);
  console.log(
    `bench/recording-store: ${calls} ends per store, ${atOnce} at a time, ${(wavBytes / 1e6).toFixed(1)} MB recordings, load ${load}`,
  );
  for (const r of results) {
    const upload = r.uploadMs.length
      ? `upload p50 ${pct(r.uploadMs, 50).toFixed(0)} ms, p99 ${pct(r.uploadMs, 99).toFixed(0)} ms; `
      : "";
    console.log(
      `${r.name.padEnd(14)} ${upload}landed p50 ${pct(r.landedMs, 50).toFixed(0)} ms, p99 ${pct(r.landedMs, 99).toFixed(0)} ms; memory per concluding call p50 ${pct(r.perCallMb, 50).toFixed(1)} MB, max ${pct(r.perCallMb, 100).toFixed(1)} MB`,
    );
  }
  await close();
  await store.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
  await finish();
}
