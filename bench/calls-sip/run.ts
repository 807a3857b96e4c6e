// bench/calls-sip (by hand, not CI): SIPp places N simultaneous calls straight to one bridge (the
// trunk's address and a number of a credential), each with RTP both ways for DURATION seconds, the
// fake voice provider answering. Per N: calls answered, the bridge's RTP (p99 inter-packet jitter,
// loss), call setup (INVITE to 200 OK, p99), the bridge's CPU and memory per call.
//   bun bench/calls-sip/run.ts [--steps 100,200,300,450,600] [--duration 60] [--cps 50]
// The bridge (bun src/bridge/main.ts) and the provider run as their own processes; a scratch database
// is created and dropped. Every call's media goes to this process's one RTP socket (rtp-callers.ts).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { migrateDatabase } from "../../src/db/migrate";
import { createBench, percentile as pct } from "../lib/harness";
import { startApi } from "../../src/server";
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { createTenant } from "../../test/helpers/api";
import { speech } from "../../test/helpers/speech";
import { freePort } from "../../test/helpers/temporal";
import { cpuSeconds, rssMb } from "../calls-ws/proc-stats";
import { startRtpCallers, type MediaStats } from "./rtp-callers";

const { values } = parseArgs({ options: { steps: { type: "string", default: "100,200,300,450,600" }, duration: { type: "string", default: "60" }, cps: { type: "string", default: "50" } } });
const steps = values.steps.split(",").map(Number);
const durationS = Number(values.duration);
const cps = Number(values.cps);
const number = "+15550700001";

const { say, databaseUrl, env, children, spawnBun, finish } = createBench("calls-sip");

/** SIPp to completion: its exit code and every INVITE-to-200 time (ms). */
async function runSipp(n: number, bridgeSipPort: number, rtpPort: number): Promise<{ code: number | null; setups: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), "vas-bench-sipp-"));
  const xml = readFileSync(new URL("./uac-bench.xml", import.meta.url), "utf8").replaceAll("__RTP_PORT__", String(rtpPort)).replaceAll("__HOLD_MS__", String(durationS * 1000));
  writeFileSync(join(dir, "bench.xml"), xml);
  const args = [`127.0.0.1:${bridgeSipPort}`, "-sf", "bench.xml", "-s", number, "-i", "127.0.0.1", "-p", String(await freePort()), "-m", String(n), "-l", String(n), "-r", String(cps), "-nostdin", "-trace_rtt", "-rtt_freq", "1", "-timeout", `${durationS + 60}s`, "-timeout_error", "-trace_err", "-error_file", "errors.log"];
  const proc = spawn("sipp", args, { cwd: dir, stdio: "ignore" });
  children.push(proc);
  const code = await new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const rtt = readdirSync(dir).find((f) => f.endsWith("_rtt.csv"));
  const rows = rtt ? readFileSync(join(dir, rtt), "utf8").trim().split("\n").slice(1) : [];
  if (code !== 0) say(`sipp exited ${code}; its last errors:\n${readFileSync(join(dir, "errors.log"), "utf8").split("\n").slice(-12).join("\n")}`);
  rmSync(dir, { recursive: true, force: true });
  return { code, setups: rows.map((r) => Number(r.split(";")[1])).filter(Number.isFinite) };
}

async function runStep(n: number, bridgePid: number, bridgeSipPort: number, media: Awaited<ReturnType<typeof startRtpCallers>>) {
  media.take(true);
  const rssBefore = rssMb(bridgePid);
  const sipp = runSipp(n, bridgeSipPort, media.port);
  // CPU and memory while every call is up: from the end of the ramp to just before the first BYE
  const rampS = n / cps + 2;
  const started = performance.now();
  let window: { cpu: number; at: number } | null = null;
  let cpuPercent = 0;
  let peakRss = 0;
  let done = false;
  void sipp.finally(() => (done = true));
  while (!done) {
    await Promise.race([sipp, Bun.sleep(5000)]);
    const elapsed = (performance.now() - started) / 1000;
    if (!window && elapsed >= rampS) window = { cpu: cpuSeconds(bridgePid), at: elapsed };
    if (window && elapsed <= durationS - 1 && elapsed > window.at) cpuPercent = ((cpuSeconds(bridgePid) - window.cpu) / (elapsed - window.at)) * 100;
    if (elapsed <= durationS) peakRss = Math.max(peakRss, rssMb(bridgePid));
    const s = media.take();
    say(`N=${n} ${elapsed.toFixed(0)} s: ${media.live} calls with media, ${s.packets} packets, p99 jitter ${pct(s.jitters, 99).toFixed(1)} ms, lost ${s.lost}, bridge CPU ${cpuPercent.toFixed(0)}%, RSS ${peakRss.toFixed(0)} MB`);
  }
  const { code, setups } = await sipp;
  return { n, code, setups, media: media.take(), cpuPercent, rssBefore, peakRss };
}

