// Handoffs inside live calls through the bridge (docs/handoff.md): a front desk hands the caller to a
// billing assistant. Real espeak speech from the caller over websockets, the Deepgram, ElevenLabs, chat
// completions and Realtime fakes as providers, hooks through Temporal. The fake LLM answers by the
// system prompt it is sent, so which assistant answered shows in what the caller hears.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { StreamedReply } from "../fakes/chat-completions-server";
import type { FakeDeepgramServer } from "../fakes/deepgram-server";
import type { FakeElevenLabsServer } from "../fakes/elevenlabs-server";
import { toolSchema } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { dialNative, dialTwilio, type WsCaller } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor, handsOverOn, type World } from "../bridge/fixtures";
import { pipelineAssistant, type PipelineWorld, startPipelineWorld } from "../voice/pipeline-fakes";

let pipeline: PipelineWorld;
let world: World;
let stt: FakeDeepgramServer;
let tts: FakeElevenLabsServer;
let orders: Receiver;

beforeAll(async () => {
  [pipeline, orders] = await Promise.all([
    startPipelineWorld(),
    startReceiver(() => ({ status: 200, body: "Order 42 ships tomorrow." })),
  ]);
  ({ world, stt, tts } = pipeline);
}, 60_000);
afterAll(() => Promise.all([pipeline?.stop(), orders?.close()]));

const rate = 16000;
const frontDeskPrompt = "You are the Acme front desk.";
const billingPrompt = "You are Acme billing on call {{call_id}}.";

