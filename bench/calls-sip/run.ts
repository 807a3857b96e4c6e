// bench/calls-sip (by hand, not CI): SIPp places N simultaneous calls straight to the bridge (the
// trunk's address and a number of a credential), each with RTP both ways for DURATION seconds, the
// fake voice provider answering. Per bridge worker count and N: calls answered, the bridge's RTP (p99
// inter-packet jitter, loss counting skipped frames), call setup (INVITE to 200 OK, p50/p99), the CPU
// and memory of the bridge's whole process tree (supervisor and workers) per call, and whether starting
// calls moves the jitter of calls already up (measureRampEffect).
//   bun bench/calls-sip/run.ts [--workers 1] [--steps 100,200,400] [--duration 60] [--cps 50] [--keep-going]
//     [--sut-cpus 0 --load-cpus 1] [--floor-duration 20] [--warmup 10]
// Cores (bench/lib/pinning.ts): the bridge (all its processes and threads) and this database's
// Postgres backends on the SUT cores, everything else (this process's RTP callers, SIPp, the fake
// provider, the API) on the load cores; each step prints where each ran, and is INVALID when the load
// side saturated its cores. The floor: after each step the same N calls' RTP, from the same callers,
// through a bare relay on the SUT cores (bare-relay.ts: every packet sent straight back), for
// floor-duration s; its CPU per call beside ours.
// The bridge (bun src/bridge/main.ts with BRIDGE_WORKERS) and the provider run as their own processes;
// a scratch database is created and dropped. With W workers, one SIPp per worker sends N/W calls to
// that worker's SIP port. Every call's media has its own socket in this process (rtp-callers.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench, percentile as pct } from "../lib/harness";
import { describePacing, describeReads, pacingSnapshot } from "../lib/pacing";
import { startApi } from "../../src/server";
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { createTenant } from "../../test/helpers/api";
import { speech } from "../../test/helpers/speech";
import { freePort } from "../../test/helpers/temporal";
import { describeThreads, processTree, treeCpuByThread, treeCpuSeconds, treeRssMb } from "./proc-tree";
import { cpuByProcess, topCpu } from "../calls-ws/proc-stats";
import { generatorsFirst } from "../lib/generator-priority";
import { pinningFrom, pinningOptions, type CoreReport } from "../lib/pinning";
import { startRtpCallers, type MediaStats, type RtpCallers, type WindowStats } from "./rtp-callers";

const { values } = parseArgs({
  options: {
    ...pinningOptions,
    // calls per core: one worker on the SUT core(s)
    workers: { type: "string", default: "1" },
    "floor-duration": { type: "string", default: "20" },
    // seconds of unreported calls on every bridge first, as bench calls-ws does: the first step of a
    // run otherwise pays the bridge's warm-up (JIT, its first Postgres connections and provider sockets)
    warmup: { type: "string", default: "10" },
    steps: { type: "string", default: "100,200,400" },
    duration: { type: "string", default: "60" },
    cps: { type: "string", default: "50" },
    // run every step even after one misses (a shared, noisy machine)
    "keep-going": { type: "boolean", default: false },
  },
});
const workerCounts = values.workers.split(",").map(Number);
const steps = values.steps.split(",").map(Number);
const durationS = Number(values.duration);
const warmupS = Number(values.warmup);
const cps = Number(values.cps);
const number = "+15550700001";

const pinning = pinningFrom(values);
const floorS = Number(values["floor-duration"]);
const { say, databaseUrl, env, children, spawnBun, watch, finish } = createBench("calls-sip", pinning);

