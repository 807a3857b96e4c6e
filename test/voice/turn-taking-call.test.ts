// Turn-taking through the bridge with real speech (espeak-ng): a caller who pauses mid-sentence ("I'd
// like to book... a table for two."), each endpointing mode and preemptive generation, against the
// Deepgram (/v1/listen and Flux's /v2/listen), ElevenLabs and chat completions fakes; and the Realtime
// engine's turn_detection. The fake LLM answers "You said: <the caller's last message>", so which
// request was heard shows in what the caller hears.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { concatPcm } from "../../src/audio/pcm";
import { scriptedReplies } from "../fakes/chat-completions-server";
import type { FakeDeepgramServer } from "../fakes/deepgram-server";
import { silence, speech } from "../helpers/speech";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { createAssistant, hookFor, type World } from "../bridge/fixtures";
import { keys, pipelineAssistant as pipelineDesk, type PipelineWorld, startPipelineWorld } from "./pipeline-fakes";

let pipeline: PipelineWorld;
let world: World;
let stt: FakeDeepgramServer;

beforeAll(async () => {
  pipeline = await startPipelineWorld({ stt: { flux: { stretchEndMs: 250 } } });
  ({ world, stt } = pipeline);
}, 60_000);
afterAll(() => pipeline?.stop());

const rate = 16000;
const booking = async () =>
  concatPcm([await speech("I'd like to book", rate), silence(900, rate), await speech("a table for two", rate)]);
const firstHalf = "I'd like to book";
const wholeSentence = "I'd like to book a table for two.";

/** A pipeline assistant without a greeting (the caller speaks first), with `turnTaking` when given. */
const pipelineAssistant = (turnTaking: Record<string, unknown> | null, stt: Record<string, unknown> = {}) =>
  pipelineDesk(world, { systemPrompt: "You take table bookings.", turnTaking, stt });

/**
 * One call: the caller says `audio`, waits for the agent's final answer starting with `answer`, hangs
 * up. Returns the caller, the call's messages and the streamed LLM requests it made.
 */
async function call(
  assistantId: string,
  audio: Int16Array,
  answer: string,
  transcripts: string[],
  dialed: (caller: WsCaller) => void = () => {},
) {
  stt.transcripts.splice(0, stt.transcripts.length, ...transcripts);
  const before = world.chat.requests.length;
  const caller = await dialNative(world.bridge.url, {
    assistantId,
    sampleRate: String(rate),
    token: world.tenant.orgToken,
  });
  dialed(caller);
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.say(audio);
  await caller.waitFor((e) => agentFinal(e) && e.text.startsWith(answer), 20_000);
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const messages = (await hookFor(world, ready.callId, "call_concluded")).messages as any[];
  const requests = world.chat.requests.slice(before).filter((r) => r.body?.stream === true);
  const lastUser = (r: (typeof requests)[number]) => r.body.messages.findLast((m: any) => m.role === "user").content;
  return {
    caller,
    said: (role: string) => messages.filter((m) => m.role === role).map((m) => m.text),
    asked: requests.map(lastUser),
  };
}

const agentFinal = (e: any) => e.type === "transcript" && e.role === "ASSISTANT" && e.final;
const callerFinal = (e: any) => e.type === "transcript" && e.role === "USER" && e.final;
/** Every ASSISTANT transcript text the caller was sent. */
const agentTexts = (caller: WsCaller) =>
  caller.events.filter((e) => e.type === "transcript" && e.role === "ASSISTANT").map((e) => e.text as string);

beforeAll(() => {
  world.chat.reply = scriptedReplies([]); // "You said: <last user message>"
});

describe("endpointing", () => {
  test("punctuation: a pause mid-sentence continues the turn, answered once as one message (silence: twice)", async () => {
    const audio = await booking();
    const split = await call(await pipelineAssistant(null), audio, "You said: a table for two.", [
      firstHalf,
      "a table for two.",
    ]);
    expect(split.said("USER")).toEqual([firstHalf, "a table for two."]);
    expect(split.asked).toEqual([firstHalf, "a table for two."]);

    const punctuation = { endpointing: { mode: "punctuation", onNoPunctuationMs: 3000 } };
    const whole = await call(await pipelineAssistant(punctuation), audio, `You said: ${wholeSentence}`, [
      firstHalf,
      "a table for two.",
    ]);
    expect(whole.said("USER")).toEqual([wholeSentence]);
    expect(whole.said("ASSISTANT")).toEqual([`You said: ${wholeSentence}`]);
    expect(whole.asked).toEqual([wholeSentence]);
  }, 90_000);

  test("model: Deepgram Flux at /v2/listen ends the turn at EndOfTurn, with eot_threshold and eot_timeout_ms", async () => {
    const assistantId = await pipelineAssistant(
      { endpointing: { mode: "model", eotThreshold: 0.8, eotTimeoutMs: 3000 } },
      { model: "flux-general-en" },
    );
    const flux = stt.fluxStreams.length;
    const { said, asked } = await call(assistantId, await booking(), `You said: ${wholeSentence}`, [
      firstHalf,
      "a table for two.",
    ]);
    expect(said("USER")).toEqual([wholeSentence]);
    expect(asked).toEqual([wholeSentence]);
    const stream = stt.fluxStreams[flux]!;
    expect(new URL(stream.request.url, "ws://x").pathname).toBe("/v2/listen");
    expect(Object.fromEntries(stream.query)).toEqual({
      model: "flux-general-en",
      encoding: "linear16",
      sample_rate: "16000",
      eot_threshold: "0.8",
      eot_timeout_ms: "3000",
    });
    expect(stream.request.headers.authorization).toBe(`Token ${keys.DEEPGRAM_API_KEY}`);
    expect(stream.sent.filter((e) => e.event === "EndOfTurn")).toEqual([
      { event: "EndOfTurn", transcript: wholeSentence },
    ]);
  }, 60_000);
});

