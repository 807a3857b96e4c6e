// Latency per turn through the real bridge, with real speech: each engine's turns and stages on the
// agent task, their voice-to-voice summary in call_concluded, and one /metrics histogram per stage.
// The fake providers wait a set time before their first token or audio; every turn's stages must
// account for at least that much, whatever the machine's load adds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CallLatency, TurnLatency as Turn, VoiceToVoice } from "../../src/models/call-latency";
import { scriptedReplies } from "../fakes/chat-completions-server";
import type { FakeDeepgramServer } from "../fakes/deepgram-server";
import { scrape, total, type Sample } from "../metrics/scrape";
import { speech } from "../helpers/speech";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { agentTask, callPastGreeting, createAssistant, hookFor, type World } from "../bridge/fixtures";
import { pipelineAssistant as pipelineDesk, type PipelineWorld, startPipelineWorld } from "./pipeline-fakes";

const llmFirstTokenMs = 300;
const ttsFirstAudioMs = 150;
const realtimeFirstAudioMs = 300;

let pipeline: PipelineWorld;
let world: World;
let stt: FakeDeepgramServer;

beforeAll(async () => {
  pipeline = await startPipelineWorld({ tts: { firstAudioDelayMs: ttsFirstAudioMs } });
  ({ world, stt } = pipeline);
  world.chat.firstTokenDelayMs = llmFirstTokenMs;
}, 60_000);
afterAll(() => pipeline?.stop());

const pipelineAssistant = (extensions: unknown[] = []) =>
  pipelineDesk(world, { greeting: "Hello, Acme here.", extensions });

const bridgeMetrics = () => scrape(`${world.bridge.url.replace(/^ws/, "http")}/metrics`);
const stageMetrics = {
  endpointingMs: "vas_turn_endpointing_seconds_count",
  llmFirstTokenMs: "vas_turn_llm_first_token_seconds_count",
  ttsFirstAudioMs: "vas_turn_tts_first_audio_seconds_count",
  voiceToVoiceMs: "vas_turn_voice_to_voice_seconds_count",
} as const;

/** Each stage's histogram got one sample per turn that has the stage. */
function expectSamplesOf(turns: Turn[], before: Sample[], after: Sample[]) {
  for (const [stage, metric] of Object.entries(stageMetrics)) {
    const measured = turns.filter((t) => t[stage as keyof typeof stageMetrics] !== null).length;
    expect({ stage, samples: total(after, metric) - total(before, metric) }).toEqual({ stage, samples: measured });
  }
}

/** The task's latency, and call_concluded's copy of its summary, once the call has concluded. */
async function concludedLatency(callId: string) {
  const concluded = await hookFor(world, callId, "call_concluded");
  const task = await agentTask(world, callId);
  const latency = task.latency as CallLatency;
  return { task, latency, hooked: concluded.latency };
}

/** The summary is the nearest-rank p50 and p95, and the max, of the turns' voice-to-voice times. */
function expectSummaryOf(turns: Turn[], summary: VoiceToVoice | null) {
  const measured = turns.flatMap((t) => (t.voiceToVoiceMs === null ? [] : [t.voiceToVoiceMs])).sort((a, b) => a - b);
  if (measured.length === 0) return expect(summary).toBeNull();
  const rank = (q: number) => measured[Math.ceil(q * measured.length) - 1];
  expect(summary).toEqual({ p50: rank(0.5)!, p95: rank(0.95)!, max: measured.at(-1)! });
}

/** callerEndedAt in order, inside the call. */
function expectTurnsInCall(turns: Turn[], task: { startedAt: string; endedAt: string }) {
  const ended = turns.map((t) => Date.parse(t.callerEndedAt));
  expect(turns.map((t) => t.index)).toEqual(turns.map((_, i) => i + 1));
  expect(ended).toEqual([...ended].sort((a, b) => a - b));
  expect(ended[0]!).toBeGreaterThanOrEqual(Date.parse(task.startedAt));
  expect(ended.at(-1)!).toBeLessThanOrEqual(Date.parse(task.endedAt));
}