/** SIPp to completion: `ports.length` calls held `holdS` s, each with its own RTP port; its exit code and every INVITE-to-200 time (ms). */
async function runSipp(
  bridgeSipPort: number,
  ports: number[],
  rate: number,
  holdS: number,
): Promise<{ code: number | null; setups: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "vas-bench-sipp-"));
  const xml = readFileSync(new URL("./uac-bench.xml", import.meta.url), "utf8").replaceAll(
    "__HOLD_MS__",
    String(holdS * 1000),
  );
  writeFileSync(join(dir, "bench.xml"), xml);
  writeFileSync(join(dir, "ports.csv"), `SEQUENTIAL\n${ports.map((p) => `${p};`).join("\n")}\n`);
  const n = String(ports.length);
  const args = [
    `127.0.0.1:${bridgeSipPort}`,
    "-sf",
    "bench.xml",
    "-inf",
    "ports.csv",
    "-s",
    number,
    "-i",
    "127.0.0.1",
    "-p",
    String(await freePort()),
    "-m",
    n,
    "-l",
    n,
    "-r",
    String(rate),
    "-nostdin",
    "-trace_rtt",
    "-rtt_freq",
    "1",
    "-timeout",
    `${holdS + 60}s`,
    "-timeout_error",
    "-trace_err",
    "-error_file",
    "errors.log",
  ];
  const proc = spawn("sipp", args, { cwd: dir, stdio: "ignore" });
  children.push(proc);
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const rtt = readdirSync(dir).find((f) => f.endsWith("_rtt.csv"));
  const rows = rtt ? readFileSync(join(dir, rtt), "utf8").trim().split("\n").slice(1) : [];
  if (code !== 0)
    say(
      `sipp exited ${code}; its last errors:\n${readFileSync(join(dir, "errors.log"), "utf8").split("\n").slice(-12).join("\n")}`,
    );
  rmSync(dir, { recursive: true, force: true });
  return { code, setups: rows.map((r) => Number(r.split(";")[1])).filter(Number.isFinite) };
}

type Window = WindowStats & { pacing: string };
type RampEffect = { ramp: Window; steady: Window };

/**
 * Whether starting calls moves the jitter of calls already up: the calls with media once half of the
 * N have it, measured while the rest start (until every call has media), then, a second later, over
 * as long a window with no call starting. Both windows end before the first call hangs up (SIPp's
 * start + the hold), so a ramp too long for that leaves a shorter steady window (its length is shown).
 */
async function measureRampEffect(
  media: RtpCallers,
  n: number,
  label: string,
  ended: () => boolean,
  metricsUrl: string,
): Promise<RampEffect | null> {
  const firstHangup = performance.now() + durationS * 1000 - 500;
  const until = async (reached: () => boolean) => {
    while (!reached() && !ended() && performance.now() < firstHangup) await Bun.sleep(50);
    return reached();
  };
  if (!(await until(() => media.stats.calls >= Math.ceil(n / 2)))) return null;
  const rampWatch = media.watch();
  const rampPacing = await pacingSnapshot(metricsUrl);
  say(`${label}: ${rampWatch.cohort.size} calls up; measuring them while the other ${n - media.stats.calls} start`);
  await until(() => media.stats.calls >= n);
  const rampEnd = await pacingSnapshot(metricsUrl);
  const ramp = { ...rampWatch.close(), pacing: describePacing(rampPacing, rampEnd) };
  say(`${label}: ramp window ${ramp.seconds.toFixed(1)} s over; a second to settle, then as long a steady window`);
  await Bun.sleep(1000);
  const steadyWatch = media.watch(rampWatch.cohort);
  const steadyPacing = await pacingSnapshot(metricsUrl);
  const steadyEnd = performance.now() + ramp.seconds * 1000;
  await until(() => performance.now() >= steadyEnd);
  const steady = steadyWatch.close();
  return { ramp, steady: { ...steady, pacing: describePacing(steadyPacing, await pacingSnapshot(metricsUrl)) } };
}

/** A watch window's figures for the report line. */
const windowLine = (w: Window) =>
  `p99 ${w.jitters.percentile(99).toFixed(1)} ms, lost ${w.lost} (${w.seconds.toFixed(1)} s, ${w.jitters.count} packets, bench lag p99 ${w.clientLag.percentile(99).toFixed(1)} ms; bridge ${w.pacing})`;

