// bench/handoff (by hand, not CI): what a handoff costs the caller (issue 42, docs/handoff.md). Per
// configuration CALLS callers at once reach a front desk (openai_realtime) whose greeting comes with a
// handoff tool call; the desk says the message, then the destination greets. Measured at the caller:
// the silence from the end of the message to the destination's first audio, and our share of it, that
// silence minus the destination provider's own time to first audio (measured at the fake, per call).
//   bun run bench handoff [--calls 50] [--realtime-delay 300] [--tts-delay 150] [--sut-cpus 0 --load-cpus 1]
// Configurations: same engine (Realtime to Realtime) and cross engine (Realtime to pipeline). The
// bridge (`bun src/bridge/main.ts`) runs on the SUT cores; the fakes (Realtime hub, ElevenLabs speaking
// one cached sentence, Deepgram, chat completions for summaries), the API and the callers in this
// process on the load cores. The caller plays what it receives like a phone without a jitter buffer:
// each 20 ms frame at its arrival or right after the one before, whichever is later (the bridge sends
// frames up to BRIDGE_MEDIA_LEAD_MS ahead), and the handoff's silence is the longest gap in that play-out
// after the handoff's tool_call event.
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { loadConfig } from "../../src/config";
import { migrateDatabase } from "../../src/db/migrate";
import { startApi } from "../../src/server";
import { startFakeChatServer } from "../../test/fakes/chat-completions-server";
import { startFakeDeepgram } from "../../test/fakes/deepgram-server";
import { startFakeElevenLabs } from "../../test/fakes/elevenlabs-server";
import { startFakeRealtimeHub } from "../../test/fakes/openai-realtime-server";
import { wallClock } from "../../test/fakes/wall-clock";
import { createTenant, type Tenant } from "../../test/helpers/api";
import { freePort } from "../../test/helpers/temporal";
import { keys } from "../../test/voice/pipeline-fakes";
import { createBench, percentile as pct } from "../lib/harness";
import { pinningFrom, pinningOptions } from "../lib/pinning";
import { processTree } from "../calls-sip/proc-tree";

const { values } = parseArgs({
  options: {
    ...pinningOptions,
    calls: { type: "string", default: "50" },
    "realtime-delay": { type: "string", default: "300" },
    "tts-delay": { type: "string", default: "150" },
  },
});
const calls = Number(values.calls);
const realtimeDelayMs = Number(values["realtime-delay"]);
const ttsDelayMs = Number(values["tts-delay"]);
const rate = 8000;
const frameMs = 20;
const greeting = "Hello, this is the Acme front desk. Let me hand you over to billing, who can help with that.";
const message = "One moment please, billing takes over now.";
const destinationGreeting = "Billing here for call {{call_id}}.";
const callIdIn = (text: string) => /call ([0-9a-f-]{36})/.exec(text)?.[1] ?? null;
/** The words the bridge asks a Realtime model to say verbatim ("…word for word, and nothing else: <words>"). */
const verbatim = (instructions: string) =>
  instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length);

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const pinning = pinningFrom(values);
const { say, databaseUrl, env, spawnBun, watch, finish } = createBench("handoff", pinning);

/** The destination provider's time to first audio per call id (wall clock ms), as its fake measured it. */
const providerFirstAudioMs = new Map<string, number>();

async function post(tenant: Tenant, path: string, body: object) {
  const created = await tenant.org.post(`${tenant.P}/${path}`, body);
  if (created.status !== 201) throw new Error(`${path}: ${JSON.stringify(created.body)}`);
  return created.body.data.id as string;
}

type Hub = Awaited<ReturnType<typeof startFakeRealtimeHub>>;

/** A Realtime destination whose fake notes, per call, from response.created to its first audio. */
function realtimeDestination(hub: Hub) {
  let greetingOf: string | null = null;
  const created = new Map<string, { callId: string; at: number }>();
  return hub.add({
    responseDelayMs: realtimeDelayMs,
    onInstructions: (instructions) => {
      greetingOf = callIdIn(instructions);
      return { text: verbatim(instructions) };
    },
    onSend: (event) => {
      const response = event.response as { id: string } | undefined;
      if (event.type === "response.created" && response && greetingOf) {
        created.set(response.id, { callId: greetingOf, at: wallClock() });
        greetingOf = null;
      }
      const started = created.get(String(event.response_id));
      if (event.type === "response.audio.delta" && started) {
        created.delete(String(event.response_id));
        providerFirstAudioMs.set(started.callId, wallClock() - started.at);
      }
    },
  });
}

