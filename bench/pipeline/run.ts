// bench/pipeline (by hand, not CI): the time the bridge adds in a pipeline turn, and its CPU per call.
//   bun run bench pipeline [--calls 4] [--turns 25] [--steps 50,100] [--duration 30] [--llm-delay 200] [--tts-delay 100]
//     [--knowledge 400]
// Providers are fakes in their own process answering after fixed delays; the bridge runs as
// `bun src/bridge/main.ts`; callers (this process) stream 8 kHz speech in real time.
// Latency: CALLS calls one after another in time, TURNS turns each, per turn
//   A: end of the caller's turn (the Finalize the VAD's end sends) -> the LLM request,
//   B: the LLM's first sentence going out -> its text reaching TTS,
//   C: the first TTS audio going out -> the caller receiving the first agent frame.
// Each is measured between two processes, so it includes loopback hops; the baseline line is one
// websocket hop measured the same way in the same run.
// --knowledge N: the assistant has a knowledge base of N generated documents, and every odd turn's
// LLM first calls its tool: whole turns (Finalize -> first agent frame) with and without the tool, side
// by side, and the searches' own time (the tool_result's durationMs).
// CPU: N calls at once, each asking a question whenever the agent has been quiet for 300 ms.
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { migrateDatabase } from "../../src/db/migrate";
import { loadConfig } from "../../src/config";
import { startApi } from "../../src/server";
import { wallClock } from "../../test/fakes/wall-clock";
import { createTenant, type Tenant } from "../../test/helpers/api";
import { generateCorpus } from "../../test/knowledge/generated-corpus";
import { speech } from "../../test/helpers/speech";
import { createCallerPool } from "../calls-ws/caller-pool";
import { treeCpuSeconds } from "../calls-sip/proc-tree";
import { createBench, percentile as pct } from "../lib/harness";
import { startPipelineBridge } from "./pipeline-bridge";

const { values } = parseArgs({
  options: {
    calls: { type: "string", default: "4" },
    turns: { type: "string", default: "25" },
    steps: { type: "string", default: "50,100" },
    duration: { type: "string", default: "30" },
    "llm-delay": { type: "string", default: "200" },
    "tts-delay": { type: "string", default: "100" },
    knowledge: { type: "string", default: "0" },
  },
});
const latencyCalls = Number(values.calls);
const turns = Number(values.turns);
const steps = values.steps.split(",").filter(Boolean).map(Number);
const durationS = Number(values.duration);
const rate = 8000;
const frameSamples = rate / 50;
const knowledgeDocs = Number(values.knowledge);

const { say, databaseUrl, env, spawnBun, finish } = createBench("pipeline");

/** One caller in real time: asks `turns` questions, each once the agent has been quiet for 400 ms; notes each reply's first frame. */
async function converse(url: string, question: Int16Array, count: number): Promise<number[]> {
  const ws = new WebSocket(url);
  const firstFrames: number[] = [];
  let lastFrameAt = 0;
  let frames = 0;
  let queue: Int16Array[] = [];
  let waitingReply = false;
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (data, isBinary) => {
      if (!isBinary) return void (JSON.parse(data.toString()).type === "ready" && resolve());
      if (waitingReply && queue.length === 0) {
        firstFrames.push(wallClock());
        waitingReply = false;
      }
      frames++;
      lastFrameAt = performance.now();
    });
    ws.once("error", reject);
  });
  const started = performance.now();
  let sent = 0;
  const silence = Buffer.alloc(frameSamples * 2);
  const pump = setInterval(() => {
    while (sent * 20 <= performance.now() - started) {
      const frame = queue.shift();
      ws.send(frame ? Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength) : silence);
      sent++;
    }
  }, 5);
  for (let turn = 0; turn < count; turn++) {
    // the greeting or the previous reply has played out
    while (frames === 0 || waitingReply || performance.now() - lastFrameAt < 400) await Bun.sleep(20);
    queue = [];
    for (let i = 0; i < question.length; i += frameSamples) queue.push(question.subarray(i, i + frameSamples));
    waitingReply = true;
  }
  while (waitingReply) await Bun.sleep(20);
  clearInterval(pump);
  ws.close(1000);
  return firstFrames;
}

