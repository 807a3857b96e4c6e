// bench/conversation (by hand, not CI): voice-to-voice time per turn at the caller's socket, for each
// endpointing mode of the turn_taking extension, with and without preemptiveGeneration, side by side.
//   bun run bench conversation [--calls 50] [--turns 4] [--llm-delay 300] [--tts-delay 150] [--sut-cpus 0 --load-cpus 1]
// Cores (bench/lib/pinning.ts): the bridge and this database's Postgres backends on the SUT cores,
// the callers (this process), the fakes and the API on the load cores; each configuration says where
// each ran and is INVALID when the load side saturated its cores.
// The bridge runs as `bun src/bridge/main.ts` against the pipeline bench's fakes in their own process
// (Deepgram, Flux's /v2/listen included, ElevenLabs, chat completions), answering after fixed delays.
// Per configuration CALLS 8 kHz callers at once each ask TURNS questions (espeak "Tell me more.");
// even turns are transcribed with final punctuation, odd turns without (a caller who seems
// mid-sentence: punctuation's long wait, Flux's eot_timeout_ms). Voice-to-voice: the question's last
// non-silent frame sent -> the reply's first non-silent frame received. Our own share: the reply's
// first frame received, minus the configured waits and the providers' times on the critical path (the
// rest of voice-to-voice is the TTS audio's own leading silence, shown apart).
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { loadConfig } from "../../src/config";
import { migrateDatabase } from "../../src/db/migrate";
import { startApi } from "../../src/server";
import { createTenant, type Tenant } from "../../test/helpers/api";
import { speech } from "../../test/helpers/speech";
import { createBench, percentile as pct } from "../lib/harness";
import { startPipelineBridge } from "../pipeline/pipeline-bridge";
import { startConversations, type TurnTimes } from "./callers";
import { bridgeLine, bridgeTurns } from "./bridge-latency";
import type { TurnLatency } from "../../src/models/call-latency";
import { pinningFrom, pinningOptions, type CoreReport } from "../lib/pinning";
import { processTree } from "../calls-sip/proc-tree";

const { values } = parseArgs({
  options: {
    ...pinningOptions,
    calls: { type: "string", default: "50" },
    turns: { type: "string", default: "4" },
    "llm-delay": { type: "string", default: "300" },
    "tts-delay": { type: "string", default: "150" },
    modes: { type: "string", default: "silence,punctuation,model" },
  },
});
const calls = Number(values.calls);
const turnsPerCall = Number(values.turns);
const llmMs = Number(values["llm-delay"]);
const ttsMs = Number(values["tts-delay"]);
const modes = values.modes.split(",") as Mode[];
const rate = 8000;

type Mode = "silence" | "punctuation" | "model";
// the configured waits: the VAD's stop, punctuation's two waits, and the fake Flux's (its defaults in
// test/fakes/deepgram-flux-stream.ts: a stretch of speech ends after 200 ms of silence, EagerEndOfTurn;
// EndOfTurn after 300 ms when the words end a sentence, else after eot_timeout_ms)
const vad = { startDuration: 100, stopDuration: 300 };
const punctuation = { onPunctuationMs: 100, onNoPunctuationMs: 1500 };
const flux = { eagerMs: 200, confidentMs: 300, eotTimeoutMs: 1500 };

/**
 * The critical path from the caller's last sound to the reply's first audio, with instant hops: the
 * waits, then the LLM's first token (with preemptive generation it runs from the tentative end,
 * alongside the rest of the wait), then TTS's first audio.
 */
function expectedMs(mode: Mode, punctuated: boolean, preemptive: boolean, llm = llmMs, tts = ttsMs) {
  if (mode === "silence") return vad.stopDuration + llm + tts;
  const [tentative, wait] =
    mode === "punctuation"
      ? [vad.stopDuration, punctuated ? punctuation.onPunctuationMs : punctuation.onNoPunctuationMs]
      : [flux.eagerMs, (punctuated ? flux.confidentMs : flux.eotTimeoutMs) - flux.eagerMs];
  return tentative + (preemptive ? Math.max(wait, llm) : wait + llm) + tts;
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const pinning = pinningFrom(values);
const { say, databaseUrl, env, spawnBun, watch, finish } = createBench("conversation", pinning);

async function assistantFor(tenant: Tenant, mode: Mode, preemptive: boolean) {
  const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
    name: `${mode} ${preemptive}`,
    type: "pipeline",
    parameters: { vad, stt: mode === "model" ? { model: "flux-general-en" } : {} },
  });
  const endpointing =
    mode === "punctuation"
      ? { mode, ...punctuation }
      : mode === "model"
        ? { mode, eotTimeoutMs: flux.eotTimeoutMs }
        : { mode };
  const assistant = await tenant.org.post(`${tenant.P}/assistants`, {
    name: `bench ${mode}`,
    systemPromptGreeting: "Hello. That is all.",
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    extensions: [{ type: "turn_taking", parameters: { endpointing, preemptiveGeneration: preemptive } }],
  });
  if (assistant.status !== 201) throw new Error(`assistant: ${JSON.stringify(assistant.body)}`);
  return assistant.body.data.id as string;
}