describe("preemptive generation", () => {
  test("punctuation: the LLM is asked at the VAD's stop, its answer used once the turn ends, never heard before", async () => {
    const assistantId = await pipelineAssistant({
      endpointing: { mode: "punctuation", onPunctuationMs: 1000 },
      preemptiveGeneration: true,
    });
    // whether the caller had been told its turn was over when the LLM was asked
    const turnOverWhenAsked: boolean[] = [];
    const script = scriptedReplies([]);
    let live: WsCaller | null = null;
    world.chat.reply = (body) => {
      turnOverWhenAsked.push(live?.events.some(callerFinal) ?? false);
      return script(body);
    };
    try {
      const question = "What time do you open?";
      const result = await call(assistantId, await speech(question, rate), `You said: ${question}`, [question], (c) => {
        live = c;
      });
      expect(result.asked).toEqual([question]);
      expect(result.said("USER")).toEqual([question]);
      expect(result.said("ASSISTANT")).toEqual([`You said: ${question}`]);
      // asked once, before the turn ended; nothing of the answer heard before it ended
      expect(turnOverWhenAsked).toEqual([false]);
      const turnEnded = result.caller.events.findIndex(callerFinal);
      expect(result.caller.framesBefore[turnEnded]).toBe(0);
      expect(result.caller.frames.length).toBeGreaterThan(0);
    } finally {
      world.chat.reply = scriptedReplies([]);
    }
  }, 60_000);

  test("punctuation: speech in the wait cancels the prepared answer; the whole sentence is asked and heard", async () => {
    const assistantId = await pipelineAssistant({
      endpointing: { mode: "punctuation", onNoPunctuationMs: 3000 },
      preemptiveGeneration: true,
    });
    const result = await call(assistantId, await booking(), `You said: ${wholeSentence}`, [
      firstHalf,
      "a table for two.",
    ]);
    expect(result.asked).toEqual([firstHalf, wholeSentence]);
    expect(result.said("USER")).toEqual([wholeSentence]);
    expect(result.said("ASSISTANT")).toEqual([`You said: ${wholeSentence}`]);
    expect(agentTexts(result.caller)).not.toContain(`You said: ${firstHalf}`);
  }, 60_000);

  // runs beside the Realtime test below (test.concurrent): that call has a fake provider of its own and
  // uses neither the STT nor the streamed LLM this one reads
  test.concurrent("model: asked at Flux's EagerEndOfTurn (eager_eot_threshold 0.5), dropped at TurnResumed, used at EndOfTurn", async () => {
    const assistantId = await pipelineAssistant(
      { endpointing: { mode: "model", eotTimeoutMs: 3000 }, preemptiveGeneration: true },
      { model: "flux-general-en" },
    );
    const flux = stt.fluxStreams.length;
    const result = await call(assistantId, await booking(), `You said: ${wholeSentence}`, [
      firstHalf,
      "a table for two.",
    ]);
    const stream = stt.fluxStreams[flux]!;
    expect(stream.query.get("eager_eot_threshold")).toBe("0.5");
    expect(stream.sent.filter((e) => e.event !== "Update")).toEqual([
      { event: "StartOfTurn", transcript: "" },
      { event: "EagerEndOfTurn", transcript: firstHalf },
      { event: "TurnResumed", transcript: firstHalf },
      { event: "EagerEndOfTurn", transcript: wholeSentence },
      { event: "EndOfTurn", transcript: wholeSentence },
    ]);
    expect(result.asked).toEqual([firstHalf, wholeSentence]);
    expect(result.said("USER")).toEqual([wholeSentence]);
    expect(result.said("ASSISTANT")).toEqual([`You said: ${wholeSentence}`]);
    expect(agentTexts(result.caller)).not.toContain(`You said: ${firstHalf}`);
  }, 60_000);
});

test.concurrent("openai_realtime: model is semantic_vad with its eagerness; interruption off sends interrupt_response false", async () => {
  const question = "What time do you open?";
  const { id, fake } = await createAssistant(world, {
    fake: { turns: [{ userSays: question, reply: { text: "We open at nine." } }] },
    extensions: [
      {
        type: "turn_taking",
        parameters: { endpointing: { mode: "model", eagerness: "high" }, interruption: { enabled: false } },
      },
    ],
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: id,
    sampleRate: String(rate),
    token: world.tenant.orgToken,
  });
  await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  const session = await fake.nextSession();
  await caller.say(await speech(question, rate));
  await caller.waitFor((e) => agentFinal(e) && e.text === "We open at nine.", 20_000);
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const update = session.received.find((e) => e.type === "session.update")!;
  expect(update.session.turn_detection).toEqual({
    type: "semantic_vad",
    eagerness: "high",
    create_response: true,
    interrupt_response: false,
  });
}, 60_000);
