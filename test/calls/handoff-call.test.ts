// Handoffs inside live calls through the bridge (docs/handoff.md): a front desk hands the caller to a
// billing assistant. Real espeak speech from the caller over websockets, the Deepgram, ElevenLabs, chat
// completions and Realtime fakes as providers, hooks through Temporal. The fake LLM answers by the
// system prompt it is sent, so which assistant answered shows in what the caller hears.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamedReply } from "../fakes/chat-completions-server";
import type { FakeDeepgramServer } from "../fakes/deepgram-server";
import type { FakeElevenLabsServer } from "../fakes/elevenlabs-server";
import { toolSchema } from "../helpers/api";
import { speech } from "../helpers/speech";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { agentTask, hookFor, type World } from "../bridge/fixtures";
import { pipelineAssistant, type PipelineWorld, startPipelineWorld } from "../voice/pipeline-fakes";

let pipeline: PipelineWorld;
let world: World;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;

beforeAll(async () => {
  pipeline = await startPipelineWorld();
  ({ world, stt, tts } = pipeline);
}, 60_000);
afterAll(() => pipeline?.stop());

const rate = 16000;
const frontDeskPrompt = "You are the Acme front desk.";
const billingPrompt = "You are Acme billing on call {{call_id}}.";

/** The billing assistant: a voice of its own, a tool of its own, a greeting with the call's variables. */
async function billingAssistant(spec: { greeting?: string } = {}) {
  return pipelineAssistant(world, {
    name: "billing",
    systemPrompt: billingPrompt,
    greeting: spec.greeting,
    strategy: { voice: { voiceId: "billing-voice" } },
    extensions: [
      {
        type: "tool_webhook",
        parameters: {
          name: "lookup_invoice",
          serverUrl: "http://127.0.0.1:9/invoices",
          schema: toolSchema("lookup_invoice"),
        },
      },
    ],
  });
}

/** The front desk, handing over to `billingId` with `parameters` (context, maxMessages) and `message`. */
function frontDesk(billingId: string, parameters: Record<string, unknown> = {}, message?: string) {
  return pipelineAssistant(world, {
    systemPrompt: frontDeskPrompt,
    greeting: "Hello, Acme here.",
    extensions: [
      {
        type: "handoff",
        parameters: {
          destinations: [{ assistantId: billingId, description: "bills and payments", ...(message && { message }) }],
          ...parameters,
        },
      },
    ],
  });
}

/** The front desk hands over on the caller's first words; billing answers, then says goodbye. */
function squadReplies(billing: (body: any) => StreamedReply): (body: any) => StreamedReply {
  return (body) =>
    body.messages[0].content === frontDeskPrompt
      ? { toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] }
      : billing(body);
}

const agentFinals = (caller: WsCaller) =>
  caller.events.filter((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final).map((e) => e.text);

async function dial(assistantId: string) {
  const caller = await dialNative(world.bridge.url, {
    assistantId,
    sampleRate: String(rate),
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  return { caller, callId: callId as string };
}

/** The streamed LLM requests of this call's assistant whose system prompt starts with `prompt`. */
const llmRequests = (since: number, prompt: string) =>
  world.chat.requests
    .slice(since)
    .filter((r) => r.body?.stream === true && String(r.body.messages[0].content).startsWith(prompt));

describe("a handoff on the pipeline", () => {
  test("the message is spoken, then billing greets, answers with its prompt, tools and voice, in the same call and task", async () => {
    const billingId = await billingAssistant({ greeting: "Billing here, on an {{direction}} call." });
    const deskId = await frontDesk(billingId, {}, "One moment, billing takes over.");
    stt.transcripts.splice(0, stt.transcripts.length, "I have a question about my bill.", "Is my invoice paid?");
    world.chat.reply = squadReplies(() => ({
      text: "Your invoice is paid.",
      toolCalls: [{ name: "end_call", arguments: {} }],
    }));
    const since = world.chat.requests.length;
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("I have a question about my bill.", rate));
    await caller.waitForAgentSaid("Billing here, on an inbound call.", 300, 20_000);
    await caller.say(await speech("Is my invoice paid?", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(caller.events.at(-1)).toEqual({ type: "ended", callId, reason: "agent-hangup" });
    expect(agentFinals(caller)).toEqual([
      "Hello, Acme here.",
      "One moment, billing takes over.",
      "Billing here, on an inbound call.",
      "Your invoice is paid.",
    ]);

    // the front desk's LLM saw the one handoff tool; billing's its own tools, its prompt rendered, the conversation so far
    const [desk] = llmRequests(since, frontDeskPrompt);
    const handoffTool = desk!.body.tools.find((t: any) => t.function.name === "handoff");
    expect(handoffTool.function.parameters.properties.destination.enum).toEqual(["billing"]);
    const billing = llmRequests(since, "You are Acme billing");
    expect(billing).toHaveLength(1);
    const { messages, tools } = billing[0]!.body;
    expect(messages[0].content).toBe(`You are Acme billing on call ${callId}.`);
    expect(tools.map((t: any) => t.function.name)).toEqual(["lookup_invoice", "end_call"]);
    expect(messages.slice(1)).toEqual([
      { role: "assistant", content: "Hello, Acme here." },
      { role: "user", content: "I have a question about my bill." },
      { role: "assistant", content: "Billing here, on an inbound call." },
      { role: "user", content: "Is my invoice paid?" },
    ]);
    // billing speaks with its own voice
    expect(tts.streams.find((s) => s.spoken.includes("Billing here, on an inbound call."))?.voiceId).toBe(
      "billing-voice",
    );

    const concluded = await hookFor(world, callId, "call_concluded");
    const handoffCall = (concluded.messages as any[]).find((m) => m.type === "tool_call");
    expect(handoffCall).toMatchObject({ toolName: "handoff", parameters: { destination: "billing" } });
    expect((concluded.messages as any[]).find((m) => m.type === "tool_result")).toMatchObject({
      callId: handoffCall.callId,
      text: "The caller was handed to billing.",
    });
    const tasks = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?size=100`)).body.data as any[];
    expect(tasks.filter((t) => t.callId === callId)).toHaveLength(1);
    expect(await agentTask(world, callId)).toMatchObject({ status: "completed", assistantId: deskId });
  }, 90_000);
});