/** One websocket hop from another process to this one, timed the same way as C. */
async function wsHopBaseline(samples: number): Promise<number[]> {
  const sender = await spawnBun("bench/pipeline/hop-sender.ts", { COUNT: String(samples) }, (l) => l.includes('"url"'));
  const hops: number[] = [];
  const ws = new WebSocket(JSON.parse(sender.line).url);
  await new Promise<void>((resolve) =>
    ws.on("message", (d) => {
      hops.push(wallClock() - Number(d.toString()));
      if (hops.length >= samples) resolve();
    }),
  );
  ws.close();
  sender.proc.kill();
  return hops;
}

const line = (name: string, xs: number[]) =>
  `${name.padEnd(44)} n=${String(xs.length).padStart(3)}  p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p99 ${pct(xs, 99).toFixed(1).padStart(6)} ms  max ${pct(xs, 100).toFixed(1).padStart(6)} ms`;

/** A knowledge base of generated documents (test/knowledge/generated-corpus.ts), uploaded through the API. */
async function knowledgeBase(tenant: Tenant, docs: number) {
  const corpus = generateCorpus(docs);
  const id = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "bench" })).body.data.id as string;
  for (const [i, doc] of corpus.documents.slice(0, docs).entries()) {
    await tenant.org.post(`${tenant.P}/knowledge-bases/${id}/documents`, { title: doc.title, content: doc.content });
    if ((i + 1) % 100 === 0) say(`knowledge: ${i + 1}/${docs} documents uploaded`);
  }
  const { chunks } = (await tenant.org.get(`${tenant.P}/knowledge-bases/${id}`)).body.data;
  return { id, chunks: chunks as number, query: corpus.questions[0]!.question };
}

/** Every knowledge tool_result's durationMs in the calls so far. */
async function searchDurations(tenant: Tenant) {
  const tasks = (await tenant.org.get(`${tenant.P}/agent-tasks?size=100`)).body.data as { id: string }[];
  const durations: number[] = [];
  for (const task of tasks) {
    const { messages } = (await tenant.org.get(`${tenant.P}/agent-tasks/${task.id}`)).body.data;
    for (const m of messages ?? []) if (m.type === "tool_result") durations.push(m.durationMs);
  }
  return durations;
}