async function assistants(tenant: Tenant, hub: Hub) {
  const realtime = (model: string) =>
    post(tenant, "llm-generation-strategies", { name: model, type: "openai_realtime", parameters: { model } });
  const billingRealtime = await post(tenant, "assistants", {
    name: "billing",
    systemPrompt: "You are billing.",
    systemPromptGreeting: destinationGreeting,
    llmAudioContentGenerationStrategyId: await realtime(realtimeDestination(hub).model),
  });
  const billingPipeline = await post(tenant, "assistants", {
    name: "billing",
    systemPrompt: "You are billing.",
    systemPromptGreeting: destinationGreeting,
    llmAudioContentGenerationStrategyId: await post(tenant, "llm-generation-strategies", {
      name: "pipeline",
      type: "pipeline",
      parameters: {},
    }),
  });
  // the desk greets and hands over in the same response; the message it is asked to say, it says
  const desk = hub.add({
    onInstructions: (instructions) => {
      const words = verbatim(instructions);
      return words === greeting
        ? { text: greeting, toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] }
        : { text: words };
    },
  });
  const deskStrategy = await realtime(desk.model);
  const deskTo = (assistantId: string) =>
    post(tenant, "assistants", {
      name: "desk",
      systemPrompt: "You are the front desk.",
      systemPromptGreeting: greeting,
      llmAudioContentGenerationStrategyId: deskStrategy,
      extensions: [{ type: "handoff", parameters: { destinations: [{ assistantId, description: "bills", message }] } }],
    });
  return [
    { name: "same engine (Realtime -> Realtime)", deskId: await deskTo(billingRealtime) },
    { name: "cross engine (Realtime -> pipeline)", deskId: await deskTo(billingPipeline) },
  ];
}

type CallResult = { callId: string; silenceMs: number } | { failed: string };

/** One caller: streams silence, plays what it hears as a phone would, hangs up once billing has greeted. */
function call(url: string): Promise<CallResult> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.binaryType = "nodebuffer";
    let callId = "";
    let playEnd = 0;
    let handedAt: number | null = null;
    let longestGap = 0;
    const silent = Buffer.alloc((rate / 1000) * frameMs * 2);
    const pump = setInterval(() => ws.readyState === WebSocket.OPEN && ws.send(silent), frameMs);
    const timeout = setTimeout(() => done({ failed: "no destination greeting within 30 s" }), 30_000);
    const done = (result: CallResult) => {
      clearInterval(pump);
      clearTimeout(timeout);
      ws.close();
      resolve(result);
    };
    ws.on("message", (data: Buffer, binary) => {
      const now = wallClock();
      if (binary) {
        const playStart = Math.max(now, playEnd);
        if (handedAt !== null && playEnd > 0) longestGap = Math.max(longestGap, playStart - playEnd);
        playEnd = playStart + frameMs;
        return;
      }
      const event = JSON.parse(data.toString());
      if (event.type === "ready") callId = event.callId;
      if (event.type === "tool_call" && event.name === "handoff") handedAt = now;
      if (event.type === "transcript" && event.final && event.role === "ASSISTANT" && event.text.startsWith("Billing"))
        done({ callId, silenceMs: longestGap });
      if (event.type === "ended") done({ failed: `ended: ${event.reason}` });
    });
    ws.on("error", (error) => done({ failed: error.message }));
  });
}

async function runConfiguration(bridgeUrl: string, tenant: Tenant, deskId: string, bridgePid: number) {
  const cores = watch([{ label: "bridge", side: "sut", pids: () => processTree(bridgePid) }]);
  const url = `${bridgeUrl}/v1/calls?assistantId=${deskId}&sampleRate=${rate}&token=${tenant.orgToken}`;
  const results: Promise<CallResult>[] = [];
  // all calls are live together: their greetings, and so their handoffs, fall within a second
  for (let i = 0; i < calls; i++) {
    results.push(call(url));
    if (i % 10 === 9) await Bun.sleep(100);
  }
  const done = await Promise.all(results);
  return { done, load: load(), cores: cores.stop() };
}

