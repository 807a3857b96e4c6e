// Whole calls on a `pipeline` strategy through the bridge: Silero VAD in the bridge, the Deepgram,
// ElevenLabs and chat completions fakes as providers, a real tool server, hooks through Temporal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rms } from "../../src/audio/pcm";
import { scriptedReplies } from "../fakes/chat-completions-server";
import type { FakeDeepgramServer } from "../fakes/deepgram-server";
import type { FakeElevenLabsServer } from "../fakes/elevenlabs-server";
import { toolSchema } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { dialNative, dialTwilio } from "../helpers/ws-caller";
import { agentTask, hookFor, orderLookupExchange, type World } from "../bridge/fixtures";
import { type PipelineWorld, startPipelineWorld } from "./pipeline-fakes";

let pipeline: PipelineWorld;
let world: World;
let tools: Receiver;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;

beforeAll(async () => {
  [pipeline, tools] = await Promise.all([
    startPipelineWorld({ env: { TOOL_TIMEOUT_MS: "3000" } }),
    startReceiver((req) => ({
      status: 200,
      body: `Order ${JSON.parse(req.body.toString()).parameters.orderId} ships tomorrow.`,
    })),
  ]);
  ({ world, stt, tts } = pipeline);
}, 60_000);
afterAll(async () => {
  await Promise.all([pipeline?.stop(), tools?.close()]);
});

async function pipelineAssistant(
  greeting: string,
  parameters: Record<string, unknown> = {},
  moreExtensions: unknown[] = [],
) {
  const { org, P } = world.tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "pipeline",
    type: "pipeline",
    parameters: { vad: { startDuration: 64, stopDuration: 300 }, ...parameters },
  });
  expect(strategy.status).toBe(201);
  const created = await org.post(`${P}/assistants`, {
    name: "pipeline desk",
    systemPrompt: "You are the Acme front desk.",
    systemPromptGreeting: greeting,
    llmAudioContentGenerationStrategyId: strategy.body.data.id,
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: "lookup_order", serverUrl: `${tools.url}/orders`, schema: toolSchema("lookup_order") },
      },
      ...moreExtensions,
    ],
    callEventHooks: ["call_started", "call_concluded"].map((type) => ({
      type,
      parameters: { url: `${world.hooks.url}/hooks` },
    })),
  });
  expect(created.status).toBe(201);
  return created.body.data.id as string;
}

/** Where the voice starts in espeak's output, in ms. */
function onsetMs(samples: Int16Array, rate: number) {
  const frame = rate / 100;
  for (let i = 0; i + frame <= samples.length; i += frame)
    if (rms(samples.subarray(i, i + frame)) > 300) return (i * 1000) / rate;
  return 0;
}

