// Whole calls through the bridge in both wire formats, with real speech, real tool servers, and the
// hooks delivered through Temporal to a real receiver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseWav } from "../../src/audio/wav";
import { rms } from "../../src/audio/pcm";
import { speech } from "../helpers/speech";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { dialNative, dialTwilio } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor, startWorld, type World } from "./fixtures";

let world: World;
let worker: TestWorker;
let tools: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, worker, tools] = await Promise.all([startWorld(), startWorker({ address, backoffBaseMs: 1_000 }), startReceiver()]);
  // the tool server answers from the parameters, so each call's answer is its own
  tools.respond((req) => {
    const body = JSON.parse(req.body.toString());
    return { status: 200, body: `Order ${body.parameters.orderId} ships tomorrow.` };
  });
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await Promise.all([worker?.kill(), tools?.close()]);
});

describe("a full call in our wire format", () => {
  test("greeting, two turns, a tool call, a summary; hooks delivered through Temporal", async () => {
    const assistant = await createAssistant(world, {
      greeting: "Hello, Acme here.",
      tools: [{ name: "lookup_order", serverUrl: `${tools.url}/orders`, headers: { Authorization: "Bearer tool-secret" } }],
      fake: {
        turns: [
          { userSays: "Where is my order 42?", reply: { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] } },
          { userSays: "Thanks, bye.", reply: { text: "Goodbye!", toolCalls: [{ name: "end_call", arguments: { reason: "done" } }] } },
        ],
      },
    });
    const caller = await dialNative(world.bridge.url, { assistantId: assistant.id, sampleRate: "16000" }, { authorization: `Bearer ${world.tenant.orgToken}` });
    const ready = await caller.waitFor((e) => e.type === "ready");
    expect(ready).toEqual({ type: "ready", callId: expect.any(String), sampleRate: 16000 });
    caller.startStreaming();
    await caller.waitFor((e) => e.type === "transcript" && e.final && e.text === "Hello, Acme here.");
    await caller.waitForQuiet();
    await caller.say(await speech("Where is my order forty two?", 16000));
    await caller.waitFor((e) => e.type === "transcript" && e.final && e.text.startsWith("lookup_order:"));
    await caller.waitForQuiet();
    await caller.say(await speech("Thanks, bye.", 16000));
    const closed = await caller.closed;
    expect(closed.code).toBe(1000);
    expect(caller.events.at(-1)).toEqual({ type: "ended", reason: "agent-hangup" });
    // every agent frame is 20 ms at the call's rate, and the agent's speech was heard
    expect(caller.frames.every((f) => f.length === 320)).toBe(true);
    expect(rms(caller.heardAudio())).toBeGreaterThan(500);

    const callId: string = ready.callId;
    const started = await hookFor(world, callId, "call_started");
    expect(started).toEqual({ type: "call_started", callId, startedAt: expect.any(Number), transport: { type: "websocket" } });
    const concluded = await hookFor(world, callId, "call_concluded");
    expect(Object.keys(concluded).sort()).toEqual(["callId", "callRecording", "endedAt", "messages", "shortSummary", "startedAt", "summary", "transport", "type"]);
    expect(concluded).toMatchObject({ type: "call_concluded", callId, startedAt: started.startedAt, transport: { type: "websocket" } });
    expect(concluded.endedAt).toBeGreaterThan(concluded.startedAt);
    expect(concluded.shortSummary).toBe(world.chat.summary.shortSummary);
    expect(concluded.summary).toBe(world.chat.summary.summary);

    const messages = concluded.messages as any[];
    console.log(JSON.stringify(messages.map((m) => [m.timestamp - concluded.startedAt, m.role, m.text])), caller.events.filter((e) => e.type !== "transcript" || e.final).map((e) => e.type + ":" + e.text).join(" | "));
    const toolCallId = messages.find((m) => m.type === "tool_call")?.callId;
    expect(messages.map(({ timestamp, ...m }) => m)).toEqual([
      { type: "text", role: "ASSISTANT", text: "Hello, Acme here." },
      { type: "text", role: "USER", text: "Where is my order 42?" },
      { type: "text", role: "ASSISTANT", text: "Let me check." },
      { type: "tool_call", role: "TOOL_CALL", callId: toolCallId, toolName: "lookup_order", parameters: { orderId: "42" } },
      { type: "tool_result", role: "TOOL_CALL_RESULT", callId: toolCallId, toolName: "lookup_order", text: "Order 42 ships tomorrow." },
      { type: "text", role: "ASSISTANT", text: "lookup_order: Order 42 ships tomorrow." },
      { type: "text", role: "USER", text: "Thanks, bye." },
      { type: "text", role: "ASSISTANT", text: "Goodbye!" },
    ]);
    const stamps = messages.map((m) => m.timestamp);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(stamps[0]).toBeGreaterThanOrEqual(concluded.startedAt);
    expect(stamps.at(-1)).toBeLessThanOrEqual(concluded.endedAt);

    // the recording: a WAV of the whole call at the call's rate, both sides in it
    const wav = parseWav(Buffer.from(concluded.callRecording, "base64"));
    expect(wav.sampleRate).toBe(16000);
    const seconds = wav.samples.length / 16000;
    expect(Math.abs(seconds - (concluded.endedAt - concluded.startedAt) / 1000)).toBeLessThan(0.1);
    expect(rms(wav.samples)).toBeGreaterThan(300);

    // the tool server got the spec's body with the static headers
    const toolRequest = tools.requests.at(-1)!;
    expect(toolRequest.headers.authorization).toBe("Bearer tool-secret");
    expect(JSON.parse(toolRequest.body.toString())).toEqual({ type: "tool_webhook", name: "lookup_order", callId, transport: { type: "websocket" }, parameters: { orderId: "42" } });
    // the summary saw the conversation
    expect(JSON.stringify(world.chat.requests.at(-1)!.body.messages)).toContain("Where is my order 42?");

    const task = await agentTask(world, callId);
    expect(task).toMatchObject({ callId, assistantId: assistant.id, status: "completed", error: null, transport: { type: "websocket" } });
    expect(new Date(task.startedAt).getTime()).toBe(concluded.startedAt);
    expect(new Date(task.endedAt).getTime()).toBe(concluded.endedAt);
  }, 60_000);
});
