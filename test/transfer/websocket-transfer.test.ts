// Transfer on websocket calls: on a native one the client gets {"type":"transfer"} after the spoken
// message; a Twilio Media Streams call is redirected through a local fake of Twilio's call-update API.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { dialNative, dialTwilio } from "../helpers/ws-caller";
import { agentTask, createAssistant, greetThenTransfer, hookFor, startWorld, type World } from "../bridge/fixtures";

let world: World;
let worker: TestWorker;
let twilio: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  twilio = await startReceiver(() => ({ status: 200, body: '{"sid":"CAtest","status":"in-progress"}' }));
  const env = { TWILIO_API_URL: twilio.url, TWILIO_ACCOUNT_SID: "ACtest", TWILIO_AUTH_TOKEN: "twilio-secret" };
  [world, worker] = await Promise.all([startWorld(env), startWorker({ address, backoffBaseMs: 1_000 })]);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await worker?.kill();
  await twilio?.close();
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
      onInstructions: greetThenTransfer(greeting, "transfer_call", "+15550300099"),
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

test("a Twilio call is redirected with <Dial> through the call-update API; the stream ends transferred", async () => {
  const assistant = await createAssistant(world, {
    greeting,
    extensions: [
      {
        type: "transfer_call",
        parameters: {
          destinations: [{ to: "sip:desk@127.0.0.1", description: "Desk" }],
          ringTimeoutSeconds: 20,
        },
      },
    ],
    fake: {
      onInstructions: (instructions: string) =>
        instructions.endsWith(greeting)
          ? { text: greeting, toolCalls: [{ name: "transfer_call", arguments: { destination: "sip:desk@127.0.0.1" } }] }
          : { text: "Transferring your call now." },
    },
  });
  const caller = await dialTwilio(world.bridge.url, { assistantId: assistant.id, token: world.tenant.orgToken });
  caller.startStreaming();
  const [update] = await twilio.waitForRequests(1, 20_000);
  expect(update!.method).toBe("POST");
  expect(update!.path).toBe("/2010-04-01/Accounts/ACtest/Calls/CAtest.json");
  expect(update!.headers.authorization).toBe(`Basic ${Buffer.from("ACtest:twilio-secret").toString("base64")}`);
  expect(new URLSearchParams(update!.body.toString()).get("Twiml")).toBe(
    '<Response><Dial timeout="20"><Sip>sip:desk@127.0.0.1</Sip></Dial></Response>',
  );
  const task = await eventuallyTask(assistant.id);
  expect(task).toMatchObject({ status: "completed", endedReason: "transferred", transferredTo: "sip:desk@127.0.0.1" });
  const concluded = await hookFor(world, task.callId, "call_concluded");
  expect(concluded.transferredTo).toBe("sip:desk@127.0.0.1");
  // the message was spoken before the redirect
  const kinds = concluded.messages.map((m: any) => (m.type === "text" ? m.text : m.type));
  expect(kinds.indexOf("Transferring your call now.")).toBeGreaterThan(-1);
  expect(kinds.indexOf("Transferring your call now.")).toBeLessThan(kinds.indexOf("tool_result"));
}, 30_000);

/** The assistant's one task once it has ended. */
async function eventuallyTask(assistantId: string) {
  for (let i = 0; i < 100; i++) {
    const list = await world.tenant.org.get(`${world.tenant.P}/agent-tasks?size=100`);
    const task = (list.body.data as any[]).find((t) => t.assistantId === assistantId);
    if (task?.endedReason) return task;
    await Bun.sleep(200);
  }
  throw new Error("the task did not end");
}