type StepResult = {
  workers: number;
  n: number;
  code: number | null;
  setups: number[];
  inBridge: typeof answeredInBridge;
  media: MediaStats;
  rampEffect: RampEffect | null;
  /** where the step's call starts read their routes and assistants */
  reads: string;
  cpuPercent: number;
  /** the bridge's CPU by thread name over the same window */
  threads: string;
  rssBefore: number;
  peakRss: number;
  /** where each process ran over the step, and whether the load side kept up */
  cores: CoreReport;
  floor: Floor;
  load: string;
};

/** One SIPp per worker, each with its share of the callers' calls, their ports and the rate. */
function placeCalls(workers: number, sipPort: number, media: RtpCallers, holdS: number) {
  const shares = Array.from({ length: workers }, (_, w) => media.ports.filter((_p, i) => i % workers === w));
  return Promise.all(shares.map((ports, w) => runSipp(sipPort + w, ports, cps / workers, holdS)));
}

/** Calls on a fresh bridge that are not reported, so that no step pays its warm-up. */
async function warmUp(workers: number, n: number, sipPort: number, question: Int16Array) {
  say(`W=${workers}: warming up with ${n} calls for ${warmupS} s (not reported)`);
  const media = await startRtpCallers(question, n);
  await placeCalls(workers, sipPort, media, warmupS);
  media.stop();
  await Bun.sleep(3000); // let them conclude
}

async function runStep(
  workers: number,
  n: number,
  bridgePid: number,
  sipPort: number,
  question: Int16Array,
  metricsUrl: string,
): Promise<StepResult> {
  const label = `W=${workers} N=${n}`;
  say(`${label}: binding ${n} RTP sockets, then SIPp at ${cps} calls/s, each call held ${durationS} s`);
  const restorePriority = generatorsFirst();
  const cores = watch([{ label: "bridge (every process)", side: "sut", pids: () => processTree(bridgePid) }]);
  const readsBefore = await pacingSnapshot(metricsUrl);
  const media = await startRtpCallers(question, n);
  answeredInBridge.length = 0;
  const rssBefore = treeRssMb(bridgePid);
  const sipps = placeCalls(workers, sipPort, media, durationS);
  // CPU and memory while every call is up: from the end of the ramp to just before the first BYE, read
  // at those two moments (a reading every second took milliseconds of this event loop, which times the
  // RTP); the progress lines show it so far with their own 5 s readings
  const rampS = n / cps + 2;
  const started = performance.now();
  const reading = () => ({ at: (performance.now() - started) / 1000, cpu: treeCpuSeconds(bridgePid) });
  type Reading = ReturnType<typeof reading>;
  const percentOfCore = (from: Reading, to: Reading) => ((to.cpu - from.cpu) / (to.at - from.at)) * 100;
  const readAt = (seconds: number) =>
    Bun.sleep(Math.max(0, seconds * 1000 - (performance.now() - started))).then(() => ({
      ...reading(),
      threads: treeCpuByThread(bridgePid),
    }));
  const windowStart = readAt(rampS);
  const windowEnd = durationS - 1 > rampS ? readAt(durationS - 1) : null;
  let startReading: Reading | null = null;
  void windowStart.then((r) => {
    startReading = r;
  });
  let cpuPercent = 0;
  let peakRss = 0;
  let done = false;
  void sipps.finally(() => (done = true));
  const rampEffect = measureRampEffect(media, n, label, () => done, metricsUrl);
  // what else used the machine: a bridge short of CPU while its own share is low waits for a core
  let machine = { at: performance.now(), cpu: cpuByProcess() };
  while (!done) {
    await Promise.race([sipps, Bun.sleep(5000)]);
    const elapsed = (performance.now() - started) / 1000;
    if (elapsed <= durationS) peakRss = Math.max(peakRss, treeRssMb(bridgePid));
    if (startReading && elapsed <= durationS - 1) cpuPercent = percentOfCore(startReading, reading());
    const top = topCpu(machine.cpu, (performance.now() - machine.at) / 1000);
    machine = { at: performance.now(), cpu: cpuByProcess() };
    say(
      `${label} ${elapsed.toFixed(0)} s: ${media.live} calls with media, p99 jitter (5 s) ${media.recent().percentile(99).toFixed(1)} ms, lost ${media.stats.lost}, bridge CPU ${cpuPercent.toFixed(0)}%, RSS ${peakRss.toFixed(0)} MB; top CPU (5 s): ${top}`,
    );
  }
  let threads = "";
  const [start, end] = await Promise.all([windowStart, windowEnd]);
  if (end) {
    cpuPercent = percentOfCore(start, end);
    threads = describeThreads(start.threads, end.threads, end.at - start.at);
  }
  const results = await sipps;
  const effect = await rampEffect;
  const reads = describeReads(readsBefore, await pacingSnapshot(metricsUrl));
  media.stop();
  const coreReport = cores.stop();
  restorePriority();
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  await Bun.sleep(3000); // let the step's calls conclude
  const floor = await runFloor(n, question, bridgePid);
  const code = results.every((r) => r.code === 0) ? 0 : (results.find((r) => r.code !== 0)?.code ?? null);
  return {
    workers,
    n,
    code,
    setups: results.flatMap((r) => r.setups),
    inBridge: [...answeredInBridge],
    media: media.stats,
    rampEffect: effect,
    reads,
    cpuPercent,
    threads,
    rssBefore,
    peakRss,
    cores: coreReport,
    floor,
    load,
  };
}

