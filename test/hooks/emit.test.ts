// The outbox half of the event path, no Temporal involved: what an emit writes, and when the dispatchers
// hear of it.
import { afterAll, describe, expect, test } from "bun:test";
import { eq, like } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createSecretBox } from "../../src/crypto/secrets";
import { createDb } from "../../src/db/client";
import { randomUUID } from "node:crypto";
import { markCallStarted, openCallTask, type CallTask } from "../../src/calls/call-lifecycle";
import { agentTasks, hookDeliveries, hookEventBodies } from "../../src/db/schema";
import { transactionWithEvents } from "../../src/events/emit-call-event";
import { HOOK_DELIVERIES_CHANNEL } from "../../src/events/wake-dispatchers";
import {
  at,
  bodyOf,
  callConcluded,
  callStarted,
  createAssistantWithHooks,
  deliveryRow,
  emit,
  openDb,
} from "./fixtures";

const { db, client, close } = openDb();
// these deliveries point nowhere: keep them from workers that later test files start
afterAll(async () => {
  await db.delete(hookDeliveries).where(like(hookDeliveries.url, "http://127.0.0.1:9/%"));
  await close();
});

describe("emitting call events", () => {
  test("writes one PENDING delivery per hook of the event's type, target and body frozen", async () => {
    const a = await createAssistantWithHooks(db, [
      {
        type: "call_concluded",
        url: "http://127.0.0.1:9/a",
        method: "put",
        headers: { "x-tenant": "t1" },
        secret: "whsec_AAEC",
      },
      { type: "call_started", url: "http://127.0.0.1:9/b" },
      { type: "call_concluded", url: "http://127.0.0.1:9/c" },
    ]);
    const event = callConcluded({ summary: null });
    const { deliveryIds } = await emit(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });
    expect(deliveryIds).toHaveLength(2);

    const rows = await Promise.all(deliveryIds.map((id) => deliveryRow(db, id)));
    const put = rows.find((r) => r.url.endsWith("/a"))!;
    expect(put).toMatchObject({
      method: "PUT",
      headers: { "x-tenant": "t1" },
      status: "PENDING",
      run: 1,
      attemptCount: 0,
    });
    expect(createSecretBox(loadConfig().encryptionKey).decrypt(put.secretEncrypted!)).toBe("whsec_AAEC");
    const plain = rows.find((r) => r.url.endsWith("/c"))!;
    expect(plain).toMatchObject({ method: "POST", headers: {}, secretEncrypted: null, callId: event.callId });
    const body = JSON.parse(await bodyOf(db, plain.id));
    expect(body).not.toHaveProperty("summary");
    expect(body.callId).toBe(event.callId);
    // one stored body for both hooks, not a copy per delivery
    expect(put.bodyId).toBe(plain.bodyId);
    expect(await db.select().from(hookEventBodies).where(eq(hookEventBodies.callId, event.callId))).toHaveLength(1);
  });

  test("emitting the same event again adds nothing and returns the same ids", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const event = callStarted();
    const input = { organizationId: a.organizationId, assistantId: a.assistantId, event };
    const first = await emit(db, input);
    const second = await emit(db, { ...input, event: { ...event, startedAt: 1 } });
    expect(second.deliveryIds).toEqual(first.deliveryIds);
    const rows = await db.select().from(hookDeliveries).where(eq(hookDeliveries.callId, event.callId));
    expect(rows).toHaveLength(1);
    expect(JSON.parse(await bodyOf(db, at(rows).id)).startedAt).toBe(event.startedAt);
  });

  test("the same event emitted concurrently is written once, and every emit returns its ids in the hooks' order", async () => {
    const a = await createAssistantWithHooks(db, [
      { url: "http://127.0.0.1:9/first" },
      { url: "http://127.0.0.1:9/second" },
    ]);
    const event = callConcluded();
    const input = { organizationId: a.organizationId, assistantId: a.assistantId, event };
    // each emit in its own transaction: the later ones wait on the first one's rows, then find them
    const results = await Promise.all(Array.from({ length: 4 }, () => emit(db, input)));
    const rows = await db.select().from(hookDeliveries).where(eq(hookDeliveries.callId, event.callId));
    expect(rows).toHaveLength(2);
    const byHook = new Map(rows.map((r) => [r.hookKey, r.id]));
    const expected = a.hooks.map((h) => byHook.get(h.id));
    for (const r of results) expect(r.deliveryIds).toEqual(expected as string[]);
    expect(await db.select().from(hookEventBodies).where(eq(hookEventBodies.callId, event.callId))).toHaveLength(1);
  });

  test("an assistant without hooks of that type gets no delivery", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const res = await emit(db, {
      organizationId: a.organizationId,
      assistantId: a.assistantId,
      event: callConcluded(),
    });
    expect(res.deliveryIds).toEqual([]);
  });

  test("nothing is written when the caller's transaction rolls back", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const event = callStarted();
    const rollback = new Error("the call change failed");
    const attempt = transactionWithEvents(db, async (_tx, emit) => {
      await emit({ organizationId: a.organizationId, assistantId: a.assistantId, event });
      throw rollback;
    });
    await expect(attempt).rejects.toBe(rollback);
    expect(await db.select().from(hookDeliveries).where(eq(hookDeliveries.callId, event.callId))).toHaveLength(0);
  });

  test("the dispatchers are woken after the commit, not inside the transaction", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const heard = await listenForWakeUps();
    try {
      await transactionWithEvents(db, async (_tx, emit) => {
        await emit({ organizationId: a.organizationId, assistantId: a.assistantId, event: callStarted() });
        await new Promise((r) => setTimeout(r, 100));
        expect(heard.count()).toBe(0);
      });
      expect(await heard.settled()).toBe(1);
    } finally {
      await heard.unlisten();
    }
  });

  test("writes that commit together from one process share their wake-ups", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const writes = 20;
    // a connection per write: each transaction holds its write open until all have written, so the
    // commits go out together, as those of many calls ending at once do
    const burst = createDb(process.env.DATABASE_URL!, { max: writes });
    let written = 0;
    let allWritten!: () => void;
    const together = new Promise<void>((resolve) => (allWritten = resolve));
    const heard = await listenForWakeUps();
    try {
      const results = await Promise.all(
        Array.from({ length: writes }, () =>
          transactionWithEvents(burst.db, async (_tx, emit) => {
            const emitted = await emit({
              organizationId: a.organizationId,
              assistantId: a.assistantId,
              event: callStarted(),
            });
            if (++written === writes) allWritten();
            await together;
            return emitted;
          }),
        ),
      );
      expect(results.flatMap((r) => r.deliveryIds)).toHaveLength(writes);
      // one NOTIFY in flight at a time: the commits that land meanwhile share the next one (sent inside
      // each transaction, every write had its own)
      const count = await heard.settled();
      expect(count).toBeGreaterThanOrEqual(1);
      expect(count).toBeLessThan(writes / 2);
    } finally {
      await heard.unlisten();
      await burst.close();
    }
  });
});

