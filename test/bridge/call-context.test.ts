// Per-call context on real websocket calls: the native `start` message and Twilio customParameters as
// variables in the greeting and on the agent task; the call_context POST answering, refusing, slow and
// failing (a real HTTP receiver through the outbound guard); call_analysis stored on the task.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { scrape, total } from "../metrics/scrape";
import { dialNative, dialTwilio, type WsCaller } from "../helpers/ws-caller";
import { agentTask, createAssistant, startWorld, type World } from "./fixtures";

let world: World;
let context: Receiver;

beforeAll(async () => {
  [world, context] = await Promise.all([startWorld(), startReceiver()]);
}, 60_000);
afterAll(async () => {
  await world?.stop();
  await context?.close();
});
beforeEach(() => {
  context.requests.length = 0;
});

const greeting = "Hello {{customer_name}}, about order {{order}}.";
const withContext = (parameters: Record<string, unknown>) => ({
  greeting,
  extensions: [{ type: "call_context", parameters: { url: `${context.url}/context`, ...parameters } }],
});
type Assistant = Awaited<ReturnType<typeof createAssistant>>;

/** The greeting the provider was asked to say, as rendered (the instruction's quoted text). */
async function greetingSaid(assistant: Assistant, caller: WsCaller) {
  const provider = await assistant.fake.nextSession();
  const instructions = await caller.until(
    () => provider.received.find((e: any) => e.type === "response.create")?.response?.instructions as string,
    10_000,
    "the greeting",
  );
  return instructions.replace(/^.*nothing else: /, "");
}

/** Hangs up and waits for the task to close. */
async function finish(caller: WsCaller, callId: string) {
  caller.ws.close();
  return poll(async () => {
    const task = await agentTask(world, callId);
    return task?.status === "completed" || task?.status === "failed" ? task : undefined;
  }, "the task to close");
}

async function poll<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 45_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await Bun.sleep(100);
  }
}

const contextCount = async (outcome: string) =>
  total(await scrape(`${world.bridge.url.replace(/^ws/, "http")}/metrics`), "vas_call_context_duration_seconds_count", {
    outcome,
  });

const dial = (assistantId: string) =>
  dialNative(
    world.bridge.url,
    { assistantId, sampleRate: "16000" },
    { authorization: `Bearer ${world.tenant.orgToken}` },
  );

test("native: the start message's variables reach the greeting and the task; a built-in cannot be overridden", async () => {
  const assistant = await createAssistant(world, { greeting });
  const caller = await dial(assistant.id);
  caller.sendJson({ type: "start", variables: { customer_name: "Ada", order: 42, call_id: "spoofed" } });
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  expect(await greetingSaid(assistant, caller)).toBe("Hello Ada, about order 42.");
  // a second start is refused and the call goes on
  caller.sendJson({ type: "start", variables: { customer_name: "Eve" } });
  expect((await caller.waitFor((e) => e.type === "error")).message).toContain("start ignored");
  const task = await finish(caller, ready.callId);
  expect(task.variables).toMatchObject({
    customer_name: "Ada",
    order: "42",
    call_id: ready.callId,
    direction: "inbound",
  });
});

test("native: without a start message the call starts after the wait, with the built-ins alone", async () => {
  const assistant = await createAssistant(world, { greeting });
  const caller = await dial(assistant.id);
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  expect(await greetingSaid(assistant, caller)).toBe("Hello , about order .");
  const task = await finish(caller, ready.callId);
  expect(task.variables.customer_name).toBeUndefined();
  expect(task.variables.call_id).toBe(ready.callId);
});

