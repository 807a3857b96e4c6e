// Idle callers (turn_taking's `idle`) on whole calls through the bridge, on both engines: a caller that
// stays quiet is prompted with the templates (in order, the last repeated, the count starting again
// when the caller speaks), then the call ends with endedReason silence-timeout; a slow tool holds the
// timers. The caller speaks with espeak-ng; the providers are the fakes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scriptedReplies } from "../fakes/chat-completions-server";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { speech } from "../helpers/speech";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor } from "../bridge/fixtures";
import { type PipelineWorld, pipelineAssistant, startPipelineWorld } from "./pipeline-fakes";

let pipeline: PipelineWorld;
let world: PipelineWorld["world"];
let slowTools: Receiver;

const toolMs = 4_000;

beforeAll(async () => {
  [pipeline, slowTools] = await Promise.all([
    startPipelineWorld({ env: { TOOL_TIMEOUT_MS: "10000" } }),
    startReceiver(() => ({ status: 200, body: "Order 42 ships tomorrow.", delayMs: toolMs })),
  ]);
  world = pipeline.world;
}, 60_000);
afterAll(async () => {
  await Promise.all([pipeline?.stop(), slowTools?.close()]);
});

/** A realtime assistant with turn_taking's `idle` whose fake says word for word what it is asked to (the greeting, a prompt). */
const realtimeAssistant = (idle: Record<string, unknown>, spec: Parameters<typeof createAssistant>[1] = {}) =>
  createAssistant(world, {
    greeting: "Hello, Acme here.",
    ...spec,
    fake: {
      onInstructions: (instructions) => ({
        text: instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length),
      }),
      ...spec.fake,
    },
    extensions: [{ type: "turn_taking", parameters: { idle } }],
  });

async function dial(assistantId: string, variables: Record<string, string> = {}) {
  const caller = await dialNative(world.bridge.url, { assistantId, sampleRate: "16000", token: world.tenant.orgToken });
  caller.sendJson({ type: "start", variables });
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  return { caller, callId: ready.callId as string };
}

/**
 * The call ended for silence (the socket, call_concluded, the agent task); its text messages as
 * [role, text], its tool calls and results by their type.
 */
async function endedSilent(caller: WsCaller, callId: string) {
  expect((await caller.closed).code).toBe(1000);
  expect(caller.events.at(-1)).toEqual({ type: "ended", callId, reason: "silence-timeout" });
  const concluded = await hookFor(world, callId, "call_concluded");
  expect(concluded.endedReason).toBe("silence-timeout");
  expect(await agentTask(world, callId)).toMatchObject({ status: "completed", endedReason: "silence-timeout" });
  return (concluded.messages as any[]).map((m) => (m.type === "text" ? [m.role, m.text] : [m.type]));
}

// each call waits out its own idle timers (the pipeline one ~14 s), on providers of its own (only the
// pipeline call uses the STT and the streamed LLM): the three run at once
describe("a quiet caller (turn_taking idle)", () => {
  test.concurrent("pipeline: prompts in order, the last repeated, again from the first once the caller spoke; then silence-timeout", async () => {
    const assistantId = await pipelineAssistant(world, {
      greeting: "Hello, Acme here.",
      turnTaking: {
        idle: {
          timeoutMs: 1000,
          messages: ["Are you still there, {{name}}?", "Hello?"],
          maxPrompts: 3,
          hangupAfterMs: 1000,
        },
      },
    });
    pipeline.stt.transcripts.splice(0, pipeline.stt.transcripts.length, "Yes, I am here.");
    world.chat.reply = scriptedReplies([{ text: "Good." }]);
    const { caller, callId } = await dial(assistantId, { name: "Ann" });
    await caller.waitForAgentSaid("Are you still there, Ann?", 300, 20_000);
    await caller.say(await speech("Yes, I am here.", 16000));
    expect(await endedSilent(caller, callId)).toEqual([
      ["ASSISTANT", "Hello, Acme here."],
      ["ASSISTANT", "Are you still there, Ann?"],
      ["USER", "Yes, I am here."],
      ["ASSISTANT", "Good."],
      ["ASSISTANT", "Are you still there, Ann?"],
      ["ASSISTANT", "Hello?"],
      ["ASSISTANT", "Hello?"],
    ]);
  }, 60_000);

  test.concurrent("openai_realtime: the bridge has the prompt said word for word; then silence-timeout", async () => {
    const assistant = await realtimeAssistant({ timeoutMs: 1000, maxPrompts: 1, hangupAfterMs: 1000 });
    const { caller, callId } = await dial(assistant.id);
    expect(await endedSilent(caller, callId)).toEqual([
      ["ASSISTANT", "Hello, Acme here."],
      ["ASSISTANT", "Are you still there?"],
    ]);
  }, 60_000);

  test.concurrent("openai_realtime: no prompt while a slow tool runs; the silence counts from the answer with its result", async () => {
    // the tool takes four times the idle time-out
    const assistant = await realtimeAssistant(
      { timeoutMs: 1000, maxPrompts: 1, hangupAfterMs: 1000 },
      {
        tools: [{ name: "lookup_order", serverUrl: `${slowTools.url}/orders` }],
        fake: {
          turns: [
            {
              userSays: "Where is my order 42?",
              reply: { text: "Let me check.", toolCalls: [{ name: "lookup_order", arguments: { orderId: "42" } }] },
            },
          ],
        },
      },
    );
    const { caller, callId } = await dial(assistant.id);
    await caller.waitForAgentSaid("Hello, Acme here.");
    await caller.say(await speech("Where is my order forty two?", 16000));
    expect(await endedSilent(caller, callId)).toEqual([
      ["ASSISTANT", "Hello, Acme here."],
      ["USER", "Where is my order 42?"],
      ["ASSISTANT", "Let me check."],
      ["tool_call"],
      ["tool_result"],
      ["ASSISTANT", "lookup_order: Order 42 ships tomorrow."],
      ["ASSISTANT", "Are you still there?"],
    ]);
  }, 60_000);
});
