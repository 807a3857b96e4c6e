// A call concluding while its assistant is deleted: concludeCallTask takes the assistant's row (key
// share) before the task's, in the DELETE's own order, so the two queue up instead of deadlocking.
// Shown by the order itself: with the assistant held, a conclusion waits without having touched the
// task's row; the DELETE then goes through, and so does the conclusion.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { bareConcludedEvent, concludeCallTask } from "../../src/calls/call-lifecycle";
import { createDb } from "../../src/db/client";
import { agentTasks, hookDeliveries } from "../../src/db/schema";
import { createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 3 });
// a second session that holds locks while the conclusion runs
const other = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
let api: TestApi;
let tenant: Tenant;

beforeAll(async () => {
  api = await startTestApi();
  tenant = await createTenant(api.url, "lock-order");
});
afterAll(async () => {
  await other.end();
  await close();
  await api?.stop();
});

test("a conclusion and its assistant's deletion at once: no deadlock, the task closed, the assistant gone", async () => {
  const created = await tenant.org.post(`${tenant.P}/assistants`, {
    name: "to be deleted",
    systemPrompt: "You help.",
    callEventHooks: [{ type: "call_concluded", parameters: { url: "http://127.0.0.1:9/hooks" } }],
  });
  expect(created.status).toBe(201);
  const assistantId: string = created.body.data.id;
  const callId = randomUUID();
  const transport = { type: "websocket" as const };
  await db.insert(agentTasks).values({
    organizationId: tenant.organizationId,
    callId,
    assistantId,
    transport,
    status: "active",
  });

  let concluded: Promise<boolean> | null = null;
  await other.begin(async (tx) => {
    // what a DELETE of the assistant takes first
    await tx`select 1 from assistants where id = ${assistantId} for update`;
    concluded = concludeCallTask(
      db,
      { callId, organizationId: tenant.organizationId, assistantId, testRunId: null },
      { status: "completed", error: null, event: bareConcludedEvent({ callId, transport }, null, "hangup") },
    );
    await Bun.sleep(300);
    // the waiting conclusion holds nothing of the task yet (the old order held its row here)
    const free = await db.execute(sql`select 1 from agent_tasks where call_id = ${callId} for update nowait`);
    expect(free.length).toBe(1);
    await tx`delete from assistants where id = ${assistantId}`;
  });
  expect(await concluded!).toBe(true);
  const [task] = await db.select().from(agentTasks).where(eq(agentTasks.callId, callId));
  expect(task).toMatchObject({ status: "completed", endedReason: "hangup", assistantId: null });
  // the assistant, deleted first, took its hooks along: nothing to deliver
  expect(await db.select().from(hookDeliveries).where(eq(hookDeliveries.assistantId, assistantId))).toHaveLength(0);
});