type Floor = { cpuPercent: number; jitter99: number; lost: number; calls: number; cores: CoreReport };

/**
 * The floor: `n` calls' RTP from the same callers through a bare relay on the SUT cores (every packet
 * sent straight back, nothing else) for floor-duration s; its CPU from the second second on.
 */
async function runFloor(n: number, question: Int16Array, bridgePid: number): Promise<Floor> {
  say(`N=${n}: the floor, a bare relay on the SUT cores, ${n} calls for ${floorS} s`);
  const relay = await spawnBun(
    "bench/calls-sip/bare-relay.ts",
    { CALLS: String(n) },
    (l) => l.includes('"ports"'),
    undefined,
    "sut",
  );
  const restorePriority = generatorsFirst();
  const media = await startRtpCallers(question, n);
  const cores = watch([
    { label: "bare relay", side: "sut", pids: () => [relay.proc.pid!] },
    { label: "bridge (idle meanwhile)", side: "sut", pids: () => processTree(bridgePid) },
  ]);
  media.sendTo(JSON.parse(relay.line).ports);
  await Bun.sleep(2000);
  const from = { at: performance.now(), cpu: treeCpuSeconds(relay.proc.pid!) };
  await Bun.sleep(Math.max(1, floorS - 2) * 1000);
  const cpuPercent = ((treeCpuSeconds(relay.proc.pid!) - from.cpu) / ((performance.now() - from.at) / 1000)) * 100;
  media.stop();
  const report = cores.stop();
  restorePriority();
  relay.proc.kill("SIGTERM");
  return {
    cpuPercent,
    jitter99: media.stats.jitters.percentile(99),
    lost: media.stats.lost,
    calls: media.stats.calls,
    cores: report,
  };
}

/** The bridge's share of setup: from the INVITE reaching the call handler to its 200 OK, and its parts. */
function inBridge(rows: StepResult["inBridge"]) {
  const p = (k: keyof StepResult["inBridge"][number], q: number) =>
    pct(
      rows.map((r) => r[k]),
      q,
    ).toFixed(0);
  return `p50 ${p("setupMs", 50)} p99 ${p("setupMs", 99)} ms, routed by p50 ${p("routedMs", 50)} p99 ${p("routedMs", 99)}, reserved by p50 ${p("reservedMs", 50)} p99 ${p("reservedMs", 99)}`;
}