type Result = {
  mode: Mode;
  preemptive: boolean;
  turns: TurnTimes[];
  /** the same calls' turns as the bridge measured them */
  bridge: TurnLatency[];
  lost: number;
  failed: number;
  load: string;
  /** where each process ran, and whether the load side kept up */
  cores: CoreReport;
};

async function runConfiguration(
  tenant: Tenant,
  bridgeUrl: string,
  question: Int16Array,
  mode: Mode,
  preemptive: boolean,
  bridgePid: number,
) {
  const assistantId = await assistantFor(tenant, mode, preemptive);
  const cores = watch([{ label: "bridge", side: "sut", pids: () => processTree(bridgePid) }]);
  const url = `${bridgeUrl}/v1/calls?assistantId=${assistantId}&sampleRate=${rate}&token=${tenant.orgToken}`;
  const conversations = startConversations({
    url,
    sampleRate: rate,
    question,
    turns: turnsPerCall,
    lastWords: "That is all.",
    quietMs: 400,
    replyTimeoutMs: 15_000,
  });
  const name = `${mode}, preemptive ${preemptive ? "on" : "off"}`;
  const started = performance.now();
  const progress = setInterval(
    () =>
      say(
        `${name}: ${conversations.live} calls live, ${conversations.turns.length}/${calls * turnsPerCall} turns heard, ${conversations.lost} lost, ${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()}`,
      ),
    5000,
  );
  const dialed: Promise<void>[] = [];
  // in waves, so the start is not one burst of upgrades
  for (let i = 0; i < calls; i++) {
    dialed.push(conversations.dial());
    if (i % 10 === 9) await Bun.sleep(200);
  }
  await Promise.all(dialed);
  clearInterval(progress);
  conversations.stop();
  return {
    mode,
    preemptive,
    turns: conversations.turns,
    bridge: await bridgeTurns(tenant, assistantId),
    lost: conversations.lost,
    failed: conversations.failed,
    load: load(),
    cores: cores.stop(),
  };
}

/** The fake providers' timestamps per tag (bench/pipeline/fake-providers.ts). */
type Timings = {
  finalizes: { tag: string; at: number }[];
  llm: { tag: string; at: number; firstContentAt: number | null }[];
  tts: { tag: string; receivedAt: number; firstAudioAt: number | null }[];
};

const isPunctuated = (t: TurnTimes) => Number(t.tag?.split("t")[1] ?? 0) % 2 === 0;
const ms = (x: number) => x.toFixed(0).padStart(5);
const stat = (xs: number[], ps = [50, 95]) => (xs.length ? ps.map((p) => ms(pct(xs, p))).join(" /") : "    -");

