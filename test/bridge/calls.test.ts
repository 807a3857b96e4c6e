// Whole calls through the bridge in both wire formats, with real speech, real tool servers, and the
// hooks delivered through Temporal to a real receiver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { bytesToPcm, rms } from "../../src/audio/pcm";
import { startBridge } from "../../src/bridge/ws-server";
import { toolFailureMessage } from "../../src/calls/tool-webhook";
import { loadConfig } from "../../src/config";
import { at } from "../hooks/fixtures";
import { createTenant } from "../helpers/api";
import { speech } from "../helpers/speech";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { dialNative, dialTwilio, refusal } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor, orderLookupExchange, startWorld, type World } from "./fixtures";

let world: World;
let worker: TestWorker;
let tools: Receiver;
let brokenTools: Receiver;
let slowTools: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, worker, tools, brokenTools, slowTools] = await Promise.all([
    startWorld({ TOOL_TIMEOUT_MS: "1500" }),
    startWorker({ address, backoffBaseMs: 1_000 }),
    startReceiver(),
    startReceiver(() => ({ status: 500, body: "database exploded: secret stack trace" })),
    startReceiver(() => "hang"),
  ]);
  // the tool server answers from the parameters, so each call's answer is its own
  tools.respond((req) => {
    const body = JSON.parse(req.body.toString());
    return { status: 200, body: `Order ${body.parameters.orderId} ships tomorrow.` };
  });
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([worker?.kill(), tools?.close(), brokenTools?.close(), slowTools?.close()]);
});

describe("a full call in our wire format", () => {
  test("greeting, two turns, a tool call, a summary; hooks delivered through Temporal", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hello, Acme here.",
      tools: [
        { name: "lookup_order", serverUrl: `${tools.url}/orders`, headers: { Authorization: "Bearer tool-secret" } },
      ],
      fake: {
        turns: [
          {
            userSays: "Where is my order 42?",
            reply: { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
          },
          {
            userSays: "Thanks, bye.",
            reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "done" } }] },
          },
        ],
      },
    });
    const caller = await dialNative(
      world.bridge.url,
      { assistantId: assistant.id, sampleRate: "16000" },
      { authorization: `Bearer ${world.tenant.orgToken}` },
    );
    const ready = await caller.waitFor((e) => e.type === "ready");
    expect(ready).toEqual({ type: "ready", callId: expect.any(String), sampleRate: 16000 });
    caller.startStreaming();
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("Where is my order forty two?", 16000));
    await caller.waitForAgentSaid("lookup_order:");
    await caller.say(await speech("Thanks, bye.", 16000));
    const closed = await caller.closed;
    expect(closed.code).toBe(1000);
    expect(caller.events.at(-1)).toEqual({ type: "ended", callId: ready.callId, reason: "agent-hangup" });
    // every agent frame is 20 ms at the call's rate, and the agent's speech was heard
    expect(caller.frames.every((f) => f.length === 320)).toBe(true);
    expect(rms(caller.heardAudio())).toBeGreaterThan(500);

    const callId: string = ready.callId;
    const started = await hookFor(world, callId, "call_started");
    expect(started).toEqual({
      type: "call_started",
      callId,
      direction: "inbound",
      startedAt: expect.any(Number),
      transport: { type: "websocket" },
    });
    const concluded = await hookFor(world, callId, "call_concluded");
    expect(Object.keys(concluded).sort()).toEqual([
      "callId",
      "callRecording",
      "direction",
      "endedAt",
      "endedReason",
      "latency",
      "messages",
      "shortSummary",
      "startedAt",
      "summary",
      "transport",
      "type",
      "variables",
    ]);
    expect(concluded).toMatchObject({
      type: "call_concluded",
      callId,
      startedAt: started.startedAt,
      transport: { type: "websocket" },
    });
    expect(concluded.endedAt).toBeGreaterThan(concluded.startedAt);
    expect(concluded.shortSummary).toBe(world.chat.summary.shortSummary);
    expect(concluded.summary).toBe(world.chat.summary.summary);

    const messages = concluded.messages as any[];
    const toolCallId = messages.find((m) => m.type === "tool_call")?.callId;
    expect(messages.map(({ timestamp, ...m }) => m)).toEqual([
      ...orderLookupExchange(toolCallId),
      { type: "text", role: "ASSISTANT", text: "lookup_order: Order 42 ships tomorrow." },
      { type: "text", role: "USER", text: "Thanks, bye." },
      { type: "text", role: "ASSISTANT", text: "Goodbye!" },
    ]);
    const stamps = messages.map((m) => m.timestamp);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(stamps[0]).toBeGreaterThanOrEqual(concluded.startedAt);
    expect(stamps.at(-1)).toBeLessThanOrEqual(concluded.endedAt);

    // the recording: a WAV of the whole call, both sides in it, G.711 mu-law at 8 kHz (RECORDING_FORMAT=ulaw)
    const recording = Buffer.from(concluded.callRecording, "base64");
    expect(recording.readUInt16LE(20)).toBe(7);
    const wav = parseWav(recording);
    expect(wav.sampleRate).toBe(8000);
    const seconds = wav.samples.length / 8000;
    expect(Math.abs(seconds - (concluded.endedAt - concluded.startedAt) / 1000)).toBeLessThan(0.1);
    expect(rms(wav.samples)).toBeGreaterThan(300);

    // the tool server got the spec's body with the static headers
    const toolRequest = tools.requests.at(-1)!;
    expect(toolRequest.headers.authorization).toBe("Bearer tool-secret");
    expect(JSON.parse(toolRequest.body.toString())).toEqual({
      type: "tool_webhook",
      name: "lookup_order",
      callId,
      transport: { type: "websocket" },
      parameters: { orderId: "42" },
    });
    // the summary saw the conversation
    expect(JSON.stringify(world.chat.requests.at(-1)!.body.messages)).toContain("Where is my order 42?");

    const task = await agentTask(world, callId);
    expect(task).toMatchObject({
      callId,
      assistantId: assistant.id,
      status: "completed",
      error: null,
      transport: { type: "websocket" },
    });
    expect(new Date(task.startedAt).getTime()).toBe(concluded.startedAt);
    expect(new Date(task.endedAt).getTime()).toBe(concluded.endedAt);
  }, 60_000);
});