function report(r: StepResult) {
  const jitter99 = r.media.jitters.percentile(99);
  const setup99 = pct(r.setups, 99);
  const ok =
    r.cores.valid &&
    r.code === 0 &&
    r.setups.length === r.n &&
    r.media.calls === r.n &&
    jitter99 < 10 &&
    r.media.lost === 0 &&
    setup99 < 100 &&
    r.rampEffect !== null &&
    r.rampEffect.ramp.jitters.percentile(99) < 10 &&
    r.rampEffect.ramp.lost === 0;
  const perCall = r.cpuPercent / r.n;
  return {
    ok,
    line:
      `W=${r.workers} N=${String(r.n).padStart(4)}  answered ${r.setups.length}/${r.n} (sipp exit ${r.code})  media ${r.media.calls}  ` +
      `setup p50 ${pct(r.setups, 50).toFixed(0)} p99 ${setup99.toFixed(0)} ms (in the bridge ${inBridge(r.inBridge)}; ${r.reads})  jitter p50 ${r.media.jitters.percentile(50).toFixed(1)} p99 ${jitter99.toFixed(1)} ` +
      `max ${r.media.jitters.max.toFixed(1)} ms (bench timer lag p99 ${r.media.clientLag.percentile(99).toFixed(1)} ms)  lost ${r.media.lost}  ` +
      `CPU ${r.cpuPercent.toFixed(0)}% of a core (${perCall.toFixed(3)}%/call, ${r.workers > 1 ? `${(r.cpuPercent / r.workers).toFixed(0)}% per worker` : "one process"}; threads: ${r.threads || "-"})  ` +
      `RSS ${r.peakRss.toFixed(0)} MB (${(((r.peakRss - r.rssBefore) * 1024) / r.n).toFixed(0)} KB/call)  ${ok ? "OK" : "FAIL"}\n` +
      (r.rampEffect
        ? `      the ${r.rampEffect.ramp.calls} calls up at half the ramp: while the rest start ${windowLine(r.rampEffect.ramp)}; after ${windowLine(r.rampEffect.steady)}`
        : "      fewer than half the calls got media: no ramp window") +
      `\n      floor (bare relay, ${r.floor.calls}/${r.n} calls for ${floorS} s): CPU ${r.floor.cpuPercent.toFixed(0)}% of a core (${(r.floor.cpuPercent / r.n).toFixed(3)}%/call; ours ${(r.cpuPercent / Math.max(r.floor.cpuPercent, 0.01)).toFixed(1)}x), jitter p99 ${r.floor.jitter99.toFixed(1)} ms, lost ${r.floor.lost}${r.floor.cores.valid ? "" : " INVALID (load side)"}` +
      `\n      load average ${r.load} (a shared machine)\n${r.cores.text}\n      floor ${r.floor.cores.text}`,
  };
}

// the bridge's own account of each answer (its `answered` log line): INVITE handled to 200 OK sent
const answeredInBridge: { setupMs: number; routedMs: number; reservedMs: number }[] = [];

/** The bridge with `workers` workers, resolved once every worker's SIP stack listens; its metrics URL. */
async function startBridge(
  workers: number,
  sipPort: number,
  realtimeUrl: string,
  chatUrl: string,
): Promise<{ proc: ChildProcess; metricsUrl: string }> {
  const port = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    {
      BRIDGE_WORKERS: String(workers),
      BRIDGE_PORT: String(port),
      SIP_PORT: String(sipPort),
      SIP_BIND_HOST: "127.0.0.1",
      SIP_PUBLIC_HOST: "127.0.0.1",
      RTP_PORT_MIN: "20000",
      RTP_PORT_MAX: "27999",
      OPENAI_BASE_URL: chatUrl,
      OPENAI_REALTIME_URL: realtimeUrl,
      LOG_LEVEL: "info",
    },
    (l) => l.includes("sip listening"),
    (l) => {
      if (!l.includes('"event":"answered"')) return;
      const { setupMs, routedMs, reservedMs } = JSON.parse(l);
      answeredInBridge.push({ setupMs, routedMs, reservedMs });
    },
    "sut",
  );
  // the other workers listen within moments of the first; then each sync picks the credential up
  await Bun.sleep(3000);
  return { proc: bridge.proc, metricsUrl: `http://127.0.0.1:${port}/metrics` };
}