test("twilio: customParameters other than the credentials become variables; the token never does", async () => {
  const assistant = await createAssistant(world, { greeting });
  const caller = await dialTwilio(
    world.bridge.url,
    {},
    { assistantId: assistant.id, token: world.tenant.orgToken, customer_name: "Grace", order: "7" },
  );
  caller.startStreaming();
  expect(await greetingSaid(assistant, caller)).toBe("Hello Grace, about order 7.");
  const task = await poll(
    async () =>
      (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?size=100`)).body.data.find(
        (t: any) => t.assistantId === assistant.id,
      ),
    "the task",
  );
  const closed = await finish(caller, task.callId);
  expect(closed.variables).toMatchObject({ customer_name: "Grace", order: "7" });
  expect(JSON.stringify(closed.variables)).not.toContain(world.tenant.orgToken);
  expect(closed.variables.assistantId).toBeUndefined();
});

test("call_context answers: one POST with its headers naming the call; its variables win over the call's own", async () => {
  context.respond(() => ({
    status: 200,
    body: JSON.stringify({ variables: { customer_name: "Grace", tier: "gold" } }),
  }));
  const assistant = await createAssistant(world, withContext({ headers: { "X-Api-Key": "ctx-key" } }));
  const okBefore = await contextCount("ok");
  const caller = await dial(assistant.id);
  caller.sendJson({ type: "start", variables: { customer_name: "Ada", order: "42" } });
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  expect(await greetingSaid(assistant, caller)).toBe("Hello Grace, about order 42.");
  expect(context.requests).toHaveLength(1);
  const request = context.requests[0]!;
  expect(request.path).toBe("/context");
  expect(request.headers["x-api-key"]).toBe("ctx-key");
  expect(JSON.parse(request.body.toString())).toEqual({
    type: "call_context",
    callId: ready.callId,
    transport: { type: "websocket" },
  });
  expect(await contextCount("ok")).toBe(okBefore + 1);
  const task = await finish(caller, ready.callId);
  expect(task.variables).toMatchObject({ customer_name: "Grace", order: "42", tier: "gold" });
});

test("call_context rejects: the websocket is closed with the reason and no call runs", async () => {
  context.respond(() => ({ status: 200, body: '{"reject": true}' }));
  const assistant = await createAssistant(world, withContext({}));
  const caller = await dial(assistant.id);
  caller.sendJson({ type: "start", variables: {} });
  expect(await caller.closed).toEqual({ code: 1008, reason: "call refused by the call_context service" });
  expect(caller.events.some((e) => e.type === "ready")).toBe(false);
  const tasks = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?size=100`)).body.data;
  expect(tasks.some((t: any) => t.assistantId === assistant.id)).toBe(false);
});

test.each([
  ["slow (past its timeoutMs)", () => "hang" as const],
  ["failing (500)", () => ({ status: 500, body: "boom" })],
  ["answering garbage", () => ({ status: 200, body: "not json" })],
])("call_context %s: the call goes on with its own variables", async (_name, responder) => {
  context.respond(responder);
  const assistant = await createAssistant(world, withContext({ timeoutMs: 300 }));
  const caller = await dial(assistant.id);
  caller.sendJson({ type: "start", variables: { customer_name: "Ada", order: "42" } });
  const ready = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  expect(await greetingSaid(assistant, caller)).toBe("Hello Ada, about order 42.");
  expect(context.requests).toHaveLength(1);
  await finish(caller, ready.callId);
});

test("call_analysis: each call's analysis is stored on its task with the summary from one request, a schema with $id too", async () => {
  const schema = JSON.stringify({
    $id: "https://acme.example/call-topic",
    type: "object",
    properties: { topic: { type: "string" } },
    required: ["topic"],
  });
  const assistant = await createAssistant(world, {
    greeting: "Hello there.",
    extensions: [{ type: "call_analysis", parameters: { schema, successCriteria: "The caller was greeted." } }],
  });
  // the $id must not collide with itself: each call compiles (or finds) the schema again
  for (const topic of ["greeting", "second call"]) {
    const analysis = { data: { topic }, success: true, successReason: "Greeted." };
    const before = world.chat.requests.length;
    world.chat.answers.push({ shortSummary: "A greeting.", summary: "The assistant greeted the caller.", analysis });
    const caller = await dial(assistant.id);
    const ready = await caller.waitFor((e) => e.type === "ready");
    caller.startStreaming();
    await caller.waitForAgentSaid("Hello there.");
    const task = await finish(caller, ready.callId);
    expect(task.analysis).toEqual(analysis);
    expect(world.chat.requests.length - before).toBe(1);
    const listed = (await world.tenant.org.get(`${world.tenant.P}/agent-tasks?success=true&size=100`)).body.data;
    expect(listed.map((t: any) => t.callId)).toContain(ready.callId);
  }
});