describe("marking a call started (the change and its event in one statement)", () => {
  async function openTask(a: { organizationId: string; assistantId: string }) {
    const task: CallTask = {
      callId: randomUUID(),
      organizationId: a.organizationId,
      assistantId: a.assistantId,
      transport: { type: "sip" },
      bridgeId: "emit-test",
      direction: "inbound",
      variables: {},
    };
    await openCallTask(db, task);
    return task;
  }
  const deliveriesOf = (callId: string) => db.select().from(hookDeliveries).where(eq(hookDeliveries.callId, callId));

  test("writes startedAt and call_started once: a second mark (a retry, a replay) writes nothing", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const task = await openTask(a);
    const heard = await listenForWakeUps();
    try {
      await markCallStarted(db, task, 1_000);
      await markCallStarted(db, task, 2_000);
      expect(await heard.settled()).toBe(1);
    } finally {
      await heard.unlisten();
    }
    const [row] = await db.select().from(agentTasks).where(eq(agentTasks.callId, task.callId));
    expect(row?.startedAt?.getTime()).toBe(1_000);
    const rows = await deliveriesOf(task.callId);
    expect(rows).toHaveLength(1);
    expect(JSON.parse(await bodyOf(db, at(rows).id))).toMatchObject({ type: "call_started", startedAt: 1_000 });
  });

  test("a closed task is not marked, and no event is written", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_started", url: "http://127.0.0.1:9/x" }]);
    const task = await openTask(a);
    await db.update(agentTasks).set({ status: "completed" }).where(eq(agentTasks.callId, task.callId));
    await markCallStarted(db, task, 1_000);
    const [row] = await db.select().from(agentTasks).where(eq(agentTasks.callId, task.callId));
    expect(row?.startedAt).toBeNull();
    expect(await deliveriesOf(task.callId)).toHaveLength(0);
    expect(await db.select().from(hookEventBodies).where(eq(hookEventBodies.callId, task.callId))).toHaveLength(0);
  });

  test("without hooks of the type it still marks the task", async () => {
    const a = await createAssistantWithHooks(db, [{ type: "call_concluded", url: "http://127.0.0.1:9/x" }]);
    const task = await openTask(a);
    await markCallStarted(db, task, 1_000);
    const [row] = await db.select().from(agentTasks).where(eq(agentTasks.callId, task.callId));
    expect(row?.startedAt?.getTime()).toBe(1_000);
    expect(await deliveriesOf(task.callId)).toHaveLength(0);
  });
});

/** Counts the NOTIFYs on the dispatchers' channel; settled() waits for the first, then until none came for a while. */
async function listenForWakeUps() {
  let count = 0;
  const listener = await client.listen(HOOK_DELIVERIES_CHANNEL, () => count++);
  return {
    count: () => count,
    async settled() {
      // not a time limit on the code: a wake-up still on its way would only be counted too
      for (const deadline = Date.now() + 10_000; count === 0 && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 10));
      for (let seen = -1; seen !== count; ) {
        seen = count;
        await new Promise((r) => setTimeout(r, 300));
      }
      return count;
    },
    unlisten: () => listener.unlisten(),
  };
}