function report(r: { n: number; code: number | null; setups: number[]; media: MediaStats; cpuPercent: number; rssBefore: number; peakRss: number }) {
  const jitter99 = pct(r.media.jitters, 99);
  const setup99 = pct(r.setups, 99);
  const ok = r.code === 0 && r.setups.length === r.n && r.media.calls === r.n && jitter99 < 10 && r.media.lost === 0 && setup99 < 100;
  return {
    ok,
    line: `N=${String(r.n).padStart(4)}  answered ${r.setups.length}/${r.n} (sipp exit ${r.code})  media ${r.media.calls}  setup p50 ${pct(r.setups, 50).toFixed(0)} p99 ${setup99.toFixed(0)} ms  jitter p50 ${pct(r.media.jitters, 50).toFixed(1)} p99 ${jitter99.toFixed(1)} max ${pct(r.media.jitters, 100).toFixed(1)} ms (our own timer lag p99 ${pct(r.media.clientLag, 99).toFixed(1)} ms)  lost ${r.media.lost}  CPU ${r.cpuPercent.toFixed(0)}% (${(r.cpuPercent / r.n).toFixed(3)}%/call)  RSS ${r.peakRss.toFixed(0)} MB (${(((r.peakRss - r.rssBefore) * 1024) / r.n).toFixed(0)} KB/call)  ${ok ? "OK" : "FAIL"}`,
  };
}

try {
  say(`scratch database, API, fake provider and bridge; steps ${steps.join(", ")} x ${durationS} s, ${cps} calls/s`);
  await migrateDatabase(databaseUrl);
  const chat = await startFakeChatServer();
  const api = await startApi(loadConfig(env), { port: 0 });
  const provider = await spawnBun("bench/calls-ws/fake-provider.ts", { REPLY_CHARS: "300" }, (l) => l.includes('"url"'));
  const sipPort = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    { BRIDGE_PORT: String(await freePort()), SIP_PORT: String(sipPort), SIP_BIND_HOST: "127.0.0.1", SIP_PUBLIC_HOST: "127.0.0.1", RTP_PORT_MIN: "40000", RTP_PORT_MAX: "43999", OPENAI_BASE_URL: chat.baseUrl, OPENAI_REALTIME_URL: JSON.parse(provider.line).url, LOG_LEVEL: "info" },
    (l) => l.includes("sip listening"),
  );
  const { org, P } = await createTenant(api.url, "bench");
  // no registrar: the credential's trunk is this machine, so SIPp's INVITEs match it by address and number
  const credential = await org.post(`${P}/sip/credentials`, { hostname: "127.0.0.1", port: await freePort(), username: "bench", password: "bench", maxAgentTasks: 100_000 });
  const numberRow = await org.post(`${P}/sip/credentials/${credential.body.data.id}/phone-numbers`, { phoneNumber: number });
  const strategy = await org.post(`${P}/llm-generation-strategies`, { name: "fake", type: "openai_realtime", parameters: { vad: { stopDuration: 400 } } });
  await org.post(`${P}/assistants`, { name: "bench", systemPromptGreeting: "x", llmAudioContentGenerationStrategyId: strategy.body.data.id, telephoneNumberId: numberRow.body.data.id });
  await Bun.sleep(2000); // the bridge's next sync picks the credential and number up
  const media = await startRtpCallers(await speech("Tell me more.", 8000));

  const lines: string[] = [];
  let best = 0;
  for (const n of steps) {
    const result = report(await runStep(n, bridge.proc.pid!, sipPort, media));
    lines.push(result.line);
    say(result.line);
    if (!result.ok) break;
    best = n;
    await Bun.sleep(3000); // let the previous step's calls conclude
  }
  media.stop();
  console.log(`\nbench/calls-sip: ${durationS} s per step, PCMU, ${cps} calls/s ramp, bridge on one process\n${lines.join("\n")}\nlargest N with every call answered, p99 jitter < 10 ms, no loss, p99 setup < 100 ms: ${best || "none"}`);
  await api.stop();
  await chat.close();
} finally {
  await finish();
}