describe("a pipeline call", () => {
  test("our wire format: greeting, a tool call, end_call; call_concluded and a completed task", async () => {
    stt.transcripts.push("Where is my order 42?", "Thanks, bye.");
    world.chat.reply = scriptedReplies([
      { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
      { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "done" } }] },
    ]);
    const assistantId = await pipelineAssistant("Hello, Acme here.");
    const caller = await dialNative(world.bridge.url, {
      assistantId,
      sampleRate: "16000",
      token: world.tenant.orgToken,
    });
    const ready = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    // the pipeline sends an utterance's final transcript once its audio has played
    await agentSaid(caller, "Hello, Acme here.");
    await caller.say(await speech("Where is my order forty two?", 16000));
    await agentSaid(caller, "lookup_order:");
    await caller.say(await speech("Thanks, bye.", 16000));
    expect((await caller.closed).code).toBe(1000);
    expect(caller.events.at(-1)).toEqual({ type: "ended", callId: ready.callId, reason: "agent-hangup" });
    expect(rms(caller.heardAudio())).toBeGreaterThan(300);

    const concluded = await hookFor(world, ready.callId, "call_concluded");
    const messages = concluded.messages as any[];
    const toolCallId = messages.find((m) => m.type === "tool_call")?.callId;
    expect(messages.map(({ timestamp, ...m }) => m)).toEqual([
      ...orderLookupExchange(toolCallId),
      { type: "text", role: "ASSISTANT", text: "lookup_order: Order 42 ships tomorrow." },
      { type: "text", role: "USER", text: "Thanks, bye." },
      { type: "text", role: "ASSISTANT", text: "Goodbye!" },
    ]);
    expect(concluded.shortSummary).toBe(world.chat.summary.shortSummary);
    expect(await agentTask(world, ready.callId)).toMatchObject({ status: "completed", error: null });
    // 16 kHz call: Deepgram heard linear16 at 16 kHz, ElevenLabs was asked for pcm_16000
    const stream = stt.streams.at(-1)!;
    expect(Object.fromEntries(stream.query)).toMatchObject({ encoding: "linear16", sample_rate: "16000" });
    expect(stream.control.filter((c) => c.type === "Finalize").length).toBeGreaterThanOrEqual(2);
    expect(tts.streams.at(-1)!.query.get("output_format")).toBe("pcm_16000");
  }, 60_000);

  test("a knowledge_base tool (one of our knowledge bases) answers the LLM's search", async () => {
    const { org, P } = world.tenant;
    const kb = (await org.post(`${P}/knowledge-bases`, { name: "visitors" })).body.data.id;
    await org.post(`${P}/knowledge-bases/${kb}/documents`, {
      title: "Visiting us",
      content: "# Parking\n\nVisitors park for free behind the building.\n\n# Pets\n\nDogs are welcome.",
    });
    stt.transcripts.push("Where can I park?");
    world.chat.reply = scriptedReplies([
      {
        text: "Let me look.",
        toolCalls: [{ name: "search_knowledge_base", arguments: { query: "visitors parking" } }],
      },
    ]);
    const assistantId = await pipelineAssistant("Hello, Acme here.", {}, [
      { type: "knowledge_base", parameters: { knowledgeBaseId: kb, maxResults: 1 } },
    ]);
    const caller = await dialNative(world.bridge.url, {
      assistantId,
      sampleRate: "16000",
      token: world.tenant.orgToken,
    });
    const ready = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await agentSaid(caller, "Hello, Acme here.");
    await caller.say(await speech("Where can I park?", 16000));
    // the fake LLM reads the whole result aloud: the call ends once the tool has answered
    await caller.waitFor((e) => e.type === "tool_result", 15_000);
    caller.sendJson({ type: "hangup" });
    await caller.closed;
    const messages = (await hookFor(world, ready.callId, "call_concluded")).messages as any[];
    const result = messages.find((m) => m.type === "tool_result");
    expect(result.toolName).toBe("search_knowledge_base");
    expect(typeof result.durationMs).toBe("number");
    expect(JSON.parse(result.text).results).toEqual([
      expect.objectContaining({
        title: "Visiting us",
        content: "Parking\n\nVisitors park for free behind the building.",
      }),
    ]);
  }, 60_000);

  // the 200 ms bound is checked on the stream's clock in pipeline-session.test.ts; here wall time is
  // only bounded loosely, since the machine's load adds to it
  test("Twilio (mu-law end to end): the caller cuts in; the agent's audio stops; the message is what was heard", async () => {
    const greeting =
      "Thank you for calling Acme. Our opening hours are nine to five on weekdays, and ten to two on Saturdays. How can I help you today?";
    stt.transcripts.push("Stop please.");
    world.chat.reply = scriptedReplies([{ text: "Sure.", toolCalls: [{ name: "end_call", arguments: {} }] }]);
    const assistantId = await pipelineAssistant(greeting);
    const caller = await dialTwilio(world.bridge.url, { assistantId, token: world.tenant.orgToken });
    caller.startStreaming();
    await caller.until(() => caller.frames.length >= 75, 15_000, "1.5 s of the greeting");
    const said = await speech("Stop please.", 8000);
    const startedAt = performance.now();
    const saying = caller.say(said);
    const clear = await caller.waitFor((e) => e.event === "clear");
    expect(clear.event).toBe("clear");
    const cutAt = performance.now();
    const heardFrames = caller.frames.length;
    // the caller's voice starts a little into espeak's audio; from there to the cut-off
    expect(cutAt - (startedAt + onsetMs(said, 8000))).toBeLessThan(1000);
    await Bun.sleep(200); // still speaking: no reply yet, and nothing more of the greeting
    expect(caller.frames.length).toBeLessThanOrEqual(heardFrames + 1);
    await saying;
    await caller.closed;

    const callId = caller.events.find((e) => e.event === undefined && e.callId)?.callId ?? (await lastCallId());
    const concluded = await hookFor(world, callId, "call_concluded");
    const agentSaid = (concluded.messages as any[]).filter((m) => m.role === "ASSISTANT").map((m) => m.text);
    expect(agentSaid).toHaveLength(2);
    expect(agentSaid[1]).toBe("Sure.");
    const heard = agentSaid[0] as string;
    expect(greeting.startsWith(heard)).toBe(true);
    // the share of the greeting's text matches the share of its audio the caller heard
    const total = (await speech(greeting, 8000)).length / 160;
    const expected = heardFrames / total;
    expect(Math.abs(heard.length / greeting.length - expected)).toBeLessThan(0.2);
    expect(tts.streams.find((s) => s.spoken.includes(greeting))!.query.get("output_format")).toBe("ulaw_8000");
    expect(stt.streams.at(-1)!.query.get("encoding")).toBe("mulaw");
  }, 60_000);
});