/**
 * The caller asks, hears half a second of the answer and cuts in with its goodbye; the agent hangs up
 * after answering it.
 */
async function askThenCutIn(caller: WsCaller) {
  const greeted = caller.frames.length;
  await caller.say(await speech("What are your opening hours?", 16000));
  await caller.until(() => caller.frames.length >= greeted + 25, 15_000, "the agent's answer");
  await caller.say(await speech("Bye for now.", 16000));
  await hungUp(caller);
}

/** The agent hangs up (its goodbye played); what the caller got says why not, when it does not. */
async function hungUp(caller: WsCaller) {
  const bound = Bun.sleep(30_000).then(() => null);
  const closed = await Promise.race([caller.closed, bound]);
  if (!closed) throw new Error(`the call did not end; the caller got ${JSON.stringify(caller.events)}`);
  expect(closed.code).toBe(1000);
}

describe("latency per turn", () => {
  test("pipeline: every stage of each turn, the answer the caller cut off marked, the summary in call_concluded", async () => {
    stt.transcripts.push("What are your opening hours?", "Bye for now.");
    world.chat.reply = scriptedReplies([
      { text: "We open at nine in the morning. We close at five in the afternoon, and at two on Saturdays." },
      { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: {} }] },
    ]);
    const assistantId = await pipelineAssistant();
    const before = await bridgeMetrics();
    const { caller, callId } = await callPastGreeting(world, assistantId, "Hello, Acme here.");
    await askThenCutIn(caller);

    const { task, latency, hooked } = await concludedLatency(callId);
    expect(latency.turns).toHaveLength(2);
    expect(latency.turns.map((t) => [t.interrupted, t.preemptive])).toEqual([
      [true, false],
      [false, false],
    ]);
    for (const turn of latency.turns) {
      expect(turn.endpointingMs).toBeGreaterThanOrEqual(0);
      expect(turn.llmFirstTokenMs).toBeGreaterThanOrEqual(llmFirstTokenMs);
      expect(turn.ttsFirstAudioMs).toBeGreaterThanOrEqual(ttsFirstAudioMs);
      // the stages follow one another: the caller waits for all of them (each is rounded on its own)
      expect(turn.voiceToVoiceMs).toBeGreaterThanOrEqual(
        turn.endpointingMs! + turn.llmFirstTokenMs! + turn.ttsFirstAudioMs! - 2,
      );
    }
    expectTurnsInCall(latency.turns, task);
    expectSummaryOf(latency.turns, latency.voiceToVoiceMs);
    expect(hooked).toEqual({ voiceToVoiceMs: latency.voiceToVoiceMs });
    expectSamplesOf(latency.turns, before, await bridgeMetrics());
  }, 90_000);

  test("pipeline, preemptive generation: the turn says so; endpointing holds the punctuation wait, the LLM its own time", async () => {
    const waitMs = 1000;
    stt.transcripts.push("What time do you open?");
    world.chat.reply = scriptedReplies([{ text: "At nine.", toolCalls: [{ name: "end_call", arguments: {} }] }]);
    const assistantId = await pipelineAssistant([
      {
        type: "turn_taking",
        parameters: { endpointing: { mode: "punctuation", onPunctuationMs: waitMs }, preemptiveGeneration: true },
      },
    ]);
    const { caller, callId } = await callPastGreeting(world, assistantId, "Hello, Acme here.");
    await caller.say(await speech("What time do you open?", 16000));
    await hungUp(caller);

    const { task, latency } = await concludedLatency(callId);
    expect(latency.turns).toHaveLength(1);
    const [turn] = latency.turns;
    expect(turn).toMatchObject({ index: 1, preemptive: true, interrupted: false });
    // the turn is decided once the wait after the transcript's "?" is over; the LLM asked at the VAD's stop
    expect(turn!.endpointingMs).toBeGreaterThanOrEqual(waitMs);
    expect(turn!.llmFirstTokenMs).toBeGreaterThanOrEqual(llmFirstTokenMs);
    expect(turn!.ttsFirstAudioMs).toBeGreaterThanOrEqual(ttsFirstAudioMs);
    // TTS starts only once the turn is decided; the LLM's time may hide in the wait
    expect(turn!.voiceToVoiceMs).toBeGreaterThanOrEqual(turn!.endpointingMs! + turn!.ttsFirstAudioMs! - 2);
    expectTurnsInCall(latency.turns, task);
    expectSummaryOf(latency.turns, latency.voiceToVoiceMs);
  }, 90_000);

  test("openai_realtime: endpointing, first audio and voice-to-voice per turn; no TTS stage", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hello, Acme desk.",
      fake: {
        responseDelayMs: realtimeFirstAudioMs,
        turns: [
          {
            userSays: "What are your opening hours?",
            // the fake speaks 12 ms a character: three seconds, long enough to be cut off
            reply: { text: "We open at nine in the morning and close at five in the afternoon. ".repeat(4) },
          },
          { userSays: "Bye for now.", reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: {} }] } },
        ],
      },
    });
    const before = await bridgeMetrics();
    const { caller, callId } = await callPastGreeting(world, assistant.id, "Hello, Acme desk.");
    await askThenCutIn(caller);

    const { task, latency, hooked } = await concludedLatency(callId);
    expect(latency.turns.map((t) => [t.interrupted, t.preemptive, t.ttsFirstAudioMs])).toEqual([
      [true, false, null],
      [false, false, null],
    ]);
    for (const turn of latency.turns) {
      expect(turn.endpointingMs).toBeGreaterThanOrEqual(0);
      expect(turn.llmFirstTokenMs).toBeGreaterThanOrEqual(0);
      // the caller's speech reached the bridge before the provider heard it and waited to answer
      expect(turn.voiceToVoiceMs).toBeGreaterThanOrEqual(realtimeFirstAudioMs);
      expect(turn.voiceToVoiceMs).toBeGreaterThanOrEqual(turn.endpointingMs! + turn.llmFirstTokenMs! - 2);
    }
    expectTurnsInCall(latency.turns, task);
    expectSummaryOf(latency.turns, latency.voiceToVoiceMs);
    expect(hooked).toEqual({ voiceToVoiceMs: latency.voiceToVoiceMs });
    expectSamplesOf(latency.turns, before, await bridgeMetrics());
  }, 90_000);

  test("a text call: only the LLM's stage per turn, no voice-to-voice, and call_concluded without latency", async () => {
    world.chat.reply = scriptedReplies([{ text: "We open at nine." }, { text: "You are welcome." }]);
    const assistantId = await pipelineAssistant();
    const before = await bridgeMetrics();
    const caller = await dialNative(world.bridge.url, { assistantId, token: world.tenant.orgToken });
    caller.sendJson({ type: "start", modality: "text" });
    const { callId } = await caller.waitFor((e) => e.type === "ready");
    for (const [i, text] of ["When do you open?", "Thanks."].entries()) {
      await caller.until(() => caller.events.filter((e) => e.type === "turn_done").length > i, 15_000, "turn_done");
      caller.sendJson({ type: "user_text", text });
    }
    await caller.until(() => caller.events.filter((e) => e.type === "turn_done").length > 2, 15_000, "turn_done");
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    const { task, latency, hooked } = await concludedLatency(callId);
    expect(latency.turns.map(({ callerEndedAt, llmFirstTokenMs, ...rest }) => rest)).toEqual(
      [1, 2].map((index) => ({
        index,
        endpointingMs: null,
        ttsFirstAudioMs: null,
        voiceToVoiceMs: null,
        interrupted: false,
        preemptive: false,
      })),
    );
    for (const turn of latency.turns) expect(turn.llmFirstTokenMs).toBeGreaterThanOrEqual(llmFirstTokenMs);
    expectTurnsInCall(latency.turns, task);
    expect(latency.voiceToVoiceMs).toBeNull();
    expect(hooked).toBeUndefined();
    expectSamplesOf(latency.turns, before, await bridgeMetrics());
  }, 90_000);
});
