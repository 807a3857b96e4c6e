// bench/calls-ws/conclude (by hand, not CI): does concluding many calls at once disturb the others?
// LIVE callers and ENDING callers talk to one bridge process for BEFORE seconds; then every ENDING
// caller hangs up at the same moment (their recordings, summaries and call_concluded are built and
// written), while the LIVE callers go on. Reports the p99 jitter of the LIVE callers' agent frames in
// the WINDOW seconds before the hang-up (the baseline, same run) and in the WINDOW seconds after it,
// and the bridge's own pacer delays in both. ROUNDS repeats it with fresh ENDING calls (the spread).
//   bun bench/calls-ws/conclude.ts [--live 100] [--ending 50] [--before 60] [--window 10] [--rate 16000] [--format ulaw|pcm16] [--rounds 1]
import { parseArgs } from "node:util";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench, percentile as pct } from "../lib/harness";
import { loadConfig } from "../../src/config";
import { startApi } from "../../src/server";
import { createBenchAssistant } from "./bench-assistant";
import { speech } from "../../test/helpers/speech";
import { freePort } from "../../test/helpers/temporal";
import { createCallerPool, type PoolStats } from "./caller-pool";
import { cpuByProcess, cpuSeconds, rssMb, topCpu } from "./proc-stats";
import { describePacing, pacingSnapshot } from "../lib/pacing";

const { values } = parseArgs({
  options: {
    live: { type: "string", default: "100" },
    ending: { type: "string", default: "50" },
    before: { type: "string", default: "60" },
    window: { type: "string", default: "10" },
    rate: { type: "string", default: "16000" },
    format: { type: "string", default: "ulaw" },
    rounds: { type: "string", default: "1" },
  },
});
const [live, ending, beforeS, windowS, rate, rounds] = [
  values.live,
  values.ending,
  values.before,
  values.window,
  values.rate,
  values.rounds,
].map(Number) as [number, number, number, number, number, number];
const replyChars = 300;
const replyFrames = Math.ceil((replyChars * 12) / 20);

const { say, databaseUrl, env, spawnBun, finish } = createBench("calls-ws-conclude");

/** p99 of the jitters measured in [from, to). */
function windowP99(stats: PoolStats, from: number, to: number) {
  const { jitters, times } = stats.samples;
  const inWindow = jitters.filter((_, i) => times[i]! >= from && times[i]! < to);
  return { p99: pct(inWindow, 99), max: pct(inWindow, 100), frames: inWindow.length };
}

try {
  say(
    `${live} live + ${ending} ending calls at ${rate} Hz for ${beforeS} s, recording ${values.format}; then the ${ending} hang up at once`,
  );
  await migrateDatabase(databaseUrl);
  const api = await startApi(loadConfig(env), { port: 0 });
  const provider = await spawnBun("bench/calls-ws/fake-provider.ts", { REPLY_CHARS: String(replyChars) }, (l) =>
    l.includes('"url"'),
  );
  const providerUrls = JSON.parse(provider.line);
  const bridgePort = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    {
      BRIDGE_PORT: String(bridgePort),
      BRIDGE_WORKERS: "1",
      SIP_ENABLED: "false",
      RECORDING_FORMAT: values.format!,
      OPENAI_BASE_URL: providerUrls.chatUrl,
      OPENAI_REALTIME_URL: providerUrls.url,
      LOG_LEVEL: "info",
    },
    (l) => l.includes("bridge listening"),
  );
  const { tenant, assistantId } = await createBenchAssistant(api.url, {
    callEventHooks: [{ type: "call_concluded", parameters: { url: "http://127.0.0.1:9/hooks" } }],
  });
  const url = `ws://127.0.0.1:${bridgePort}/v1/calls?assistantId=${assistantId}&sampleRate=${rate}&token=${tenant.orgToken}`;
  const question = await speech("Tell me more.", rate);

  const livePool = createCallerPool({ url, sampleRate: rate, question, replyFrames, keepSamples: true });
  const dialAll = async (pool: ReturnType<typeof createCallerPool>, n: number) => {
    for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => pool.dial()));
  };
  await dialAll(livePool, live);
  const metricsUrl = `http://127.0.0.1:${bridgePort}/metrics`;
  const lines: string[] = [];
  for (let round = 1; round <= rounds; round++) {
    // a fresh set of ENDING calls each round; the LIVE ones stay up throughout
    const endingPool = createCallerPool({ url, sampleRate: rate, question, replyFrames, keepSamples: true });
    await dialAll(endingPool, ending);
    const started = performance.now();
    let pacingBefore = await pacingSnapshot(metricsUrl);
    while (performance.now() - started < beforeS * 1000) {
      const left = beforeS * 1000 - (performance.now() - started);
      // the baseline window of the bridge's pacer: the last WINDOW seconds before the hang-up
      if (left <= windowS * 1000 + 5000 && left > windowS * 1000) {
        await Bun.sleep(left - windowS * 1000);
        pacingBefore = await pacingSnapshot(metricsUrl);
        continue;
      }
      await Bun.sleep(Math.min(5000, left));
      say(
        `round ${round}/${rounds} ${((performance.now() - started) / 1000).toFixed(0)}/${beforeS} s: ${livePool.active + endingPool.active} live, bridge RSS ${rssMb(bridge.proc.pid!).toFixed(0)} MB`,
      );
    }
    const cpuBefore = cpuSeconds(bridge.proc.pid!);
    const machineBefore = cpuByProcess();
    const pacingAtHangUp = await pacingSnapshot(metricsUrl);
    const hangUpAt = performance.now();
    const hungUp = endingPool.hangUpAll();
    await Bun.sleep(windowS * 1000);
    await hungUp;
    const cpuAfter = cpuSeconds(bridge.proc.pid!);
    const pacingAfter = await pacingSnapshot(metricsUrl);
    const baseline = windowP99(livePool.stats, hangUpAt - windowS * 1000, hangUpAt);
    const during = windowP99(livePool.stats, hangUpAt, hangUpAt + windowS * 1000);
    const roundLines = [
      `round ${round}: live calls' agent-frame jitter p99 ${baseline.p99.toFixed(1)} ms before (max ${baseline.max.toFixed(1)}, ${baseline.frames} frames), ${during.p99.toFixed(1)} ms after ${ending} calls hung up at once (max ${during.max.toFixed(1)}, ${during.frames} frames)`,
      `         the bridge's media pacer (all calls) before: ${describePacing(pacingBefore, pacingAtHangUp)}`,
      `         the bridge's media pacer (all calls) after:  ${describePacing(pacingAtHangUp, pacingAfter)}`,
      `         top CPU in the window after: ${topCpu(machineBefore, windowS, 6)}`,
      `         lost frames so far ${livePool.stats.lostFrames}, callers' own timer lag p99 ${livePool.stats.clientLag.percentile(99).toFixed(1)} ms, bridge CPU in the window after ${(((cpuAfter - cpuBefore) / windowS) * 100).toFixed(0)}%, RSS ${rssMb(bridge.proc.pid!).toFixed(0)} MB`,
    ];
    for (const line of roundLines) say(line);
    lines.push(...roundLines);
  }
  console.log(
    `\nbench/calls-ws/conclude: ${live} live + ${ending} ending calls, ${beforeS} s before each of ${rounds} hang-ups, ${rate} Hz, recording ${values.format}\n${lines.join("\n")}`,
  );
  await livePool.hangUpAll();
  await api.stop();
} finally {
  await finish();
}