describe("providers failing", () => {
  test("a refusing STT fails the call at once; the task says why", async () => {
    stt.mode = "refuse";
    try {
      const assistantId = await pipelineAssistant("Hello.");
      const caller = await dialNative(world.bridge.url, {
        assistantId,
        sampleRate: "8000",
        token: world.tenant.orgToken,
      });
      caller.startStreaming();
      await caller.closed;
      const ended = caller.events.at(-1);
      expect(ended.reason).toBe("voice-unavailable");
      expect(caller.events.find((e) => e.type === "error").message).toMatch(/^speech-to-text provider/);
      await hookFor(world, ended.callId, "call_concluded");
      const task = await agentTask(world, ended.callId);
      expect(task.status).toBe("failed");
      expect(task.error).toMatch(/^speech-to-text provider/);
    } finally {
      stt.mode = "ok";
    }
  }, 30_000);

  test("STT dropping mid-call ends the call cleanly, failed with the reason", async () => {
    const assistantId = await pipelineAssistant("Hello there.");
    const caller = await dialNative(world.bridge.url, {
      assistantId,
      sampleRate: "8000",
      token: world.tenant.orgToken,
    });
    const ready = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.until(() => caller.frames.length >= 10, 10_000, "greeting audio");
    stt.streams.at(-1)!.drop();
    await caller.closed;
    expect(caller.events.at(-1)).toEqual({ type: "ended", callId: ready.callId, reason: "provider-disconnected" });
    await hookFor(world, ready.callId, "call_concluded");
    const task = await agentTask(world, ready.callId);
    expect(task.status).toBe("failed");
    expect(task.error).toMatch(/^voice provider disconnected: speech-to-text provider closed the stream \(code 1006/);
  }, 30_000);
});

/** The agent's final transcript starting with `text`: sent once that utterance has played. */
function agentSaid(caller: Awaited<ReturnType<typeof dialNative>>, text: string) {
  return caller.waitFor(
    (e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final && e.text.startsWith(text),
    15_000,
  );
}

async function lastCallId(): Promise<string> {
  const list = await world.tenant.org.get(`${world.tenant.P}/agent-tasks?size=100&sort=createdAt,desc`);
  return list.body.data[0].callId;
}