// the Twilio calls and the tool webhook call run at once (test.concurrent): each has an assistant with
// a fake provider of its own and reads its own call's record
describe("Twilio Media Streams", () => {
  test.concurrent("the caller's mu-law reaches a g711_ulaw provider byte for byte, both mu-law zeros included", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hello.",
      fake: { keepInputAudio: true, speechThreshold: 40_000 }, // no barge-in: only the bytes matter
    });
    const caller = await dialTwilio(world.bridge.url, { assistantId: assistant.id, token: world.tenant.orgToken });
    const provider = await assistant.fake.nextSession();
    caller.startStreaming(); // silence (0xff) starts the call
    await caller.until(() => provider.inputAudio.length > 0, 10_000, "caller audio at the provider");
    const frame = Uint8Array.from({ length: 160 }, (_, i) => (0x7f + i * 37) & 0xff); // 0x7f first
    caller.sendJson({
      event: "media",
      sequenceNumber: "5000",
      media: { track: "inbound", chunk: "5000", timestamp: "100000", payload: Buffer.from(frame).toString("base64") },
      streamSid: "MZtest",
    });
    await caller.until(
      () => Buffer.concat(provider.inputAudio).includes(Buffer.from(frame)), // inside a 100 ms append
      10_000,
      "the frame unchanged at the provider",
    );
    caller.sendJson({ event: "stop", sequenceNumber: "5001", stop: {}, streamSid: "MZtest" });
    expect((await caller.closed).code).toBe(1000);
  }, 30_000);

  test.concurrent("mu-law both ways, barge-in clears Twilio's buffer, stop hangs up", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hi, this is the Acme front desk, thank you for calling us today.",
      fake: { turns: [{ userSays: "What time do you open?", reply: { text: "We open at nine." } }] },
    });
    const caller = await dialTwilio(world.bridge.url, { assistantId: assistant.id, token: world.tenant.orgToken });
    caller.startStreaming();
    // the greeting lasts about 0.8 s; the caller talks over it
    await caller.until(() => caller.frames.length >= 5, 10_000, "greeting audio");
    await caller.say(await speech("What time do you open?", 8000));
    const clear = await caller.waitFor((e) => e.event === "clear");
    expect(clear).toEqual({ event: "clear", streamSid: "MZtest" });
    await caller.waitForAgentAudio();
    caller.sendJson({
      event: "stop",
      sequenceNumber: "999",
      stop: { accountSid: "ACtest", callSid: "CAtest" },
      streamSid: "MZtest",
    });
    expect((await caller.closed).code).toBe(1000);

    const { callId } = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?assistantId=${assistant.id}`)).body
      .data[0];
    const concluded = await hookFor(world, callId, "call_concluded");
    expect(await agentTask(world, callId)).toMatchObject({ status: "completed", transport: { type: "websocket" } });
    const [greeting, ...rest] = concluded.messages;
    // talked over: the words heard (or the audio, if not one was), unless its text was complete before the call started
    expect(greeting.role).toBe("ASSISTANT");
    if (greeting.type === "text")
      expect("Hi, this is the Acme front desk, thank you for calling us today.".startsWith(greeting.text)).toBe(true);
    else expect(greeting.type).toBe("audio");
    expect(rest.map(({ timestamp, ...m }: any) => m)).toEqual([
      { type: "text", role: "USER", text: "What time do you open?" },
      { type: "text", role: "ASSISTANT", text: "We open at nine." },
    ]);
    const wav = parseWav(Buffer.from(concluded.callRecording, "base64"));
    expect(wav.sampleRate).toBe(8000);
    expect(Math.abs(wav.samples.length / 8000 - (concluded.endedAt - concluded.startedAt) / 1000)).toBeLessThan(0.1);
  }, 30_000);

  test.concurrent("the assistant and token may come as custom parameters of the start event", async () => {
    const assistant = await createAssistant(world, { greeting: "Hello there." });
    const caller = await dialTwilio(world.bridge.url, {}, { assistantId: assistant.id, token: world.tenant.orgToken });
    caller.startStreaming();
    await caller.waitForAgentAudio();
    expect(rms(caller.heardAudio())).toBeGreaterThan(500);
    caller.ws.close();
    await caller.closed;

    const refused = await dialTwilio(world.bridge.url, {}, { assistantId: assistant.id, token: "not-a-token" });
    expect(await refused.closed).toEqual({ code: 1008, reason: "missing or invalid bearer token" });
  }, 20_000);
});

describe("tool webhooks", () => {
  test.concurrent("parallel calls each get their own answer; an error and a time-out give the generic string", async () => {
    const assistant = await createAssistant(world, {
      tools: [
        { name: "lookup_order", serverUrl: `${tools.url}/orders` },
        { name: "broken_tool", serverUrl: `${brokenTools.url}/broken` },
        { name: "slow_tool", serverUrl: `${slowTools.url}/slow` },
      ],
      fake: {
        turns: [
          {
            userSays: "Check my orders.",
            reply: {
              toolCalls: [
                { name: "lookup_order", arguments: { orderId: "A1" } },
                { name: "lookup_order", arguments: { orderId: "B2" } },
                { name: "broken_tool", arguments: { orderId: "C3" } },
                { name: "slow_tool", arguments: { orderId: "D4" } },
              ],
            },
          },
        ],
      },
    });
    const caller = await dialNative(world.bridge.url, {
      assistantId: assistant.id,
      sampleRate: "8000",
      token: world.tenant.orgToken,
    });
    const { callId } = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.say(await speech("Check my orders.", 8000));
    const quote = await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final, 15_000);
    caller.sendJson({ type: "hangup" });
    await caller.closed;

    const concluded = await hookFor(world, callId, "call_concluded");
    const calls = concluded.messages.filter((m: any) => m.type === "tool_call");
    const results = concluded.messages.filter((m: any) => m.type === "tool_result");
    expect(calls).toHaveLength(4);
    expect(new Set(calls.map((c: any) => c.callId)).size).toBe(4);
    const resultFor = (orderId: string) => {
      const call = calls.find((c: any) => c.parameters.orderId === orderId);
      return results.find((r: any) => r.callId === call.callId);
    };
    expect(resultFor("A1")).toMatchObject({ toolName: "lookup_order", text: "Order A1 ships tomorrow." });
    expect(resultFor("B2")).toMatchObject({ toolName: "lookup_order", text: "Order B2 ships tomorrow." });
    expect(resultFor("C3")).toMatchObject({ toolName: "broken_tool", text: toolFailureMessage });
    expect(resultFor("D4")).toMatchObject({ toolName: "slow_tool", text: toolFailureMessage });
    // the provider got each result under its own call id, then one answer quoting them all
    const provider = at(assistant.fake.sessions);
    expect(provider.toolOutputs.map((o) => o.output).sort()).toEqual(
      ["Order A1 ships tomorrow.", "Order B2 ships tomorrow.", toolFailureMessage, toolFailureMessage].sort(),
    );
    expect(quote.text).toContain("lookup_order: Order A1 ships tomorrow.");
    expect(quote.text).toContain("lookup_order: Order B2 ships tomorrow.");
    // the error body never reaches the LLM or the record
    expect(JSON.stringify(concluded)).not.toContain("secret stack trace");
  }, 30_000);
});

describe("how calls end", () => {
  test("the caller hanging up mid-sentence: an untranscribed utterance is kept as audio", async () => {
    const assistant = await createAssistant(world, { greeting: "Hello." });
    const caller = await dialNative(world.bridge.url, {
      assistantId: assistant.id,
      sampleRate: "16000",
      token: world.tenant.orgToken,
    });
    const { callId } = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.waitForAgentSaid("Hello.");
    void caller.say(await speech("I would like to ask about a very long and complicated order", 16000));
    await caller.waitFor((e) => e.type === "interrupt"); // the provider heard speech start
    await Bun.sleep(300);
    caller.ws.terminate(); // no close frame: a dropped connection

    const concluded = await hookFor(world, callId, "call_concluded");
    expect(concluded.messages.map((m: any) => [m.type, m.role])).toEqual([
      ["text", "ASSISTANT"],
      ["audio", "USER"],
    ]);
    const heard = bytesToPcm(Buffer.from(concluded.messages[1].audio, "base64"));
    expect(heard.length).toBeGreaterThan(16000 * 0.2);
    expect(rms(heard)).toBeGreaterThan(500);
    expect(await agentTask(world, callId)).toMatchObject({ status: "completed", error: null });
  }, 20_000);

  test("the provider dropping fails the call but still concludes it (without a summary when that fails too)", async () => {
    const assistant = await createAssistant(world, { greeting: "Hello." });
    world.chat.mode = "error";
    const caller = await dialNative(world.bridge.url, {
      assistantId: assistant.id,
      sampleRate: "24000",
      token: world.tenant.orgToken,
    });
    const { callId } = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.waitForAgentSaid("Hello.");
    (await assistant.fake.nextSession()).drop();
    await caller.closed;
    expect(caller.events.slice(-2)).toEqual([
      { type: "error", message: expect.stringContaining("voice provider disconnected") },
      { type: "ended", callId, reason: "provider-disconnected" },
    ]);
    const concluded = await hookFor(world, callId, "call_concluded");
    world.chat.mode = "ok";
    expect(concluded.messages.map((m: any) => m.text)).toEqual(["Hello."]);
    // the summary request failed: the fields are null, so left out of the payload
    expect(world.chat.requests.at(-1)!.body.messages[1].content).toBe("ASSISTANT: Hello.");
    expect(concluded).not.toContainKey("shortSummary");
    expect(concluded).not.toContainKey("summary");
    expect(parseWav(Buffer.from(concluded.callRecording, "base64")).sampleRate).toBe(8000);
    const task = await agentTask(world, callId);
    expect(task.status).toBe("failed");
    expect(task.error).toContain("voice provider disconnected");
  }, 20_000);

  test("a maximum call duration ends the call (an agent, reached by agentId)", async () => {
    const short = await startBridge(
      loadConfig({
        ...process.env,
        OPENAI_BASE_URL: world.chat.baseUrl,
        OPENAI_REALTIME_URL: world.realtime.url,
        MAX_CALL_MS: "1500",
        BRIDGE_INSTANCE_ID: `short-${process.pid}`,
      }),
      { port: 0 },
    );
    try {
      const agent = await createAssistant(world, { kind: "agents", greeting: "Hi." });
      const caller = await dialNative(short.url, {
        agentId: agent.id,
        sampleRate: "8000",
        token: world.tenant.vendorToken,
      });
      const { callId } = await caller.waitFor((e) => e.type === "ready");
      caller.startStreaming();
      await caller.closed;
      expect(caller.events.at(-1)).toEqual({ type: "ended", callId, reason: "max-duration" });
      const concluded = await hookFor(world, callId, "call_concluded");
      expect(concluded.messages).toEqual([
        { type: "text", role: "ASSISTANT", text: "Hi.", timestamp: concluded.startedAt },
      ]);
      const task = await agentTask(world, callId);
      expect(task).toMatchObject({ agentId: agent.id, assistantId: null, status: "completed" });
    } finally {
      await short.stop();
    }
  }, 20_000);
});

describe("calls that cannot start", () => {
  test.each([
    [
      "an unknown strategy type",
      { strategy: { type: "magic_llm" } },
      'unknown LLM generation strategy type "magic_llm"',
    ],
    ["no strategy at all", { strategy: null }, "the assistant has no LLM generation strategy"],
  ] as const)(
    "%s fails the call with a clear error and a failed task",
    async (_name, spec, message) => {
      const assistant = await createAssistant(world, spec);
      const caller = await dialNative(world.bridge.url, {
        assistantId: assistant.id,
        sampleRate: "16000",
        token: world.tenant.orgToken,
      });
      caller.startStreaming();
      await caller.closed;
      const callId = caller.events.at(-1).callId;
      expect(caller.events).toEqual([
        { type: "error", message },
        { type: "ended", callId, reason: "voice-unavailable" },
      ]);
      expect(assistant.fake.sessions).toHaveLength(0);
      const concluded = await hookFor(world, callId, "call_concluded");
      expect(concluded).toEqual({
        type: "call_concluded",
        callId,
        direction: "inbound",
        endedAt: expect.any(Number),
        endedReason: "failed",
        variables: expect.any(Object),
        transport: { type: "websocket" },
        messages: [],
      });
      expect(await agentTask(world, callId)).toMatchObject({ status: "failed", error: message, startedAt: null });
    },
    20_000,
  );

  test("bad requests are refused before the upgrade, with no task and no provider session", async () => {
    const other = await createTenant(world.api.url, "other");
    const foreign = await createAssistant(world, { tenant: other, greeting: "Hi." });
    const mine = await createAssistant(world, { greeting: "Hi." });
    const tasksBefore = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks`)).body.totalElements;
    const calls = (query: Record<string, string>, headers?: Record<string, string>) =>
      refusal(world.bridge.url, "/v1/calls", query, headers);

    expect(await calls({ assistantId: mine.id })).toEqual({ status: 401, message: "missing or invalid bearer token" });
    expect(await calls({ assistantId: mine.id, token: "nope" })).toEqual({
      status: 401,
      message: "missing or invalid bearer token",
    });
    expect(await calls({ assistantId: mine.id }, { authorization: "Bearer nope" })).toMatchObject({ status: 401 });
    expect(await calls({ assistantId: crypto.randomUUID(), token: world.tenant.orgToken })).toEqual({
      status: 404,
      message: "assistant not found",
    });
    expect(await calls({ assistantId: foreign.id, token: world.tenant.orgToken })).toEqual({
      status: 404,
      message: "assistant not found",
    });
    expect(await calls({ assistantId: foreign.id, token: world.tenant.vendorToken })).toEqual({
      status: 404,
      message: "assistant not found",
    });
    expect(await calls({ agentId: mine.id, token: world.tenant.orgToken })).toEqual({
      status: 404,
      message: "agent not found",
    });
    expect(await calls({ assistantId: "42", token: world.tenant.orgToken })).toMatchObject({ status: 400 });
    expect(await calls({ assistantId: mine.id, sampleRate: "44100", token: world.tenant.orgToken })).toEqual({
      status: 400,
      message: "sampleRate: must be one of 8000, 16000, 24000",
    });
    expect(await refusal(world.bridge.url, "/v1/twilio", { assistantId: mine.id, token: "nope" })).toMatchObject({
      status: 401,
    });

    expect((await world.tenant.org.get(`${world.tenant.P}/agent-tasks`)).body.totalElements).toBe(tasksBefore);
    expect(foreign.fake.sessions).toHaveLength(0);
    expect((await other.org.get(`${other.P}/agent-tasks`)).body.totalElements).toBe(0);
    // the same request with a good token is upgraded (then dropped before it says anything)
    expect(await calls({ assistantId: mine.id, token: world.tenant.orgToken })).toBe("upgraded");
    expect(mine.fake.sessions.length).toBeLessThanOrEqual(1);
    expect(foreign.fake.sessions).toHaveLength(0);
  }, 20_000);
});
