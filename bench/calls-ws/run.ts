// bench/calls-ws (by hand, not CI): N simultaneous websocket calls against the fake provider, each
// streaming 20 ms frames in real time, for DURATION seconds per step. Reports, per N, the p99 jitter
// of the agent frames the bridge sends, lost frames, and the bridge's CPU and memory per call; with
// the websocket thread on and off (BRIDGE_WS_THREAD), one bridge process each, side by side per step.
//   bun bench/calls-ws/run.ts [--calls 500 | --steps 50,100,200,300] [--duration 60] [--rate 16000] [--thread on,off] [--warmup 10]
//     [--sut-cpus 0 --load-cpus 1] [--floor-duration 20]
// The bridges (bun src/bridge/main.ts, one worker each) and the provider run as their own processes;
// a scratch database is created and dropped. Cores (bench/lib/pinning.ts): the bridges (every thread)
// and this database's Postgres backends on the SUT cores, the callers (this process), the provider and
// the API on the load cores; each step prints where each ran and is INVALID when the load side
// saturated its cores. The floor: after each N, the same N callers against a bare websocket relay on
// the SUT cores (bare-relay.ts: every frame sent straight back) for floor-duration s, its CPU per call
// beside ours.
import { loadavg } from "node:os";
import { generatorsFirst } from "../lib/generator-priority";
import { parseArgs } from "node:util";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench } from "../lib/harness";
import { loadConfig } from "../../src/config";
import { startApi } from "../../src/server";
import { createBenchAssistant } from "./bench-assistant";
import { speech } from "../../test/helpers/speech";
import { freePort } from "../../test/helpers/temporal";
import { createCallerPool, type PoolStats } from "./caller-pool";
import { cpuSeconds, rssMb } from "./proc-stats";
import { describePacing, pacingSnapshot } from "../lib/pacing";
import { pinningFrom, pinningOptions, type CoreReport } from "../lib/pinning";
import { processTree } from "../calls-sip/proc-tree";

const { values } = parseArgs({
  options: {
    ...pinningOptions,
    "floor-duration": { type: "string", default: "20" },
    steps: { type: "string", default: "50,100,200,300" },
    // one size only (the issue's target: 500 calls on one worker)
    calls: { type: "string" },
    thread: { type: "string", default: "on,off" },
    // seconds of unreported calls on every bridge first: the first step of a run paid the warm-up
    // (the bridge's, the provider's, Postgres') and lost to the second whichever mode it was
    warmup: { type: "string", default: "10" },
    duration: { type: "string", default: "60" },
    rate: { type: "string", default: "16000" },
  },
});
const steps = (values.calls ?? values.steps).split(",").map(Number);
const modes = values.thread.split(",").map((m) => (m === "on" ? "thread" : "event loop"));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const durationS = Number(values.duration);
const warmupS = Number(values.warmup);
const rate = Number(values.rate);
const replyChars = 300; // 3.6 s of agent speech per reply (the fake speaks 12 ms per character)
const replyFrames = Math.ceil((replyChars * 12) / 20);

const pinning = pinningFrom(values);
const floorS = Number(values["floor-duration"]);
const { say, databaseUrl, env, spawnBun, watch, finish } = createBench("calls-ws", pinning);
/** every bridge's processes: the SUT (the idle one's too, so that its place is checked) */
const bridgePids: number[] = [];
const bridgesWatched = () => ({ label: "bridges", side: "sut" as const, pids: () => bridgePids.flatMap(processTree) });