/** The billing assistant: a voice of its own, a tool of its own, a greeting with the call's variables. */
async function billingAssistant(spec: { greeting?: string; turnTaking?: Record<string, unknown> } = {}) {
  return pipelineAssistant(world, {
    name: "billing",
    hooksPath: "/billing-hooks",
    systemPrompt: billingPrompt,
    greeting: spec.greeting,
    turnTaking: spec.turnTaking,
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

/** The front desk (an assistant, or `kind` agents), handing over to `billingId` with `parameters` (context, maxMessages) and `message`. */
function frontDesk(
  billingId: string,
  parameters: Record<string, unknown> = {},
  message?: string,
  spec: { kind?: "assistants" | "agents"; greeting?: string | null } = {},
) {
  return pipelineAssistant(world, {
    kind: spec.kind,
    systemPrompt: frontDeskPrompt,
    greeting: spec.greeting === null ? undefined : (spec.greeting ?? "Hello, Acme here."),
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: "lookup_order", serverUrl: `${orders.url}/orders`, schema: toolSchema("lookup_order") },
      },
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

async function dial(assistantId: string, kind: "assistantId" | "agentId" = "assistantId") {
  const caller = await dialNative(world.bridge.url, {
    [kind]: assistantId,
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
    expect(desk!.body.tools.map((t: any) => t.function.name)).toEqual(["lookup_order", "handoff", "end_call"]);
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
    const task = await agentTask(world, callId);
    expect(task).toMatchObject({ status: "completed", assistantId: deskId });
    expect(task.handoffs).toEqual([
      { at: expect.any(String), fromAssistantId: deskId, toAssistantId: billingId, destination: "billing" },
    ]);
    expect(concluded.handoffs).toEqual([{ ...task.handoffs[0], at: Date.parse(task.handoffs[0].at) }]);
    // hooks stay the front desk's for the whole call
    expect(world.hooks.requests.filter((r) => r.path === "/billing-hooks")).toHaveLength(0);
  }, 90_000);

  test("lastMessages: billing, without a greeting, answers the last 2 messages it was given (a tool call and its result)", async () => {
    const billingId = await billingAssistant();
    const deskId = await frontDesk(billingId, { context: "lastMessages", maxMessages: 2 });
    stt.transcripts.splice(0, stt.transcripts.length, "Where is my order 42?");
    world.chat.reply = (body) => {
      const [system, ...rest] = body.messages;
      if (system.content !== frontDeskPrompt)
        return { text: "Your order is paid too.", toolCalls: [{ name: "end_call", arguments: {} }] };
      // the desk looks the order up, then hands over
      return rest.at(-1).role === "tool"
        ? { toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] }
        : { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] };
    };
    const since = world.chat.requests.length;
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("Where is my order forty two?", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", "Let me check.", "Your order is paid too."]);
    const [billing] = llmRequests(since, "You are Acme billing");
    const lookup = (await hookFor(world, callId, "call_concluded")).messages.find((m: any) => m.type === "tool_call");
    expect(billing!.body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: lookup.callId, type: "function", function: { name: "lookup_order", arguments: '{"orderId":"42"}' } },
        ],
      },
      { role: "tool", tool_call_id: lookup.callId, content: "Order 42 ships tomorrow." },
    ]);
  }, 90_000);

  test("none, from an agent: billing, without a greeting, hears nothing of before and waits for the caller", async () => {
    const billingId = await billingAssistant();
    const agentId = await frontDesk(billingId, { context: "none" }, "Billing takes over.", { kind: "agents" });
    stt.transcripts.splice(0, stt.transcripts.length, "My bill please.", "Is my invoice paid?");
    world.chat.reply = squadReplies(() => ({ text: "It is paid.", toolCalls: [{ name: "end_call", arguments: {} }] }));
    const since = world.chat.requests.length;
    const { caller, callId } = await dial(agentId, "agentId");
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("My bill please.", rate));
    await caller.waitForAgentSaid("Billing takes over.");
    await caller.waitFor((e) => e.type === "tool_result" && e.name === "handoff");
    // billing waits: the caller is told it is their turn once the message has played
    const message = caller.events.findIndex(
      (e) => e.type === "transcript" && e.final && e.text === "Billing takes over.",
    );
    expect(caller.events.slice(message).some((e) => e.type === "turn_done")).toBe(true);
    await caller.say(await speech("Is my invoice paid?", rate));
    expect((await caller.closed).code).toBe(1000);
    await hookFor(world, callId, "call_concluded");
    // billing's first request came with the caller's words: it had not answered before
    const billing = llmRequests(since, "You are Acme billing");
    expect(billing).toHaveLength(1);
    expect(billing[0]!.body.messages.slice(1)).toEqual([{ role: "user", content: "Is my invoice paid?" }]);
    const task = await agentTask(world, callId);
    expect(task).toMatchObject({ agentId, assistantId: null });
    expect(task.handoffs).toEqual([
      { at: expect.any(String), fromAssistantId: null, toAssistantId: billingId, destination: "billing" },
    ]);
  }, 90_000);

  test("billing's turn_taking takes over too: its idle prompt, with the call's variables, then its silence-timeout", async () => {
    const billingId = await billingAssistant({
      greeting: "Billing here.",
      turnTaking: {
        idle: { timeoutMs: 1000, messages: ["Still there, {{direction}} caller?"], maxPrompts: 1, hangupAfterMs: 1000 },
      },
    });
    // the desk has no turn_taking: a quiet caller is never prompted by it
    const deskId = await frontDesk(billingId);
    stt.transcripts.splice(0, stt.transcripts.length, "My bill please.");
    world.chat.reply = squadReplies(() => ({ text: "Unused." }));
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("My bill please.", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(caller.events.at(-1)).toEqual({ type: "ended", callId, reason: "silence-timeout" });
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", "Billing here.", "Still there, inbound caller?"]);
  }, 90_000);

  test("a destination that cannot be opened (no strategy): the LLM hears why and the desk keeps the caller", async () => {
    const { org, P } = world.tenant;
    const billing = await org.post(`${P}/assistants`, { name: "billing", systemPrompt: billingPrompt });
    expect(billing.status).toBe(201);
    const deskId = await frontDesk(billing.body.data.id, {}, "Billing takes over.");
    stt.transcripts.splice(0, stt.transcripts.length, "My bill please.");
    world.chat.reply = (body) => {
      const last = body.messages.at(-1);
      return last.role === "tool"
        ? { text: "Sorry, I will help you myself.", toolCalls: [{ name: "end_call", arguments: {} }] }
        : { toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] };
    };
    const since = world.chat.requests.length;
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("My bill please.", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", "Billing takes over.", "Sorry, I will help you myself."]);
    // the message was said while the tool ran, but the history keeps the tool call right before its result
    const history = llmRequests(since, frontDeskPrompt).at(-1)!.body.messages;
    expect(history.at(-2).tool_calls.map((c: any) => c.function.name)).toEqual(["handoff"]);
    const answered = history.at(-1);
    expect(answered.content).toBe(
      "The handoff to billing failed: the assistant has no LLM generation strategy. Go on helping the caller yourself.",
    );
    await hookFor(world, callId, "call_concluded");
    expect((await agentTask(world, callId)).handoffs).toEqual([]);
  }, 90_000);

  test("at most 10 handoffs a call: two assistants handing the caller back and forth; the 11th is refused to the LLM", async () => {
    const billingId = await billingAssistant();
    const deskId = await frontDesk(billingId, {}, undefined, { greeting: null });
    // billing hands back to the desk: both answer the conversation they are given by handing over again
    const billing = (await world.tenant.org.get(`${world.tenant.P}/assistants/${billingId}`)).body.data;
    const back = {
      type: "handoff",
      parameters: { destinations: [{ assistantId: deskId, name: "desk", description: "anything else" }] },
    };
    const replaced = await world.tenant.org.put(`${world.tenant.P}/assistants/${billingId}`, {
      ...billing,
      extensions: [...billing.extensions, back],
    });
    expect(replaced.status).toBe(200);
    stt.transcripts.splice(0, stt.transcripts.length, "Billing please.");
    world.chat.reply = (body) => {
      const last = body.messages.at(-1);
      if (last.role === "tool" && last.content.startsWith("No more handoffs"))
        return { text: "I will help you myself.", toolCalls: [{ name: "end_call", arguments: {} }] };
      const destination = body.messages[0].content === frontDeskPrompt ? "billing" : "desk";
      return { toolCalls: [{ name: "handoff", arguments: { destination } }] };
    };
    const { caller, callId } = await dial(deskId);
    await caller.say(await speech("Billing please.", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["I will help you myself."]);
    const concluded = await hookFor(world, callId, "call_concluded");
    const task = await agentTask(world, callId);
    expect(task.handoffs.map((h: any) => h.destination)).toEqual(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? "desk" : "billing")),
    );
    expect(task.handoffs[1]).toMatchObject({ fromAssistantId: billingId, toAssistantId: deskId });
    const results = concluded.messages.filter((m: any) => m.type === "tool_result").map((m: any) => m.text);
    expect(results).toHaveLength(11);
    expect(results.at(-1)).toStartWith("No more handoffs: a call makes at most 10.");
  }, 120_000);
});