try {
  say(
    `scratch database, API, fake providers (LLM ${values["llm-delay"]} ms, TTS ${values["tts-delay"]} ms) and a bridge`,
  );
  await migrateDatabase(databaseUrl);
  const api = await startApi(loadConfig(env), { port: 0 });
  const tenant = await createTenant(api.url, "bench");
  const knowledge = knowledgeDocs > 0 ? await knowledgeBase(tenant, knowledgeDocs) : null;
  const {
    urls,
    bridge,
    url: bridgeUrl,
  } = await startPipelineBridge(spawnBun, {
    TAGGED_STREAMS: String(latencyCalls),
    LLM_DELAY_MS: values["llm-delay"],
    TTS_DELAY_MS: values["tts-delay"],
    ...(knowledge && { KNOWLEDGE_QUERY: knowledge.query }),
  });
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { startDuration: 100, stopDuration: 300 } },
  });
  const assistant = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "bench",
    systemPromptGreeting: "Hi.",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    ...(knowledge && {
      extensions: [{ type: "knowledge_base", parameters: { knowledgeBaseId: knowledge.id, maxResults: 3 } }],
    }),
  });
  const url = `${bridgeUrl}/v1/calls?assistantId=${assistant.body.data.id}&sampleRate=${rate}&token=${tenant.orgToken}`;
  const question = await speech("Tell me more.", rate);

  // latency: the tagged calls, dialed one after another so call i is the providers' stream i
  say(`latency: ${latencyCalls} calls x ${turns} turns`);
  const firstFrames: Record<string, number> = {};
  for (let c = 0; c < latencyCalls && turns > 0; c++) {
    const frames = await converse(url, question, turns);
    for (const [t, at] of frames.entries()) firstFrames[`s${c}t${t}`] = at;
    say(`call ${c + 1}/${latencyCalls} done`);
  }
  await Bun.sleep(500);
  const timings = (await (await fetch(urls.timings)).json()) as any;
  const by = <T extends { tag: string }>(xs: T[]) => new Map(xs.map((x) => [x.tag, x]));
  const finalizes = by(timings.finalizes),
    llm = by(timings.llm),
    tts = by(timings.tts);
  /** which turns were slowest in A (the first turn of a call, or any) */
  const aByTurn: [string, number][] = [];
  const a: number[] = [],
    b: number[] = [],
    c: number[] = [];
  for (const [tag, request] of llm as Map<string, any>) {
    const fin: any = finalizes.get(tag),
      speak: any = tts.get(tag);
    if (fin) {
      a.push(request.at - fin.at);
      aByTurn.push([tag, request.at - fin.at]);
    }
    if (speak && request.firstContentAt) b.push(speak.receivedAt - request.firstContentAt);
    if (speak?.firstAudioAt && firstFrames[tag]) c.push(firstFrames[tag] - speak.firstAudioAt);
  }
  // whole turns, the knowledge tool's (odd turns) beside the others
  const turnsWith: number[] = [],
    turnsWithout: number[] = [];
  for (const [tag, fin] of finalizes as Map<string, any>)
    if (firstFrames[tag]) (Number(tag.split("t")[1]) % 2 ? turnsWith : turnsWithout).push(firstFrames[tag] - fin.at);
  const searches = knowledge ? await searchDurations(tenant) : [];
  const slowest = aByTurn.sort((x, y) => y[1] - x[1]).slice(0, 5);
  say(`slowest A turns (s<call>t<turn>): ${slowest.map(([tag, ms]) => `${tag} ${ms.toFixed(1)} ms`).join(", ")}`);
  const baseline = await wsHopBaseline(100);

  // CPU per call
  const cpuLines: string[] = [];
  const pid = bridge.proc.pid!;
  const idleStart = treeCpuSeconds(pid);
  await Bun.sleep(5000);
  cpuLines.push(
    `bridge idle (no calls)                       CPU ${(((treeCpuSeconds(pid) - idleStart) / 5) * 100).toFixed(1)}%`,
  );
  for (const n of steps) {
    const pool = createCallerPool({ url, sampleRate: rate, question, replyFrames: 0 });
    for (let i = 0; i < n; i += 25) await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => pool.dial()));
    const start = treeCpuSeconds(pid);
    const startedAt = performance.now();
    const othersStart = process.cpuUsage();
    await Bun.sleep(durationS * 1000);
    const elapsed = (performance.now() - startedAt) / 1000;
    const cpu = ((treeCpuSeconds(pid) - start) / elapsed) * 100;
    const callersCpu =
      ((process.cpuUsage(othersStart).user + process.cpuUsage(othersStart).system) / 1e6 / elapsed) * 100;
    const result = `N=${String(n).padStart(3)} calls (${pool.active} live, ${pool.stats.bursts} replies heard)  bridge CPU ${cpu.toFixed(0)}%  = ${(cpu / n).toFixed(2)}% of a core per call  (callers' CPU ${callersCpu.toFixed(0)}%)`;
    say(result);
    cpuLines.push(result);
    await pool.hangUpAll();
    await Bun.sleep(3000);
  }

  console.log(
    [
      "",
      `bench/pipeline: ${a.length} turns, fake LLM first token after ${values["llm-delay"]} ms, fake TTS first audio after ${values["tts-delay"]} ms (tagged turns speak one cached sentence), 8 kHz calls`,
      line("A  VAD end (Finalize) -> LLM request", a),
      line("B  LLM first sentence -> TTS text", b),
      line("C  first TTS audio -> first frame at caller", c),
      line("baseline: one websocket hop between processes", baseline),
      ...(knowledge
        ? [
            `knowledge: ${knowledgeDocs} documents (${knowledge.chunks} chunks); odd turns call the tool once`,
            line("turn, Finalize -> first frame, no tool", turnsWithout),
            line("turn, Finalize -> first frame, knowledge tool", turnsWith),
            line("the search (tool_result durationMs)", searches),
            `added by the tool (p50): ${(pct(turnsWith, 50) - pct(turnsWithout, 50)).toFixed(1)} ms = one more LLM round (first token after ${values["llm-delay"]} ms) + the search (p50 ${pct(searches, 50).toFixed(1)} ms) + the rest (${(pct(turnsWith, 50) - pct(turnsWithout, 50) - Number(values["llm-delay"]) - pct(searches, 50)).toFixed(1)} ms)`,
          ]
        : []),
      ...cpuLines,
      "(2-core machine shared with other work: CPU and timings are noisy)",
    ].join("\n"),
  );
  await api.stop();
} finally {
  await finish();
}