async function runStep(
  mode: string,
  n: number,
  bridgePid: number,
  providerPid: number,
  url: string,
  question: Int16Array,
  metricsUrl: string,
  seconds = durationS,
) {
  const restorePriority = generatorsFirst();
  const cores = watch([bridgesWatched()]);
  const pool = createCallerPool({ url, sampleRate: rate, question, replyFrames });
  const rssBefore = rssMb(bridgePid);
  // dial in waves so the start of the step is not one burst of upgrades
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => pool.dial()));
  const cpuStart = cpuSeconds(bridgePid);
  const pacingStart = await pacingSnapshot(metricsUrl);
  // the provider and the callers share the machine: when they saturate, the bridge is not what is measured
  const others = { provider: cpuSeconds(providerPid), callers: process.cpuUsage() };
  const started = performance.now();
  let peakRss = 0;
  while (performance.now() - started < seconds * 1000) {
    await Bun.sleep(5000);
    const elapsed = (performance.now() - started) / 1000;
    peakRss = Math.max(peakRss, rssMb(bridgePid));
    const cpu = ((cpuSeconds(bridgePid) - cpuStart) / elapsed) * 100;
    say(
      `${mode} N=${n} ${elapsed.toFixed(0)}/${seconds} s: ${pool.active} live, ${pool.stats.frames} frames, p99 jitter ${pool.stats.jitters.percentile(99).toFixed(1)} ms, lost ${pool.stats.lostFrames}, bridge CPU ${cpu.toFixed(0)}%, RSS ${peakRss.toFixed(0)} MB; provider CPU ${(((cpuSeconds(providerPid) - others.provider) / elapsed) * 100).toFixed(0)}%, callers CPU ${(((process.cpuUsage(others.callers).user + process.cpuUsage(others.callers).system) / 1e6 / elapsed) * 100).toFixed(0)}%`,
    );
  }
  const cpuPercent = ((cpuSeconds(bridgePid) - cpuStart) / ((performance.now() - started) / 1000)) * 100;
  const pacing = describePacing(pacingStart, await pacingSnapshot(metricsUrl));
  await pool.hangUpAll();
  restorePriority();
  return { mode, n, stats: pool.stats, cpuPercent, rssBefore, peakRss, pacing, load: load(), cores: cores.stop() };
}

/** The floor: `n` of the same callers against a bare websocket relay on the SUT cores; its CPU from the second second on. */
async function runFloor(n: number, question: Int16Array) {
  say(`N=${n}: the floor, a bare websocket relay on the SUT cores, ${n} calls for ${floorS} s`);
  const relay = await spawnBun("bench/calls-ws/bare-relay.ts", {}, (l) => l.includes('"url"'), undefined, "sut");
  const restorePriority = generatorsFirst();
  const cores = watch([{ label: "bare relay", side: "sut", pids: () => [relay.proc.pid!] }, bridgesWatched()]);
  const pool = createCallerPool({ url: JSON.parse(relay.line).url, sampleRate: rate, question, replyFrames });
  for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => pool.dial()));
  await Bun.sleep(2000);
  const from = { at: performance.now(), cpu: cpuSeconds(relay.proc.pid!) };
  await Bun.sleep(Math.max(1, floorS - 2) * 1000);
  const cpuPercent = ((cpuSeconds(relay.proc.pid!) - from.cpu) / ((performance.now() - from.at) / 1000)) * 100;
  await pool.hangUpAll();
  restorePriority();
  relay.proc.kill("SIGTERM");
  const report = cores.stop();
  return {
    line: `floor      N=${String(n).padStart(4)}  calls ${pool.stats.calls}/${n}  frames ${pool.stats.frames} (every frame echoed)  jitter p99 ${pool.stats.jitters.percentile(99).toFixed(1)} ms  CPU ${cpuPercent.toFixed(0)}% (${(cpuPercent / n).toFixed(3)}%/call)  ${report.valid ? "valid" : "INVALID"}; load average ${load()}\n${report.text}`,
    cpuPercent,
  };
}

