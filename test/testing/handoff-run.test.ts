// A test run of a squad: the worker's scripted caller (text modality, through the bridge's websocket) asks
// Luigi's front desk for the bill; the desk hands the call to a billing assistant, which answers. The run's
// toolCalled criterion sees the handoff like any tool, and the call's task records it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createBookingAssistant, toolSchema } from "../helpers/api";
import type { TestWorker } from "../helpers/temporal";
import type { World } from "../bridge/fixtures";
import { startRunWorld, untilRunEnded } from "./run-world";

let world: World;
let worker: TestWorker;

beforeAll(async () => {
  ({ world, worker } = await startRunWorld());
}, 90_000);
afterAll(async () => {
  await worker?.kill();
  await world?.stop();
});

test("a run whose criterion is toolCalled handoff: the desk hands the caller to billing, which answers; the task records it", async () => {
  const { tenant } = world;
  const billingId = await createBookingAssistant(tenant, {
    name: "billing",
    systemPrompt: "You are Luigi's billing.",
    systemPromptGreeting: "Billing here.",
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: "lookup_bill", serverUrl: "http://127.0.0.1:9/never", schema: toolSchema("lookup_bill") },
      },
    ],
  });
  const deskId = await createBookingAssistant(tenant, {
    systemPromptGreeting: "Luigi's, how can I help?",
    extensions: [
      {
        type: "handoff",
        parameters: {
          destinations: [{ assistantId: billingId, description: "bills", message: "Billing takes over." }],
        },
      },
    ],
  });
  // the desk hands over at once; billing looks the bill up (a mock answers) and quotes it
  world.chat.reply = (body) => {
    if (body.messages[0].content !== "You are Luigi's billing.")
      return { toolCalls: [{ name: "handoff", arguments: { destination: "billing" } }] };
    const last = body.messages.at(-1);
    return last.role === "tool"
      ? { text: `Your bill is ${JSON.parse(last.content).status}.` }
      : { toolCalls: [{ name: "lookup_bill", arguments: { orderId: "7" } }] };
  };
  const scenario = {
    name: "reaches billing",
    kind: "scripted",
    turns: [{ say: "I have a question about my bill." }, { say: "Is it paid?" }],
    // billing's tool, mocked in a run of the desk: the destinations' tools are the run's too
    toolMocks: [{ tool: "lookup_bill", output: { status: "paid" } }],
    criteria: [
      { name: "handed to billing", type: "toolCalled", tool: "handoff", arguments: { destination: "billing" } },
      { name: "billing answers", type: "said", pattern: "bill is paid", by: "agent" },
    ],
  };
  const created = await tenant.org.post(`${tenant.P}/test-runs`, { assistantId: deskId, scenarios: [scenario] });
  expect(created.status).toBe(202);
  const run = await untilRunEnded(world, worker, created.body.data.id);
  const [result] = (await tenant.org.get(`${tenant.P}/test-runs/${run.id}/results`)).body.data;
  expect(result.criteria.map((c: { verdict: string; reason: string }) => [c.verdict, c.reason])).toEqual([
    ["pass", expect.any(String)],
    ["pass", expect.any(String)],
  ]);
  expect(run).toMatchObject({ status: "completed", verdict: "passed" });
  const task = (await tenant.org.get(`${tenant.P}/agent-tasks/${result.agentTaskId}`)).body.data;
  expect(task).toMatchObject({ assistantId: deskId, testRunId: run.id });
  expect(task.handoffs).toEqual([
    { at: expect.any(String), fromAssistantId: deskId, toAssistantId: billingId, destination: "billing" },
  ]);
  const said = task.messages
    .filter((m: { role: string }) => m.role === "ASSISTANT")
    .map((m: { text: string }) => m.text);
  expect(said).toEqual(["Luigi's, how can I help?", "Billing takes over.", "Billing here.", "Your bill is paid."]);
}, 120_000);