// long enough that the caller's question, asked as it begins, is over before the switch
const longMessage =
  "One moment please. I am handing you over to our billing team now, and they will be with you right away to help with your bill.";

/** Whether the agent's final transcript `text` has reached the caller yet. */
const saidYet = (caller: WsCaller, text: string) => agentFinals(caller).includes(text);

describe("a handoff between engines", () => {
  test("openai_realtime to pipeline: the caller's question, asked while the message plays, reaches billing and is answered", async () => {
    const billingId = await billingAssistant();
    const desk = await createAssistant(world, {
      greeting: "Hello, Acme here.",
      fake: handsOverOn("My bill please.", "billing"),
      extensions: [
        {
          type: "handoff",
          parameters: {
            context: "none",
            destinations: [{ assistantId: billingId, description: "bills", message: longMessage }],
          },
        },
      ],
    });
    stt.transcripts.splice(0, stt.transcripts.length, "Is my invoice paid?");
    world.chat.reply = () => ({ text: "It is paid.", toolCalls: [{ name: "end_call", arguments: {} }] });
    const since = world.chat.requests.length;
    const { caller, callId } = await dial(desk.id);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("My bill please.", rate));
    await caller.waitFor((e) => e.type === "tool_call" && e.name === "handoff");
    const provider = desk.fake.sessions.at(-1)!;
    const appendsBefore = provider.received.filter((e) => e.type === "input_audio_buffer.append").length;
    await caller.say(await speech("Is my invoice paid?", rate));
    // all of the question was said before the message ended: billing, which waits for the caller, can only hear it from the hold
    expect(saidYet(caller, longMessage)).toBe(false);
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", longMessage, "It is paid."]);
    await hookFor(world, callId, "call_concluded");
    const billing = llmRequests(since, "You are Acme billing");
    expect(billing).toHaveLength(1);
    expect(billing[0]!.body.messages.slice(1)).toEqual([{ role: "user", content: "Is my invoice paid?" }]);
    // the front desk's provider heard none of it (at most the 100 ms chunk it was filling)
    expect(provider.received.filter((e) => e.type === "input_audio_buffer.append").length).toBeLessThanOrEqual(
      appendsBefore + 1,
    );
    expect((await agentTask(world, callId)).handoffs).toEqual([
      { at: expect.any(String), fromAssistantId: desk.id, toAssistantId: billingId, destination: "billing" },
    ]);
  }, 90_000);

  test("pipeline to openai_realtime: the question asked during the message is answered by billing's Realtime model", async () => {
    const billing = await createAssistant(world, {
      name: "billing",
      systemPrompt: billingPrompt,
      fake: {
        turns: [
          {
            userSays: "Is my invoice paid?",
            reply: { text: "It is paid.", toolCalls: [{ name: "end_call", arguments: {} }] },
          },
        ],
      },
      tools: [{ name: "lookup_invoice", serverUrl: "http://127.0.0.1:9/invoices" }],
    });
    const deskId = await frontDesk(billing.id, { context: "none" }, longMessage);
    stt.transcripts.splice(0, stt.transcripts.length, "My bill please.");
    world.chat.reply = squadReplies(() => ({ text: "Billing is not on the pipeline." }));
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("My bill please.", rate));
    await caller.waitFor((e) => e.type === "tool_call" && e.name === "handoff");
    await caller.say(await speech("Is my invoice paid?", rate));
    expect(saidYet(caller, longMessage)).toBe(false);
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", longMessage, "It is paid."]);
    // billing's Realtime session: its prompt rendered, its tools, no context
    const provider = billing.fake.sessions.at(-1)!;
    const update = (await provider.waitFor("session.update")).session;
    expect(update.instructions).toBe(`You are Acme billing on call ${callId}.`);
    expect(update.tools.map((t: any) => t.name)).toEqual(["lookup_invoice", "end_call"]);
    // no context: the only item is end_call's answer
    const items = provider.received.filter((e) => e.type === "conversation.item.create").map((e) => e.item);
    expect(items).toEqual([
      { type: "function_call_output", call_id: expect.any(String), output: "The call is ending." },
    ]);
    await hookFor(world, callId, "call_concluded");
    expect((await agentTask(world, callId)).handoffs).toEqual([
      { at: expect.any(String), fromAssistantId: deskId, toAssistantId: billing.id, destination: "billing" },
    ]);
  }, 90_000);

  test("pipeline to openai_realtime with all: the conversation goes in as Realtime items, then billing answers it", async () => {
    const billing = await createAssistant(world, {
      name: "billing",
      systemPrompt: billingPrompt,
      fake: {
        turns: [
          { userSays: "", reply: { text: "Order 42 is paid.", toolCalls: [{ name: "end_call", arguments: {} }] } },
        ],
      },
    });
    const deskId = await frontDesk(billing.id);
    stt.transcripts.splice(0, stt.transcripts.length, "Where is my order 42?");
    world.chat.reply = (body) =>
      body.messages.at(-1).role === "tool"
        ? { toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] }
        : { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] };
    const { caller, callId } = await dial(deskId);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("Where is my order forty two?", rate));
    expect((await caller.closed).code).toBe(1000);
    expect(agentFinals(caller)).toEqual(["Hello, Acme here.", "Let me check.", "Order 42 is paid."]);
    const provider = billing.fake.sessions.at(-1)!;
    const items = provider.received.filter((e) => e.type === "conversation.item.create").map((e) => e.item);
    const lookup = items.find((i) => i.type === "function_call");
    expect(items).toEqual([
      { type: "message", role: "assistant", content: [{ type: "text", text: "Hello, Acme here." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Where is my order 42?" }] },
      { type: "message", role: "assistant", content: [{ type: "text", text: "Let me check." }] },
      { type: "function_call", call_id: lookup.call_id, name: "lookup_order", arguments: '{"orderId":"42"}' },
      { type: "function_call_output", call_id: lookup.call_id, output: "Order 42 ships tomorrow." },
      // billing's own end_call, answered by the adapter
      { type: "function_call_output", call_id: expect.any(String), output: "The call is ending." },
    ]);
    // the items before the answer asked for
    const order = provider.received.map((e) => e.type);
    const itemsAt = order.flatMap((type, i) => (type === "conversation.item.create" ? [i] : []));
    expect(itemsAt[4]).toBeLessThan(order.indexOf("response.create"));
    await hookFor(world, callId, "call_concluded");
  }, 90_000);

  test("Twilio Media Streams (mu-law both ways): the pipeline desk hands over to a Realtime billing assistant that greets and hangs up", async () => {
    const billing = await createAssistant(world, {
      name: "billing",
      systemPrompt: billingPrompt,
      fake: { onInstructions: () => ({ text: "Billing here.", toolCalls: [{ name: "end_call", arguments: {} }] }) },
      greeting: "Billing here.",
    });
    const deskId = await frontDesk(billing.id, {}, "Billing takes over.");
    stt.transcripts.splice(0, stt.transcripts.length, "My bill please.");
    world.chat.reply = squadReplies(() => ({ text: "Billing is not on the pipeline." }));
    const caller = await dialTwilio(world.bridge.url, { assistantId: deskId, token: world.tenant.orgToken });
    caller.startStreaming();
    await caller.waitForAgentAudio();
    await caller.say(await speech("My bill please.", 8000));
    await caller.closed;
    const tasks = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?assistantId=${deskId}`)).body
      .data as any[];
    expect(tasks).toHaveLength(1);
    const concluded = await hookFor(world, tasks[0].callId, "call_concluded");
    const said = (concluded.messages as any[]).filter((m) => m.role === "ASSISTANT").map((m) => m.text);
    expect(said).toEqual(["Hello, Acme here.", "Billing takes over.", "Billing here."]);
    expect(concluded.handoffs).toEqual([
      { at: expect.any(Number), fromAssistantId: deskId, toAssistantId: billing.id, destination: "billing" },
    ]);
    // billing's Realtime session spoke the call's own mu-law
    const update = (await billing.fake.sessions.at(-1)!.waitFor("session.update")).session;
    expect([update.input_audio_format, update.output_audio_format]).toEqual(["g711_ulaw", "g711_ulaw"]);
  }, 90_000);
});
