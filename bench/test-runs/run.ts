// bench/test-runs: one test run as CI starts it, through every real part (the API, NOTIFY, Temporal, the
// worker's workflow and activities, the bridge's websocket, Postgres) against a fake LLM in this process.
//   bun run bench test-runs [--scenarios 100] [--turns 6] [--concurrency 20] [--llm-ms 100] [--audio-turns 3]
// Half the scenarios are scripted callers, half simulated ones (SIMULATOR_MODEL), every result is judged
// once (JUDGE_MODEL). Reports the run's wall time and our own time per turn, measured at the fake LLM:
// from the moment it finished the agent's reply to turn k to the moment the request for turn k+1
// arrived, i.e. the bridge's turn_done, the caller in the worker, its user_text and the bridge's next
// request (for a simulated caller the fake's time answering the simulator is taken out). The fake's
// deliberate latency (--llm-ms before the first token) is thereby never counted as ours.
// Then one audio scenario (the Deepgram and ElevenLabs fakes here): its wall time against the length
// of what was said in it.
// The API and the fake LLM run in this process, the bridge and the worker in their own; a scratch
// database is created and dropped, a Temporal dev server started unless TEMPORAL_ADDRESS is set.
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { startApi } from "../../src/server";
import { scriptedReplies, startFakeChatServer, type ChatRequest } from "../../test/fakes/chat-completions-server";
import { startFakeDeepgram } from "../../test/fakes/deepgram-server";
import { startFakeElevenLabs } from "../../test/fakes/elevenlabs-server";
import { speech } from "../../test/helpers/speech";
import { keys } from "../../test/voice/pipeline-fakes";
import { createTenant } from "../../test/helpers/api";
import { freePort, startDevServer, startWorker } from "../../test/helpers/temporal";
import { cpuSeconds } from "../calls-ws/proc-stats";
import { createBench, percentile } from "../lib/harness";

const { values } = parseArgs({
  options: {
    scenarios: { type: "string", default: "100" },
    turns: { type: "string", default: "6" },
    concurrency: { type: "string", default: "20" },
    "llm-ms": { type: "string", default: "100" },
    "audio-turns": { type: "string", default: "3" },
  },
});
const N = Number(values.scenarios);
const T = Number(values.turns);
const C = Number(values.concurrency);
const llmMs = Number(values["llm-ms"]);
const audioTurns = Array.from({ length: Number(values["audio-turns"]) }, (_, k) => `This is spoken turn ${k + 1}.`);
const SIMULATOR = "bench-simulator";
const JUDGE = "bench-judge";

const { say, databaseUrl, env, spawnBun, finish } = createBench("test-runs");
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