function report({
  mode,
  n,
  stats,
  cpuPercent,
  rssBefore,
  peakRss,
  pacing,
  load,
  cores,
}: {
  mode: string;
  n: number;
  stats: PoolStats;
  cpuPercent: number;
  rssBefore: number;
  peakRss: number;
  pacing: string;
  load: string;
  cores: CoreReport;
}) {
  const p99 = stats.jitters.percentile(99);
  const ok = cores.valid && p99 < 10 && stats.lostFrames === 0 && stats.failed === 0 && stats.calls === n;
  return {
    ok,
    line: `${mode.padEnd(10)} N=${String(n).padStart(4)}  calls ${stats.calls}/${n}  replies ${stats.bursts}  frames ${stats.frames}  jitter p50 ${stats.jitters.percentile(50).toFixed(1)} p99 ${p99.toFixed(1)} max ${stats.jitters.max.toFixed(1)} ms (callers' own timer lag p99 ${stats.clientLag.percentile(99).toFixed(1)} ms)  lost ${stats.lostFrames} extra ${stats.extraFrames}  CPU ${cpuPercent.toFixed(0)}% (${(cpuPercent / n).toFixed(3)}%/call)  RSS ${peakRss.toFixed(0)} MB (${(((peakRss - rssBefore) * 1024) / n).toFixed(0)} KB/call)  ${ok ? "OK" : "FAIL"}\n      bridge: ${pacing}; load average ${load} (a shared machine)\n${cores.text}`,
  };
}

try {
  say(`scratch database, API, fake provider and bridge; steps ${steps.join(", ")} x ${durationS} s at ${rate} Hz`);
  await migrateDatabase(databaseUrl);
  const api = await startApi(loadConfig(env), { port: 0 });
  const provider = await spawnBun("bench/calls-ws/fake-provider.ts", { REPLY_CHARS: String(replyChars) }, (l) =>
    l.includes('"url"'),
  );
  const providerUrls = JSON.parse(provider.line);
  // one bridge per mode, each one process: a step runs on one while the other idles
  const bridges = new Map<string, { pid: number; port: number }>();
  for (const mode of modes) {
    const port = await freePort();
    const bridge = await spawnBun(
      "src/bridge/main.ts",
      {
        BRIDGE_PORT: String(port),
        BRIDGE_WORKERS: "1",
        BRIDGE_WS_THREAD: String(mode === "thread"),
        SIP_PORT: String(await freePort()), // (two bridges: not both on 5060)
        OPENAI_BASE_URL: providerUrls.chatUrl,
        OPENAI_REALTIME_URL: providerUrls.url,
        LOG_LEVEL: "info",
      },
      (l) => l.includes("bridge listening"),
      undefined,
      "sut",
    );
    bridges.set(mode, { pid: bridge.proc.pid!, port });
    bridgePids.push(bridge.proc.pid!);
  }
  const { tenant, assistantId } = await createBenchAssistant(api.url);
  const urlOf = (port: number) =>
    `ws://127.0.0.1:${port}/v1/calls?assistantId=${assistantId}&sampleRate=${rate}&token=${tenant.orgToken}`;
  const question = await speech("Tell me more.", rate);

  if (warmupS > 0)
    for (const mode of modes) {
      const { pid, port } = bridges.get(mode)!;
      const n = Math.min(steps[0]!, 50);
      say(`${mode}: warming up with ${n} calls for ${warmupS} s (not reported)`);
      await runStep(
        mode,
        n,
        pid,
        provider.proc.pid!,
        urlOf(port),
        question,
        `http://127.0.0.1:${port}/metrics`,
        warmupS,
      );
      await Bun.sleep(3000);
    }
  const lines: string[] = [];
  const best = new Map(modes.map((m) => [m, 0]));
  for (const n of steps) {
    let passed = false;
    for (const mode of modes) {
      const { pid, port } = bridges.get(mode)!;
      const result = report(
        await runStep(mode, n, pid, provider.proc.pid!, urlOf(port), question, `http://127.0.0.1:${port}/metrics`),
      );
      lines.push(result.line);
      say(result.line);
      if (result.ok) best.set(mode, n);
      passed ||= result.ok;
      await Bun.sleep(3000); // let the step's calls conclude
    }
    const floor = await runFloor(n, question);
    lines.push(floor.line);
    say(floor.line);
    if (!passed) break;
  }
  console.log(
    `\nbench/calls-ws: ${durationS} s per step, ${rate} Hz, each bridge one process on SUT cores ${pinning.sut}, the load on ${pinning.load}; load average at the end ${load()} (a shared machine)\n${lines.join("\n")}\nlargest N with a valid core split, p99 jitter < 10 ms and no frame lost: ${modes.map((m) => `${m} ${best.get(m) || "none"}`).join(", ")}`,
  );
  await api.stop();
} finally {
  await finish();
}