function rows(results: Result[], timings: Timings) {
  const by = <T extends { tag: string }>(xs: T[]) => new Map(xs.map((x) => [x.tag, x]));
  const finalizes = by(timings.finalizes);
  const llm = by(timings.llm);
  const tts = by(timings.tts);
  const table: string[] = [];
  const stages: string[] = [];
  const own: number[] = [];
  const vadLag: number[] = [];
  const savings: string[] = [];
  for (const mode of modes)
    for (const punctuated of mode === "silence" ? [null] : [true, false]) {
      const label = mode === "silence" ? "silence" : `${mode}, ${punctuated ? "ends in '.'" : "no final '.'"}`;
      const cells: string[] = [];
      const p50s: number[] = [];
      for (const preemptive of [false, true]) {
        const result = results.find((r) => r.mode === mode && r.preemptive === preemptive);
        const turns = (result?.turns ?? []).filter((t) => punctuated === null || isPunctuated(t) === punctuated);
        const v2v = turns.map((t) => t.firstVoiceAt - t.speechEndAt);
        const expected = expectedMs(mode, punctuated ?? true, preemptive);
        // the providers' times as the fakes measured them (the fake TTS runs espeak for every new
        // sentence on top of its fixed delay): what is left is ours
        const ours = turns.map((t) => {
          const request = llm.get(t.tag ?? "");
          const speak = tts.get(t.tag ?? "");
          const llmTime = request?.firstContentAt ? request.firstContentAt - request.at : llmMs;
          const ttsTime = speak?.firstAudioAt ? speak.firstAudioAt - speak.receivedAt : ttsMs;
          return t.firstFrameAt - t.speechEndAt - expectedMs(mode, punctuated ?? true, preemptive, llmTime, ttsTime);
        });
        own.push(...ours);
        // of which the VAD's stop beyond stopDuration (its 32 ms windows, the model's own tail)
        if (mode !== "model")
          vadLag.push(
            ...turns.flatMap((t) => {
              const stop = finalizes.get(t.tag ?? "");
              return stop ? [stop.at - t.speechEndAt - vad.stopDuration] : [];
            }),
          );
        p50s.push(pct(v2v, 50));
        cells.push(`${stat(v2v)}  ${ms(expected)}  ${stat(ours, [50, 99])}  ${String(turns.length).padStart(4)}`);
        // where the time goes, per stage (p50 / p99), from the providers' timestamps of the same turns
        const stage = (f: (t: TurnTimes) => number | null) =>
          stat(
            turns.map(f).filter((x): x is number => x !== null && Number.isFinite(x)),
            [50, 99],
          );
        const f = (t: TurnTimes) => finalizes.get(t.tag ?? "");
        const l = (t: TurnTimes) => llm.get(t.tag ?? "");
        const s = (t: TurnTimes) => tts.get(t.tag ?? "");
        stages.push(
          `${`${label}, preemptive ${preemptive ? "on" : "off"}`.padEnd(42)}` +
            [
              mode === "model" ? "    - /    -" : stage((t) => (f(t) ? f(t)!.at - t.speechEndAt : null)),
              stage((t) => (l(t) ? l(t)!.at - (mode === "model" ? t.speechEndAt : (f(t)?.at ?? NaN)) : null)),
              stage((t) => (l(t)?.firstContentAt ? l(t)!.firstContentAt! - l(t)!.at : null)),
              stage((t) => (s(t) && t.userFinalAt ? s(t)!.receivedAt - t.userFinalAt : null)),
              stage((t) => (s(t) && l(t)?.firstContentAt ? s(t)!.receivedAt - l(t)!.firstContentAt! : null)),
              stage((t) => (s(t)?.firstAudioAt ? s(t)!.firstAudioAt! - s(t)!.receivedAt : null)),
              stage((t) => (s(t)?.firstAudioAt ? t.firstFrameAt - s(t)!.firstAudioAt! : null)),
              stage((t) => t.firstVoiceAt - t.firstFrameAt),
            ].join("  "),
        );
      }
      table.push(`${label.padEnd(24)}${cells.join("   |")}`);
      // per turn, robust to the load of the other run: how much of the LLM's first-token time had passed
      // when the turn ended (the caller's final transcript), so was no longer on the way to the reply
      const hidden = (results.find((r) => r.mode === mode && r.preemptive)?.turns ?? [])
        .filter((t) => punctuated === null || isPunctuated(t) === punctuated)
        .flatMap((t) => {
          const request = llm.get(t.tag ?? "");
          if (!request?.firstContentAt || t.userFinalAt === null) return [];
          const firstToken = request.firstContentAt - request.at;
          return [(Math.max(0, Math.min(firstToken, t.userFinalAt - request.at)) / firstToken) * 100];
        });
      savings.push(
        `${label.padEnd(26)} v2v p50 off - on ${ms(p50s[0]! - p50s[1]!)} ms = ${(((p50s[0]! - p50s[1]!) / llmMs) * 100).toFixed(0).padStart(4)} % of ${llmMs} ms;  per turn, LLM first token done by the turn's end: p50 ${pct(hidden, 50).toFixed(0)} %, p5 ${pct(hidden, 5).toFixed(0)} % (${hidden.length} turns)${mode === "silence" ? "  (no preemption in this mode: the same configuration twice, the noise)" : ""}`,
      );
    }
  return { table, stages, own, vadLag, savings };
}

