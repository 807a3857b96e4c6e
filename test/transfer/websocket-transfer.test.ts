// Transfer on a native websocket call: the message is spoken, the client gets {"type":"transfer"} and
// the call ends transferred; a transport that cannot transfer answers the LLM so.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { agentTask, createAssistant, hookFor, startWorld, type World } from "../bridge/fixtures";

let world: World;
let worker: TestWorker;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  [world, worker] = await Promise.all([startWorld(), startWorker({ address, backoffBaseMs: 1_000 })]);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await worker?.kill();
});

const greeting = "Hello, Acme desk.";

test("the native client gets the transfer message after the spoken message; the call ends transferred", async () => {
  const assistant = await createAssistant(world, {
    greeting,
    extensions: [
      {
        type: "transfer_call",
        parameters: {
          destinations: [
            { to: "+15550300099", description: "Sales", message: "Connecting you to sales, call {{call_id}}." },
            { to: "sip:support@127.0.0.1", description: "Support" },
          ],
          mode: "warm",
        },
      },
    ],
    fake: {
      onInstructions: (instructions: string) => {
        const words = instructions.slice(instructions.indexOf("nothing else: ") + "nothing else: ".length);
        return words === greeting
          ? { text: greeting, toolCalls: [{ name: "transfer_call", arguments: { destination: "+15550300099" } }] }
          : { text: words };
      },
    },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  const message = `Connecting you to sales, call ${callId}.`;
  await caller.waitForAgentSaid(message);
  const transfer = await caller.waitFor((e) => e.type === "transfer");
  expect(transfer).toEqual({ type: "transfer", to: "+15550300099", mode: "warm" });
  const ended = await caller.waitFor((e) => e.type === "ended");
  expect(ended.reason).toBe("transferred");

  const concluded = await hookFor(world, callId, "call_concluded");
  expect(concluded).toMatchObject({ endedReason: "transferred", transferredTo: "+15550300099" });
  expect(await agentTask(world, callId)).toMatchObject({
    status: "completed",
    endedReason: "transferred",
    transferredTo: "+15550300099",
  });
}, 30_000);

test("a destination the tool does not list is answered to the LLM, and nothing is transferred", async () => {
  const assistant = await createAssistant(world, {
    greeting,
    extensions: [
      { type: "transfer_call", parameters: { destinations: [{ to: "+15550300099", description: "Sales" }] } },
    ],
    fake: {
      onInstructions: () => ({
        text: greeting,
        toolCalls: [{ name: "transfer_call", arguments: { destination: "+19999999999" } }],
      }),
      afterToolOutputs: () => ({ text: "I cannot do that.", toolCalls: [{ name: "end_call", arguments: {} }] }),
    },
  });
  const caller = await dialNative(world.bridge.url, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  const result = await caller.waitFor((e) => e.type === "tool_result");
  expect(result.output).toContain("There is no destination");
  expect(result.output).toContain("+15550300099");
  const concluded = await hookFor(world, callId, "call_concluded");
  expect(concluded.endedReason).toBe("assistant-ended");
  expect(concluded.transferredTo).toBeUndefined();
}, 30_000);
