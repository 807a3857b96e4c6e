// One bridge per test file with everything it talks to being real: the API (to create tenants and
// assistants), Postgres, a hook receiver, the fake chat completions endpoint for summaries, and per
// test a fake realtime provider (behind one OPENAI_REALTIME_URL, picked by the strategy's `model`).
import { expect } from "bun:test";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { llmStrategies } from "../../src/db/schema";
import { strategyTypes } from "../../src/models/strategies";
import { startBridge, type Bridge } from "../../src/bridge/ws-server";
import { startFakeChatServer, type FakeChatServer } from "../fakes/chat-completions-server";
import {
  startFakeRealtimeHub,
  type FakeRealtimeHub,
  type FakeRealtimeOptions,
  type FakeRealtimeServer,
} from "../fakes/openai-realtime-server";
import { createTenant, startTestApi, toolSchema, type Tenant } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { dialNative } from "../helpers/ws-caller";

export type World = {
  api: Awaited<ReturnType<typeof startTestApi>>;
  tenant: Tenant;
  bridge: Bridge;
  hooks: Receiver;
  chat: FakeChatServer;
  realtime: FakeRealtimeHub;
  fakes: FakeRealtimeServer[];
  stop(): Promise<void>;
};

/** `env` is the bridge's; `apiEnv` the API's (settings both read, like EMBEDDINGS_URL, go in both). */
export async function startWorld(
  env: Record<string, string> = {},
  apiEnv: Record<string, string> = {},
): Promise<World> {
  const [api, hooks, chat, realtime] = await Promise.all([
    startTestApi(apiEnv),
    startReceiver(),
    startFakeChatServer(),
    startFakeRealtimeHub(),
  ]);
  const tenant = await createTenant(api.url, "bridge");
  const config = loadConfig({
    ...process.env,
    OPENAI_BASE_URL: chat.baseUrl,
    OPENAI_REALTIME_URL: realtime.url,
    BRIDGE_INSTANCE_ID: `bridge-test-${process.pid}`,
    ...env,
  });
  const bridge = await startBridge(config, { port: 0 });
  const fakes: FakeRealtimeServer[] = [];
  return {
    api,
    tenant,
    bridge,
    hooks,
    chat,
    realtime,
    fakes,
    async stop() {
      await bridge.stop();
      await Promise.all([api.stop(), hooks.close(), chat.close(), realtime.close()]);
    },
  };
}

export type ToolSpec = { name: string; serverUrl: string; headers?: Record<string, string> };
export type AssistantSpec = {
  name?: string;
  systemPrompt?: string;
  fake?: FakeRealtimeOptions;
  greeting?: string;
  tools?: ToolSpec[];
  /** more extensions, as the API takes them (a knowledge_base, say) */
  extensions?: unknown[];
  strategy?: { type: string } | null;
  tenant?: Tenant;
  kind?: "assistants" | "agents";
};

/** A fake provider scripted by `spec.fake`, and an assistant using it with hooks to the receiver. */
export async function createAssistant(
  world: Pick<World, "realtime" | "fakes" | "tenant" | "hooks">,
  spec: AssistantSpec = {},
) {
  const tenant = spec.tenant ?? world.tenant;
  const fake = world.realtime.add({
    ...(spec.greeting && { onInstructions: () => ({ text: spec.greeting }) }),
    ...spec.fake,
  });
  world.fakes.push(fake);
  let strategyId: string | undefined;
  if (spec.strategy !== null) {
    const strategy = await tenant.org.post(`${tenant.P}/llm-generation-strategies`, {
      name: "fake realtime",
      type: "openai_realtime",
      parameters: { model: fake.model, temperature: 0.8, vad: { stopDuration: 400 } },
    });
    strategyId = strategy.body.data.id as string;
    const type = spec.strategy?.type;
    // the API refuses unknown types: a row stored before it checked them is written directly
    if (type && !(strategyTypes as string[]).includes(type)) await setStrategyType(strategyId, type);
  }
  const created = await tenant.org.post(`${tenant.P}/${spec.kind ?? "assistants"}`, {
    name: spec.name ?? "front desk",
    systemPrompt: spec.systemPrompt ?? "You are the Acme front desk.",
    ...(spec.greeting && { systemPromptGreeting: spec.greeting }),
    ...(strategyId && { llmAudioContentGenerationStrategyId: strategyId }),
    extensions: [
      ...(spec.tools ?? []).map((tool) => ({
        type: "tool_webhook",
        parameters: {
          name: tool.name,
          serverUrl: tool.serverUrl,
          schema: toolSchema(tool.name),
          ...(tool.headers && { headers: tool.headers }),
        },
      })),
      ...(spec.extensions ?? []),
    ],
    callEventHooks: ["call_started", "call_concluded"].map((type) => ({
      type,
      parameters: { url: `${world.hooks.url}/hooks` },
    })),
  });
  if (created.status !== 201) throw new Error(`assistant not created: ${JSON.stringify(created.body)}`);
  return { id: created.body.data.id as string, fake, tenant };
}