const ms = (x: number) => x.toFixed(0).padStart(5);
const line = (xs: number[]) =>
  xs.length ? `p50 ${ms(pct(xs, 50))}  p95 ${ms(pct(xs, 95))}  p99 ${ms(pct(xs, 99))}  max ${ms(pct(xs, 100))}` : "-";

try {
  say(
    `machine: ${cpus().length} cores, load average ${load()}; ${calls} calls at once per configuration; Realtime first audio ${realtimeDelayMs} ms, TTS ${ttsDelayMs} ms`,
  );
  await migrateDatabase(databaseUrl);
  const api = await startApi(loadConfig(env), { port: 0 });
  const tenant = await createTenant(api.url, "bench");
  const [hub, chat, stt, tts] = await Promise.all([
    startFakeRealtimeHub(),
    startFakeChatServer(),
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY }),
    // every greeting is new (its call id): one cached sentence is spoken for each, no espeak per call
    startFakeElevenLabs({
      apiKey: keys.ELEVENLABS_API_KEY,
      firstAudioDelayMs: ttsDelayMs,
      speakAs: () => "Billing here.",
    }),
  ]);
  const port = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    {
      ...keys,
      BRIDGE_PORT: String(port),
      OPENAI_REALTIME_URL: hub.url,
      OPENAI_BASE_URL: chat.baseUrl,
      DEEPGRAM_URL: stt.url,
      ELEVENLABS_URL: tts.url,
      LOG_LEVEL: "info",
    },
    (l) => l.includes("bridge listening"),
    undefined,
    "sut",
  );
  const report: string[] = [];
  for (const { name, deskId } of await assistants(tenant, hub)) {
    say(`${name}: ${calls} calls`);
    const {
      done,
      load: after,
      cores,
    } = await runConfiguration(`ws://127.0.0.1:${port}`, tenant, deskId, bridge.proc.pid!);
    const ok = done.filter((r): r is { callId: string; silenceMs: number } => "silenceMs" in r);
    const failed = done.filter((r): r is { failed: string } => "failed" in r);
    for (const timing of tts.streams.flatMap((s) => s.timings)) {
      const id = callIdIn(timing.text);
      if (id && timing.firstAudioAt !== null) providerFirstAudioMs.set(id, timing.firstAudioAt - timing.receivedAt);
    }
    const measured = ok.filter((r) => providerFirstAudioMs.has(r.callId));
    const provider = measured.map((r) => providerFirstAudioMs.get(r.callId)!);
    const ours = measured.map((r) => r.silenceMs - providerFirstAudioMs.get(r.callId)!);
    report.push(
      `${name}: ${ok.length} calls handed over, ${failed.length} failed${failed.length ? ` (${[...new Set(failed.map((f) => f.failed))].join("; ")})` : ""}; load average after ${after}`,
      `  silence after the message      ${line(ok.map((r) => r.silenceMs))}`,
      `  provider's first audio         ${line(provider)}`,
      `  ours (silence - provider)      ${line(ours)}   target p99 < 50 ms: ${ours.length && pct(ours, 99) < 50 ? "met" : "missed"}`,
      `  cores: ${cores.text}`,
    );
  }
  console.log(
    [
      "",
      `bench/handoff: ${calls} calls at once per configuration, 8 kHz; fake Realtime first audio ${realtimeDelayMs} ms, fake TTS first audio ${ttsDelayMs} ms (ms below)`,
      `machine: ${cpus().length} cores, load average at the end ${load()}`,
      ...report,
    ].join("\n"),
  );
  await api.stop();
  await Promise.all([hub.close(), chat.close(), stt.close(), tts.close()]);
} catch (error) {
  say(`failed: ${(error as Error).stack ?? error}`);
  process.exitCode = 1;
} finally {
  await finish();
}
