// Test runs have a task queue of their own (TEST_RUN_TASK_QUEUE), worked with slots of their own
// (TEST_RUN_WORKER_SLOTS): while a run's calls fill those slots and its next call waits in its queue,
// a hook delivery's attempts go on in theirs. A campaign's workflow started on the hooks' queue (before
// campaigns had their own) moves to CAMPAIGN_TASK_QUEUE at its next step. A real worker, bridge, API
// and Temporal dev server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { testResults } from "../../src/db/schema";
import { connectTemporal } from "../../src/temporal/client";
import { CAMPAIGN_WORKFLOW, campaignWorkflowId, hookDeliveryWorkflowId, testRunWorkflowId } from "../../workflows/ids";
import { startWorld, type World } from "../bridge/fixtures";
import { createBookingAssistant, createCallerNumber } from "../helpers/api";
import { insertCampaign } from "../helpers/campaigns";
import { failTimes, startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, startWorker, taskQueueEnv, type TestWorker } from "../helpers/temporal";
import { eventually } from "../sip/helpers/eventually";
import { callConcluded, createAssistantWithHooks, deliveryRow, emitOne, openDb } from "./fixtures";

const database = openDb();
const { db } = database;
let world: World;
let worker: TestWorker;
let receiver: Receiver;
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
let assistantId: string;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
  [world, receiver] = await Promise.all([startWorld(), startReceiver(failTimes(1))]);
  worker = await startWorker({
    address,
    backoffBaseMs: 500,
    // one test call at a time: a run of two has its second call waiting in the test runs' queue
    env: { BRIDGE_URL: world.bridge.url, OPENAI_BASE_URL: world.chat.baseUrl, TEST_RUN_WORKER_SLOTS: "1" },
  });
  assistantId = await createBookingAssistant(world.tenant);
}, 90_000);
afterAll(async () => {
  await worker?.kill();
  await temporal?.close();
  await Promise.all([world?.stop(), receiver?.close()]);
  await database.close();
});

test("a hook delivery's attempts are not queued behind a test run's calls", async () => {
  const { tenant } = world;
  // every caller turn makes the agent call the tool, whose mock holds it 30 s: the run's one slot stays
  // busy for minutes (the cancel at the end lets it go)
  world.chat.reply = ({ messages }: { messages: { role: string }[] }) =>
    messages.at(-1)?.role === "tool" ? { text: "Booked." } : { toolCalls: [{ name: "book_table", arguments: {} }] };
  const held = (name: string) => ({
    name,
    kind: "scripted",
    turns: Array(6).fill({ say: "A table for two." }),
    toolMocks: [{ tool: "book_table", output: "booked", delayMs: 30_000 }],
    criteria: [{ name: "hung up", type: "endedReason", in: ["hangup"] }],
  });
  const created = await tenant.org.post(`${tenant.P}/test-runs`, {
    assistantId,
    scenarios: [held("first"), held("second")],
    concurrency: 2,
  });
  expect(created.status).toBe(202);
  const runId = created.body.data.id as string;
  try {
    const statuses = async () =>
      (await db.select({ status: testResults.status }).from(testResults).where(eq(testResults.runId, runId)))
        .map((r) => r.status)
        .sort();
    // the run's workflow scheduled both calls on the test runs' queue; the worker's one slot runs the first
    const queues = taskQueueEnv(worker.taskQueue);
    const run = temporal.client.workflow.getHandle(testRunWorkflowId(runId));
    await eventually(
      async () => {
        // not found until the worker's starter has started it
        const described = await run.describe().catch(() => null);
        return described?.raw.pendingActivities?.length === 2 && (await statuses())[1] === "running";
      },
      "both calls scheduled, the first running",
      30_000,
    );
    expect((await run.describe()).taskQueue).toBe(queues.TEST_RUN_TASK_QUEUE);
    expect(await statuses()).toEqual(["pending", "running"]);

    // a customer's hook: attempt 1 fails, attempt 2 is the delivery workflow's, on the hooks' queue
    const { organizationId, assistantId: hooked } = await createAssistantWithHooks(db, [{ url: receiver.url }]);
    const deliveryId = await emitOne(db, { organizationId, assistantId: hooked, event: callConcluded() });
    const delivered = await eventually(
      async () => {
        const row = await deliveryRow(db, deliveryId);
        return row.status === "SUCCEEDED" && row;
      },
      "the hook delivered at its second attempt",
      30_000,
    );
    expect(delivered.attemptCount).toBe(2);
    const delivery = await temporal.client.workflow.getHandle(hookDeliveryWorkflowId(deliveryId, 1)).describe();
    expect(delivery.taskQueue).toBe(queues.HOOK_TASK_QUEUE);
    // the run's second call, queued before the hook's event, still waits for its slot
    expect(await statuses()).toEqual(["pending", "running"]);
    expect((await run.describe()).raw.pendingActivities).toHaveLength(2);
  } finally {
    // its calls end within seconds of the cancel
    expect((await tenant.org.post(`${tenant.P}/test-runs/${runId}/cancel`)).status).toBe(200);
  }
}, 120_000);

test("a campaign workflow started on the hooks' queue before the upgrade moves to the campaigns' queue at its next step", async () => {
  const { tenant } = world;
  const { phoneNumberId } = await createCallerNumber(tenant, "+15550430000");
  // canceled with a call still out: the worker's sweep (running and paused campaigns) leaves it alone,
  // and each step waits for that call
  const campaignId = await insertCampaign(
    db,
    { organizationId: tenant.organizationId, assistantId, phoneNumberId },
    "canceled",
    ["dialing"],
  );
  const queues = taskQueueEnv(worker.taskQueue);
  const started = await temporal.client.workflow.start(CAMPAIGN_WORKFLOW, {
    taskQueue: queues.HOOK_TASK_QUEUE,
    workflowId: campaignWorkflowId(campaignId),
    args: [{ campaignId: campaignId }],
  });
  try {
    const moved = await eventually(
      async () => {
        const latest = await temporal.client.workflow.getHandle(started.workflowId).describe();
        return latest.runId !== started.firstExecutionRunId && latest;
      },
      "a run after the first",
      30_000,
    );
    expect(moved.taskQueue).toBe(queues.CAMPAIGN_TASK_QUEUE);
    expect(moved.status.name).toBe("RUNNING");
    const first = await temporal.client.workflow.getHandle(started.workflowId, started.firstExecutionRunId).describe();
    expect(first).toMatchObject({ taskQueue: queues.HOOK_TASK_QUEUE, status: { name: "CONTINUED_AS_NEW" } });
  } finally {
    await started.terminate("test over");
  }
}, 60_000);
