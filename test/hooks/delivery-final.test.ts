// The end of the schedule: 20 attempts then FAILED, then a manual re-delivery through the API as run 2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import { connectTemporal } from "../../src/temporal/client";
import { createTenant, startTestApi, type Tenant } from "../helpers/api";
import { always, startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { at, attemptsOf, callConcluded, createAssistantWithHooks, emitOne, openDb, waitForStatus } from "./fixtures";

const { db, close } = openDb();
let address: string;
let worker: TestWorker;
let receiver: Receiver;
let api: Awaited<ReturnType<typeof startTestApi>>;
let tenant: Tenant;

beforeAll(async () => {
  ({ address } = await ensureTemporal());
  // a 1 ms unit: the whole 20-attempt schedule (13,567 units) takes about 14 s
  [worker, receiver, api] = await Promise.all([
    startWorker({ address, backoffBaseMs: 1 }),
    startReceiver(always(500)),
    startTestApi(),
  ]);
  tenant = await createTenant(api.url, "hooks");
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await receiver?.close();
  await api?.stop();
  await close();
});

describe("a delivery that never succeeds", () => {
  let deliveryId: string;
  let callId: string;

  test("is attempted exactly 20 times, then FAILED, then left alone", async () => {
    const a = await createAssistantWithHooks(db, [{ url: `${receiver.url}/down` }], tenant.organizationId);
    const event = callConcluded();
    callId = event.callId;
    deliveryId = await emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event });

    const row = at(await waitForStatus(db, [deliveryId], ["FAILED"], 60_000));
    expect(row.attemptCount).toBe(20);
    expect(row.nextAttemptAt).toBeNull();
    const attempts = await attemptsOf(db, deliveryId);
    expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(attempts.every((a) => a.statusCode === 500 && a.run === 1)).toBe(true);
    expect(attempts.slice(0, 19).every((a) => a.nextAttemptAt !== null)).toBe(true);
    expect(at(attempts, 19).nextAttemptAt).toBeNull();

    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.requests).toHaveLength(20);
  }, 70_000);

  test("its workflow is findable in Temporal by call id, with the run's memo", async () => {
    const temporal = await connectTemporal({ temporal: { ...loadConfig().temporal, address } });
    try {
      const handle = temporal.client.workflow.getHandle(`hook-delivery:${deliveryId}:1`);
      expect(await handle.result()).toEqual({ status: "FAILED", attempts: 20 });
      const description = await handle.describe();
      expect(description.memo).toMatchObject({
        deliveryId,
        callId,
        eventType: "call_concluded",
        organizationId: tenant.organizationId,
      });
      expect(description.searchAttributes).toMatchObject({ HookCallId: [callId], HookStatus: ["FAILED"] });
      const found: string[] = [];
      for await (const wf of temporal.client.workflow.list({ query: `HookCallId = "${callId}"` }))
        found.push(wf.workflowId);
      expect(found).toEqual([`hook-delivery:${deliveryId}:1`]);
    } finally {
      await temporal.close();
    }
  });

  test("the API shows every attempt and re-delivers it as run 2", async () => {
    const detail = await tenant.org.get(`${tenant.P}/hook-deliveries/${deliveryId}`);
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      id: deliveryId,
      callId,
      status: "FAILED",
      run: 1,
      attemptCount: 20,
      workflowId: `hook-delivery:${deliveryId}:1`,
    });
    expect(detail.body.data.attempts).toHaveLength(20);
    expect(detail.body.data.attempts[0]).toEqual({
      run: 1,
      attempt: 1,
      startedAt: expect.any(String),
      durationMs: expect.any(Number),
      statusCode: 500,
      error: null,
      responseExcerpt: null,
      nextAttemptAt: expect.any(String),
    });

    receiver.respond(always(200));
    const retried = await tenant.org.post(`${tenant.P}/hook-deliveries/${deliveryId}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body.data).toMatchObject({
      status: "PENDING",
      run: 2,
      attemptCount: 0,
      workflowId: `hook-delivery:${deliveryId}:2`,
    });

    await waitForStatus(db, [deliveryId], ["SUCCEEDED"], 20_000);
    const after = (await tenant.org.get(`${tenant.P}/hook-deliveries/${deliveryId}`)).body.data;
    expect(after).toMatchObject({ status: "SUCCEEDED", run: 2, attemptCount: 1 });
    expect(after.attempts).toHaveLength(21);
    expect(after.attempts.filter((a: { run: number }) => a.run === 1)).toHaveLength(20);
    expect(after.attempts[20]).toMatchObject({ run: 2, attempt: 1, statusCode: 200 });
    expect(receiver.requests).toHaveLength(21);
    expect(at(receiver.requests, 20).headers["webhook-id"]).toBeUndefined();

    const again = await tenant.org.post(`${tenant.P}/hook-deliveries/${deliveryId}/retry`);
    expect(again.status).toBe(409);
    expect(again.body.success).toBe(false);
  }, 30_000);
});