/** SIGTERM (the bridge ends its calls), SIGKILL when it has not exited a minute later. */
async function stopBridge(proc: ChildProcess) {
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGTERM");
  if ((await Promise.race([exited, Bun.sleep(60_000).then(() => "late")])) !== "late") return;
  say("the bridge did not stop within 60 s of SIGTERM: killed");
  proc.kill("SIGKILL");
  await exited;
}

try {
  say(
    `scratch database, API, fake provider; workers ${workerCounts.join(", ")}; steps ${steps.join(", ")} x ${durationS} s, ${cps} calls/s`,
  );
  await migrateDatabase(databaseUrl);
  const chat = await startFakeChatServer();
  const api = await startApi(loadConfig(env), { port: 0 });
  const provider = await spawnBun("bench/calls-ws/fake-provider.ts", { REPLY_CHARS: "300" }, (l) =>
    l.includes('"url"'),
  );
  const realtimeUrl = JSON.parse(provider.line).url;
  const { org, P } = await createTenant(api.url, "bench");
  // no registrar: the credential's trunk is this machine, so SIPp's INVITEs match it by address and number
  const credential = await org.post(`${P}/sip/credentials`, {
    hostname: "127.0.0.1",
    port: await freePort(),
    username: "bench",
    password: "bench",
    maxAgentTasks: 100_000,
  });
  const numberRow = await org.post(`${P}/sip/credentials/${credential.body.data.id}/phone-numbers`, {
    phoneNumber: number,
  });
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "fake",
    type: "openai_realtime",
    parameters: { vad: { stopDuration: 400 } },
  });
  await org.post(`${P}/assistants`, {
    name: "bench",
    systemPromptGreeting: "x",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    telephoneNumberId: numberRow.body.data.id,
  });
  const question = await speech("Tell me more.", 8000);

  const lines: string[] = [];
  const best = new Map<number, number>();
  for (const workers of workerCounts) {
    const sipPort = 15_060 + (process.pid % 100) * 10;
    const bridge = await startBridge(workers, sipPort, realtimeUrl, chat.baseUrl);
    if (warmupS > 0) await warmUp(workers, Math.min(steps[0]!, 50), sipPort, question);
    for (const n of steps) {
      const result = report(await runStep(workers, n, bridge.proc.pid!, sipPort, question, bridge.metricsUrl));
      lines.push(result.line);
      say(result.line);
      if (!result.ok && !values["keep-going"]) break;
      if (result.ok && best.get(workers) === steps[steps.indexOf(n) - 1]) best.set(workers, n);
    }
    await stopBridge(bridge.proc);
  }
  console.log(
    `\nbench/calls-sip: ${durationS} s per step, PCMU, ${cps} calls/s ramp, CPU and RSS of the bridge's whole process tree; SUT cores ${pinning.sut}, load cores ${pinning.load}\n${lines.join("\n")}\n` +
      workerCounts
        .map(
          (w) =>
            `BRIDGE_WORKERS=${w}: largest N with a valid core split, every call answered, p99 jitter < 10 ms, no loss, p99 setup < 100 ms, and p99 jitter < 10 ms with no loss on the calls already up while the rest start: ${best.get(w) ?? "none"}`,
        )
        .join("\n"),
  );
  await api.stop();
  await chat.close();
} catch (error) {
  say(`failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  await finish();
}
