// Healing a window of failures in one call (POST P/hook-deliveries/recover) and the counts that show it
// is needed (GET P/hook-deliveries/stats). No worker runs here: deliveries stay where the test puts them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { hookDeliveries } from "../../src/db/schema";
import { createTenant, startTestApi, type Tenant } from "../helpers/api";
import { at, callConcluded, createAssistantWithHooks, deliveryRow, emit, openDb } from "./fixtures";

const { db, close } = openDb();
let api: Awaited<ReturnType<typeof startTestApi>>;
let a: Tenant;
let b: Tenant;
let hook1: string;
let hook2: string;
/** the deliveries of events 0..3 to hook 1 and to hook 2 */
const h1: string[] = [];
const h2: string[] = [];
const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();

async function setStatus(ids: string[], status: "PENDING" | "SUCCEEDED" | "FAILED") {
  await db.update(hookDeliveries).set({ status, dispatchedAt: new Date() }).where(inArray(hookDeliveries.id, ids));
}

beforeAll(async () => {
  api = await startTestApi();
  [a, b] = await Promise.all([createTenant(api.url, "a"), createTenant(api.url, "b")]);
  const assistant = await createAssistantWithHooks(
    db,
    [{ url: "http://127.0.0.1:9/one" }, { url: "http://127.0.0.1:9/two" }],
    a.organizationId,
  );
  hook1 = at(assistant.hooks, 0).id;
  hook2 = at(assistant.hooks, 1).id;
  for (let i = 0; i < 4; i++) {
    const { deliveryIds } = await emit(db, {
      organizationId: a.organizationId,
      assistantId: assistant.assistantId,
      event: callConcluded(),
    });
    h1.push(at(deliveryIds, 0));
    h2.push(at(deliveryIds, 1));
  }
  // hook 1: three FAILED (one of them two days old, outside the window), one SUCCEEDED
  await setStatus([at(h1, 0), at(h1, 1), at(h1, 2)], "FAILED");
  await setStatus([at(h1, 3)], "SUCCEEDED");
  await db
    .update(hookDeliveries)
    .set({ createdAt: new Date(Date.now() - 2 * 86_400_000) })
    .where(eq(hookDeliveries.id, at(h1, 0)));
  // hook 2: two SUCCEEDED, one FAILED, one PENDING
  await setStatus([at(h2, 0), at(h2, 1)], "SUCCEEDED");
  await setStatus([at(h2, 2)], "FAILED");
}, 30_000);
afterAll(async () => {
  // these deliveries point nowhere: keep them from workers that later test files start
  await db.delete(hookDeliveries).where(eq(hookDeliveries.organizationId, a.organizationId));
  await api.stop();
  await close();
});

const stats = (t: Tenant, query: string) => t.org.get(`${t.P}/hook-deliveries/stats${query}`);
const recover = (t: Tenant, body: unknown) => t.org.post(`${t.P}/hook-deliveries/recover`, body);

describe("GET P/hook-deliveries/stats", () => {
  test("counts by state and the success rate per hook over the window", async () => {
    const res = await stats(a, `?createdAfter=${hourAgo()}`);
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ total: 7, byStatus: { PENDING: 1, SUCCEEDED: 3, FAILED: 3 } });
    const byHook = Object.fromEntries(data.hooks.map((h: { hookId: string }) => [h.hookId, h]));
    expect(byHook[hook1]).toEqual({
      hookId: hook1,
      total: 3,
      byStatus: { PENDING: 0, SUCCEEDED: 1, FAILED: 2 },
      successRate: 1 / 3,
    });
    expect(byHook[hook2]).toEqual({
      hookId: hook2,
      total: 4,
      byStatus: { PENDING: 1, SUCCEEDED: 2, FAILED: 1 },
      successRate: 2 / 3,
    });
    expect(new Date(data.createdBefore).getTime()).toBeLessThanOrEqual(Date.now());
  });

  test("narrows to one hook and to createdBefore; a window with nothing finished has no rate", async () => {
    const one = (await stats(a, `?createdAfter=${hourAgo()}&hookId=${hook2}`)).body.data;
    expect(one.hooks.map((h: { hookId: string }) => h.hookId)).toEqual([hook2]);
    expect(one.total).toBe(4);
    const old = new Date(Date.now() - 3 * 86_400_000).toISOString();
    const before = (await stats(a, `?createdAfter=${old}&createdBefore=${hourAgo()}`)).body.data;
    expect(before).toMatchObject({ total: 1, byStatus: { PENDING: 0, SUCCEEDED: 0, FAILED: 1 } });
    await db
      .update(hookDeliveries)
      .set({ status: "PENDING" })
      .where(eq(hookDeliveries.id, at(h1, 0)));
    const pending = (await stats(a, `?createdAfter=${old}&createdBefore=${hourAgo()}`)).body.data;
    expect(pending.hooks).toEqual([
      { hookId: hook1, total: 1, byStatus: { PENDING: 1, SUCCEEDED: 0, FAILED: 0 }, successRate: null },
    ]);
    await db
      .update(hookDeliveries)
      .set({ status: "FAILED" })
      .where(eq(hookDeliveries.id, at(h1, 0)));
  });

  test("a missing or reversed window is a 400 naming the field; another organization sees nothing", async () => {
    const missing = await stats(a, "");
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.errors)).toContain("createdAfter");
    const reversed = await stats(a, `?createdAfter=${new Date().toISOString()}&createdBefore=${hourAgo()}`);
    expect(reversed.status).toBe(400);
    expect(reversed.body.errors).toEqual([{ field: "createdBefore", message: "must be later than createdAfter" }]);
    expect((await stats(a, "?createdAfter=yesterday")).status).toBe(400);
    expect((await stats(b, `?createdAfter=${hourAgo()}`)).body.data).toMatchObject({ total: 0, hooks: [] });
  });
});

describe("POST P/hook-deliveries/recover", () => {
  test("another organization's call restarts nothing of this one", async () => {
    const res = await recover(b, { createdAfter: hourAgo() });
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ restarted: 0, deliveryIds: [] });
  });

  test("restarts the FAILED deliveries of one hook in the window as run 2, and nothing else", async () => {
    const res = await recover(a, { createdAfter: hourAgo(), hookId: hook1 });
    expect(res.status).toBe(202);
    expect(res.body.data.restarted).toBe(2);
    expect([...res.body.data.deliveryIds].sort()).toEqual([at(h1, 1), at(h1, 2)].sort());
    for (const id of [at(h1, 1), at(h1, 2)]) {
      expect(await deliveryRow(db, id)).toMatchObject({
        status: "PENDING",
        run: 2,
        attemptCount: 0,
        dispatchedAt: null,
      });
    }
    expect(await deliveryRow(db, at(h1, 0))).toMatchObject({ status: "FAILED", run: 1 }); // outside the window
    expect(await deliveryRow(db, at(h2, 2))).toMatchObject({ status: "FAILED", run: 1 }); // another hook
    expect(await deliveryRow(db, at(h1, 3))).toMatchObject({ status: "SUCCEEDED", run: 1 });

    const rest = await recover(a, { createdAfter: hourAgo() });
    expect(rest.body.data).toEqual({ restarted: 1, deliveryIds: [at(h2, 2)] });
    expect((await recover(a, { createdAfter: hourAgo() })).body.data.restarted).toBe(0);
  });

  test("rejects a bad window or unknown fields with 400", async () => {
    for (const body of [
      {},
      { createdAfter: "soon" },
      { createdAfter: hourAgo(), hookId: "x" },
      { createdAfter: hourAgo(), color: 1 },
    ]) {
      const res = await recover(a, body);
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
    }
  });
});