try {
  say(`load average ${load()}; scratch database, Temporal, the API, the fake LLM, the bridge and the worker`);
  await migrateDatabase(databaseUrl);
  const temporal = process.env.TEMPORAL_ADDRESS
    ? { address: process.env.TEMPORAL_ADDRESS, pid: 0 }
    : await startDevServer();
  const chat = await startFakeChatServer();
  chat.firstTokenDelayMs = llmMs;
  chat.chunkChars = 10_000; // a reply in one chunk: the fake's own streaming is not what is measured
  chat.reply = scriptedReplies([]); // echoes each turn: "You said: …"
  chat.complete = (body) => {
    if (body.model === JUDGE)
      return { content: JSON.stringify({ criteria: [{ name: "polite", verdict: "pass", reason: "it was" }] }) };
    if (body.model !== SIMULATOR) return { content: JSON.stringify(chat.summary) }; // the call's summary
    const scenario = /Scenario (\d+):/.exec(body.messages[0].content)?.[1];
    const turn = body.messages.filter((m: { role: string }) => m.role === "assistant").length + 1;
    return { content: `Scenario ${scenario} turn ${turn}.` };
  };
  // the audio scenario: the bridge's STT hears the caller's lines, the caller's STT the agent's replies,
  // one TTS speaks for both (espeak)
  const [bridgeEars, callerEars, tts] = await Promise.all([
    startFakeDeepgram({ apiKey: keys.DEEPGRAM_API_KEY, transcript: (_s, turn) => audioTurns[turn] ?? "" }),
    startFakeDeepgram({ transcript: () => "heard" }),
    startFakeElevenLabs(),
  ]);
  Object.assign(env, keys);
  Object.assign(process.env, keys);
  const api = await startApi(loadConfig(env), { port: 0 });
  const bridgePort = await freePort();
  const bridge = await spawnBun(
    "src/bridge/main.ts",
    {
      ...keys,
      BRIDGE_PORT: String(bridgePort),
      BRIDGE_WORKERS: "1",
      OPENAI_BASE_URL: chat.baseUrl,
      DEEPGRAM_URL: bridgeEars.url,
      ELEVENLABS_URL: tts.url,
      LOG_LEVEL: "info",
    },
    (line) => line.includes("bridge listening"),
  );
  const worker = await startWorker({
    address: temporal.address,
    backoffBaseMs: 1_000,
    env: {
      BRIDGE_URL: `ws://127.0.0.1:${bridgePort}`,
      OPENAI_BASE_URL: chat.baseUrl,
      SIMULATOR_MODEL: SIMULATOR,
      JUDGE_MODEL: JUDGE,
      DEEPGRAM_URL: callerEars.url,
      ELEVENLABS_URL: tts.url,
    },
  });

  const tenant = await createTenant(api.url, "bench");
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { startDuration: 64, stopDuration: 300 } },
  });
  const assistant = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "bench",
    systemPrompt: "You take table bookings.",
    systemPromptGreeting: "Hello, how can I help?",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
  });
  const turns = (i: number) => Array.from({ length: T }, (_, k) => `Scenario ${i} turn ${k + 1}.`);
  const scenarios = Array.from({ length: N }, (_, i) => {
    const criteria = [
      { name: "heard the last turn", type: "said", pattern: `You said: Scenario ${i} turn ${T}\\.`, by: "agent" },
      { name: "polite", type: "judge", question: "Was the agent polite?" },
    ];
    return i % 2 === 0
      ? { name: `scripted ${i}`, kind: "scripted", turns: turns(i).map((s) => ({ say: s })), criteria }
      : {
          name: `simulated ${i}`,
          kind: "simulated",
          persona: "A regular.",
          goal: `Scenario ${i}: book a table.`,
          maxTurns: T,
          criteria,
        };
  });

  const { db, close } = createDb(databaseUrl, { max: 2 });
  const cpu = () => ({
    worker: cpuSeconds(worker.pid()!),
    bridge: cpuSeconds(bridge.proc.pid!),
    "this process (API, fake LLM, poller)": cpuSeconds(process.pid),
    ...(temporal.pid && { "Temporal dev server": cpuSeconds(temporal.pid) }),
  });
  const loadBefore = load();
  const cpuBefore = cpu();
  say(`${N} scenarios of ${T} turns at concurrency ${C}, fake LLM ${llmMs} ms to its first token; load ${loadBefore}`);
  const t0 = performance.now();
  const created = await tenant.org.post(`${tenant.P}/test-runs`, {
    assistantId: assistant.body.data.id,
    scenarios,
    concurrency: C,
  });
  if (created.status !== 202) throw new Error(`run refused: ${JSON.stringify(created.body)}`);
  const runId: string = created.body.data.id;
  let run = created.body.data;
  let maxLive = 0;
  let lastSaid = 0;
  while (run.status !== "completed" && run.status !== "canceled") {
    await Bun.sleep(100);
    run = (await tenant.org.get(`${tenant.P}/test-runs/${runId}`)).body.data;
    const [live] = await db.execute<{ n: number }>(
      sql`select count(*)::int as n from agent_tasks where test_run_id = ${runId} and status = 'active'`,
    );
    maxLive = Math.max(maxLive, Number(live!.n));
    const s = (performance.now() - t0) / 1000;
    if (s - lastSaid >= 2) {
      lastSaid = s;
      const { total, passed, failed, error } = run.counts;
      say(
        `${s.toFixed(0)} s: ${passed + failed + error}/${total} done (${passed} passed, ${failed} failed, ${error} error), ${live!.n} calls live`,
      );
    }
    if (s > 600) throw new Error(`run still ${run.status} after 600 s: ${JSON.stringify(run.counts)}`);
  }
  const wallS = (performance.now() - t0) / 1000;
  const cpuAfter = cpu();
  const loadAfter = load();

  // our own time per turn, at the fake LLM (see the header)
  const callOf = (body: any) => /Scenario (\d+)\b/.exec(JSON.stringify(body.messages))?.[1];
  const byCall = new Map<string, { agent: ChatRequest[]; simulator: ChatRequest[] }>();
  for (const request of chat.requests) {
    const kind = request.body?.stream === true ? "agent" : request.body?.model === SIMULATOR ? "simulator" : null;
    const call = kind && callOf(request.body);
    if (!kind || !call) continue;
    if (!byCall.has(call)) byCall.set(call, { agent: [], simulator: [] });
    byCall.get(call)![kind].push(request);
  }
  const own = { scripted: [] as number[], simulated: [] as number[] };
  const llm: number[] = [];
  let oddCalls = 0;
  for (const [call, { agent, simulator }] of byCall) {
    if (agent.length !== T) oddCalls++; // a turn asked twice or never: a lost or duplicated turn
    agent.sort((a, b) => a.at - b.at);
    for (const r of agent) llm.push(r.endedAt! - r.at);
    for (let k = 1; k < agent.length; k++) {
      const from = agent[k - 1]!.endedAt!;
      const to = agent[k]!.at;
      const simulatorTime = simulator
        .filter((r) => r.at >= from && r.endedAt! <= to)
        .reduce((sum, r) => sum + (r.endedAt! - r.at), 0);
      own[Number(call) % 2 === 0 ? "scripted" : "simulated"].push(to - from - simulatorTime);
    }
  }
  // what a result costs beyond its call: the conclusion, the judge, the bookkeeping (database clock)
  const rows = await db.execute<{ started: number; ended: number; call_ms: number }>(
    sql`select extract(epoch from started_at) * 1000 as started, extract(epoch from ended_at) * 1000 as ended,
      (metrics->>'durationMs')::float as call_ms from test_results where run_id = ${runId}`,
  );
  const outside = rows.map((r) => Number(r.ended) - Number(r.started) - Number(r.call_ms));
  const busy = rows.reduce((sum, r) => sum + Number(r.ended) - Number(r.started), 0) / 1000;
  // a lane's hand-off: the i-th result to start (i >= C) took the lane the (i-C)-th result to end freed
  const starts = rows.map((r) => Number(r.started)).sort((a, b) => a - b);
  const ends = rows.map((r) => Number(r.ended)).sort((a, b) => a - b);
  const handoffs = starts.slice(C).map((start, i) => start - ends[i]!);
  const [times] = await db.execute<{ created: number; ended: number }>(
    sql`select extract(epoch from created_at) * 1000 as created, extract(epoch from ended_at) * 1000 as ended
      from test_runs where id = ${runId}`,
  );
  const firstStartMs = starts[0]! - Number(times!.created);
  const rampMs = starts[Math.min(C, starts.length) - 1]! - starts[0]!;
  const closeMs = Number(times!.ended) - ends.at(-1)!;
  await close();

  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const dist = (xs: number[]) =>
    `p50 ${ms(percentile(xs, 50))}  p90 ${ms(percentile(xs, 90))}  p99 ${ms(percentile(xs, 99))}  max ${ms(percentile(xs, 100))}  (n=${xs.length})`;
  const allOwn = [...own.scripted, ...own.simulated];
  const { total, passed, failed, error } = run.counts;
  const cpuUsed = Object.entries(cpuAfter).map(
    ([k, v]) => `${k} ${(v - cpuBefore[k as keyof typeof cpuBefore]!).toFixed(1)} s`,
  );
  const verdict = (ok: boolean) => (ok ? "OK" : "MISSED");
  console.log(
    [
      `bench/test-runs: ${N} text scenarios (${Math.ceil(N / 2)} scripted, ${Math.floor(N / 2)} simulated callers, each judged) of ${T} turns at concurrency ${C}; fake LLM ${llmMs} ms to its first token; load average before ${loadBefore}, after ${loadAfter}`,
      `  wall time (POST to completed, as a poller sees it)   ${wallS.toFixed(1)} s   target < 30 s: ${verdict(wallS < 30)}`,
      `  results   ${total} (${passed} passed, ${failed} failed, ${error} error); calls whose LLM was not asked exactly ${T} times: ${oddCalls}`,
      `  calls at once (most seen)   ${maxLive} of ${C}; the lanes were busy ${((busy / (C * wallS)) * 100).toFixed(0)} % of the wall time`,
      `  our own time per turn (fake LLM's reply to turn k done -> request for turn k+1 in)   ${dist(allOwn)}   target < 50 ms (p50): ${verdict(percentile(allOwn, 50) < 50)}`,
      `    scripted callers    ${dist(own.scripted)}`,
      `    simulated callers   ${dist(own.simulated)}  (the fake's time answering the simulator taken out)`,
      `  the fake LLM's reply (its deliberate latency, not ours)   ${dist(llm)}`,
      `  a result's time beyond its call (conclusion, judge, bookkeeping)   ${dist(outside)}`,
      `  a lane's hand-off (a result ends -> the next one starts)   ${dist(handoffs)}`,
      `  the run created -> its first result started   ${ms(firstStartMs)}; the first ${C} started within ${ms(rampMs)}; the last result ended -> the run completed   ${ms(closeMs)}`,
      `  CPU used during the run: ${cpuUsed.join(", ")} (Postgres is shared with the machine: not counted)`,
    ].join("\n"),
  );

  // one audio scenario: its wall time against the length of everything spoken in it
  say(`one audio scenario of ${audioTurns.length} spoken turns`);
  chat.firstTokenDelayMs = llmMs;
  const a0 = performance.now();
  const audio = await tenant.org.post(`${tenant.P}/test-runs`, {
    assistantId: assistant.body.data.id,
    modality: "audio",
    scenarios: [
      {
        name: "spoken",
        kind: "scripted",
        turns: audioTurns.map((s) => ({ say: s })),
        criteria: [{ name: "caller hung up", type: "endedReason", in: ["hangup"] }],
      },
    ],
  });
  if (audio.status !== 202) throw new Error(`audio run refused: ${JSON.stringify(audio.body)}`);
  let audioRun = audio.body.data;
  while (audioRun.status !== "completed" && audioRun.status !== "canceled") {
    await Bun.sleep(100);
    audioRun = (await tenant.org.get(`${tenant.P}/test-runs/${audioRun.id}`)).body.data;
    if (performance.now() - a0 > 300_000) throw new Error("the audio run did not end within 300 s");
  }
  const audioWallS = (performance.now() - a0) / 1000;
  const [spoken] = (await tenant.org.get(`${tenant.P}/test-runs/${audioRun.id}/results`)).body.data;
  const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${spoken.agentTaskId}`)).body.data;
  // what was said, both sides, as the same espeak voice the TTS fake speaks with
  const said = (task.messages as { type: string; text?: string }[]).filter((m) => m.type === "text" && m.text);
  let spokenS = 0;
  for (const m of said) spokenS += (await speech(m.text!, 16_000)).length / 16_000;
  console.log(
    [
      `  audio: one scenario of ${audioTurns.length} spoken turns (${spoken.status}${spoken.error ? `: ${spoken.error}` : ""}): wall time (POST to completed) ${audioWallS.toFixed(1)} s, the call ${(spoken.metrics.durationMs / 1000).toFixed(1)} s, for ${spokenS.toFixed(1)} s of speech (${said.length} utterances, both sides); first agent audio after a turn p50 ${spoken.metrics.firstAudioMs?.p50 ?? "?"} ms, p95 ${spoken.metrics.firstAudioMs?.p95 ?? "?"} ms (at the caller's socket, metrics.firstAudioMs)`,
    ].join("\n"),
  );
  await worker.kill();
  await api.stop();
  await chat.close();
  await Promise.all([bridgeEars.close(), callerEars.close(), tts.close()]);
} finally {
  await finish();
}