async function setStrategyType(id: string, type: string) {
  const { db, close } = createDb(process.env.DATABASE_URL!, { max: 1 });
  await db.update(llmStrategies).set({ type }).where(eq(llmStrategies.id, id));
  await close();
}

/** The body of the hook of `type` for `callId` once the receiver got it. */
export async function hookFor(world: World, callId: string, type: string, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = world.hooks.requests
      .map((r) => JSON.parse(r.body.toString()))
      .find((b) => b.callId === callId && b.type === type);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no ${type} hook for call ${callId} within ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

/**
 * A fake realtime model's instructions handler: it says the greeting and with it calls the transfer
 * `tool` for `destination`; anything else it is asked to say verbatim ("…nothing else: <words>") it says.
 */
export function greetThenTransfer(greeting: string, tool: string, destination: string) {
  return (instructions: string) => {
    const words = verbatimWords(instructions);
    return words === greeting
      ? { text: greeting, toolCalls: [{ name: tool, arguments: { destination } }] }
      : { text: words };
  };
}

/** The words the bridge asks a Realtime model to say verbatim ("…word for word, and nothing else: <words>"). */
export const verbatimWords = (instructions: string) =>
  instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length);

/** A Realtime model that says verbatim what it is asked to, and hands the caller to `destination` on their first words, `userSays`. */
export const handsOverOn = (userSays: string, destination: string): FakeRealtimeOptions => ({
  onInstructions: (instructions) => ({ text: verbatimWords(instructions) }),
  turns: [{ userSays, reply: { toolCalls: [{ name: "handoff", arguments: { destination } }] } }],
});

/** A call to `assistantId` in our wire format at 16 kHz, streaming like a phone, once `greeting` has played. */
export async function callPastGreeting(world: World, assistantId: string, greeting: string) {
  const caller = await dialNative(world.bridge.url, { assistantId, sampleRate: "16000", token: world.tenant.orgToken });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentSaid(greeting);
  return { caller, callId: callId as string };
}

export async function agentTask(world: World, callId: string, tenant = world.tenant) {
  const list = await tenant.org.get(`${tenant.P}/agent-tasks?size=100`);
  return (list.body.data as any[]).find((t) => t.callId === callId);
}

/** The call's agent task once it is completed (its conclusion written), for worlds without a hook worker to wait on. */
export async function completedTask(world: World, callId: string) {
  let task = await agentTask(world, callId);
  for (let i = 0; task?.status !== "completed" && i < 100; i++) {
    await Bun.sleep(100);
    task = await agentTask(world, callId);
  }
  return task;
}

/** What every order-lookup conversation of the call tests says first: greeting, question, the tool call and its result. */
export function orderLookupExchange(toolCallId: string | undefined) {
  return [
    { type: "text", role: "ASSISTANT", text: "Hello, Acme here." },
    { type: "text", role: "USER", text: "Where is my order 42?" },
    { type: "text", role: "ASSISTANT", text: "Let me check." },
    {
      type: "tool_call",
      role: "TOOL_CALL",
      callId: toolCallId,
      toolName: "lookup_order",
      parameters: { orderId: "42" },
    },
    {
      type: "tool_result",
      role: "TOOL_CALL_RESULT",
      callId: toolCallId,
      toolName: "lookup_order",
      text: "Order 42 ships tomorrow.",
      // how long the tool took (ms)
      durationMs: expect.any(Number),
    },
  ];
}