try {
  say(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), load average ${load()}; ${calls} calls x ${turnsPerCall} turns per configuration, LLM first token ${llmMs} ms, TTS first audio ${ttsMs} ms`,
  );
  await migrateDatabase(databaseUrl);
  const api = await startApi(loadConfig(env), { port: 0 });
  const tenant = await createTenant(api.url, "bench");
  const {
    urls,
    url: bridgeUrl,
    bridge,
  } = await startPipelineBridge(spawnBun, {
    TAGGED_STREAMS: String(1e9),
    UNPUNCTUATED_ODD_TURNS: "1",
    LLM_DELAY_MS: String(llmMs),
    TTS_DELAY_MS: String(ttsMs),
  });
  const question = await speech("Tell me more.", rate);
  const results: Result[] = [];
  for (const mode of modes)
    for (const preemptive of [false, true]) {
      const result = await runConfiguration(tenant, bridgeUrl, question, mode, preemptive, bridge.proc.pid!);
      results.push(result);
      say(
        `${mode}, preemptive ${preemptive ? "on" : "off"}: ${result.turns.length} turns heard, ${result.lost} lost, ${result.failed} calls failed; load ${result.load}`,
      );
    }
  const timings = (await (await fetch(urls.timings)).json()) as Timings;
  const { table, stages, own, vadLag, savings } = rows(results, timings);
  const providerTimes = {
    llm: timings.llm.flatMap((r) => (r.firstContentAt ? [r.firstContentAt - r.at] : [])),
    tts: timings.tts.flatMap((t) => (t.firstAudioAt ? [t.firstAudioAt - t.receivedAt] : [])),
  };
  const heard = results.reduce((n, r) => n + r.turns.length, 0);
  console.log(
    [
      "",
      `bench/conversation: ${calls} calls live x ${turnsPerCall} turns per configuration, 8 kHz espeak callers; fake LLM first token ${llmMs} ms, fake TTS first audio ${ttsMs} ms; VAD stopDuration ${vad.stopDuration} ms, punctuation waits ${punctuation.onPunctuationMs}/${punctuation.onNoPunctuationMs} ms, fake Flux EagerEndOfTurn/EndOfTurn after ${flux.eagerMs}/${flux.confidentMs} ms of silence (eot_timeout_ms ${flux.eotTimeoutMs})`,
      `machine: ${cpus().length} cores, load average at the end ${load()} (per configuration: ${results.map((r) => `${r.mode}/${r.preemptive ? "on" : "off"} ${r.load.split(" ")[0]}`).join(", ")})`,
      "",
      `${"".padEnd(24)}preemptive off: v2v p50/p95, expected (fixed delays), own p50/p99, turns | preemptive on: the same`,
      ...table,
      "",
      `our own share, every turn (${own.length}): p50 ${pct(own, 50).toFixed(1)} ms, p99 ${pct(own, 99).toFixed(1)} ms, max ${pct(own, 100).toFixed(1)} ms (target p99 < 30 ms: ${pct(own, 99) < 30 ? "met" : "missed"})`,
      `  of which the VAD's stop after stopDuration (silence, punctuation; ${vadLag.length} turns): p50 ${pct(vadLag, 50).toFixed(1)} ms, p99 ${pct(vadLag, 99).toFixed(1)} ms`,
      `  providers' times measured at the fakes: LLM first token p50 ${pct(providerTimes.llm, 50).toFixed(0)} / p99 ${pct(providerTimes.llm, 99).toFixed(0)} ms, TTS first audio p50 ${pct(providerTimes.tts, 50).toFixed(0)} / p99 ${pct(providerTimes.tts, 99).toFixed(0)} ms (the fixed delays plus the fakes' own work)`,
      "",
      "saved by preemptive generation (v2v p50, off - on; target >= 80 % of the LLM's first token on the long wait, punctuation with no final '.'):",
      ...savings,
      "",
      "the bridge's own measure of the same turns (latency per turn on the agent tasks), p50 / p95 ms, beside the socket's first frame - speech end:",
      ...results.map((r) => {
        const socket = r.turns.map((t) => t.firstFrameAt - t.speechEndAt);
        return `${`${r.mode}, preemptive ${r.preemptive ? "on" : "off"}`.padEnd(26)} socket ${stat(socket)};  bridge ${bridgeLine(r.bridge, stat)}`;
      }),
      "",
      "where the time goes, p50 / p99 ms: caller's end -> Finalize (VAD stop) | Finalize (model: caller's end) -> LLM request | LLM first token | caller's final transcript -> TTS text | LLM first token -> TTS text | TTS first audio | TTS first audio -> first frame at the caller | first frame -> first voiced frame (the audio's leading silence)",
      ...stages,
      `${heard} turns heard, ${results.reduce((n, r) => n + r.lost, 0)} lost, ${results.reduce((n, r) => n + r.failed, 0)} calls failed`,
      "",
      `cores per configuration (SUT ${pinning.sut}: the bridge; load ${pinning.load}: the rest; a shared machine):`,
      ...results.map((r) => `${r.mode}, preemptive ${r.preemptive ? "on" : "off"}: ${r.cores.text}`),
    ].join("\n"),
  );
  await api.stop();
} finally {
  await finish();
}
