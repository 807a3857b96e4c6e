// The hook-deliveries routes: scope, filters, paging, validation and the retry rules. Deliveries are
// emitted with emitCallEvent and their states set directly; the delivery itself is covered elsewhere.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { hookDeliveries, hookDeliveryAttempts } from "../../src/db/schema";
import { createTenant, startTestApi, type Tenant } from "../helpers/api";
import { at, callConcluded, callStarted, createAssistantWithHooks, deliveryRow, emit, openDb } from "./fixtures";

const { db, close } = openDb();
let api: Awaited<ReturnType<typeof startTestApi>>;
let a: Tenant;
let b: Tenant;
let started: string[];
let concluded: string[];
let hookIds: string[];
let callId: string;

beforeAll(async () => {
  api = await startTestApi();
  [a, b] = await Promise.all([createTenant(api.url, "a"), createTenant(api.url, "b")]);
  // no worker runs in this file: the deliveries stay where the test puts them
  const assistant = await createAssistantWithHooks(
    db,
    [
      { type: "call_started", url: "http://127.0.0.1:9/s" },
      {
        type: "call_concluded",
        url: "http://127.0.0.1:9/c1",
        headers: { authorization: "Bearer hidden" },
        secret: "whsec_AAEC",
      },
      { type: "call_concluded", url: "http://127.0.0.1:9/c2", method: "PUT" },
    ],
    a.organizationId,
  );
  hookIds = assistant.hooks.map((h) => h.id);
  const s = callStarted();
  callId = s.callId;
  const base = { organizationId: a.organizationId, assistantId: assistant.assistantId };
  started = (await emit(db, { ...base, event: s })).deliveryIds;
  concluded = (await emit(db, { ...base, event: callConcluded({ callId }) })).deliveryIds;
  for (let i = 0; i < 3; i++) await emit(db, { ...base, event: callStarted() });
  await db
    .update(hookDeliveries)
    .set({ status: "FAILED", attemptCount: 20 })
    .where(eq(hookDeliveries.id, at(concluded, 0)));
  await db
    .update(hookDeliveries)
    .set({ status: "SUCCEEDED", attemptCount: 1 })
    .where(eq(hookDeliveries.id, at(concluded, 1)));
  await db.insert(hookDeliveryAttempts).values([
    {
      deliveryId: at(concluded, 1),
      run: 1,
      attempt: 1,
      startedAt: new Date(),
      durationMs: 12,
      statusCode: 200,
      responseExcerpt: "ok",
    },
  ]);
}, 30_000);
afterAll(async () => {
  // these deliveries point nowhere: keep them from workers that later test files start
  await db.delete(hookDeliveries).where(eq(hookDeliveries.organizationId, a.organizationId));
  await api.stop();
  await close();
});

const list = (t: Tenant, query = "") => t.org.get(`${t.P}/hook-deliveries${query}`);

describe("GET P/hook-deliveries", () => {
  test("lists the organization's deliveries in the paginated envelope, without headers or secrets", async () => {
    const res = await list(a, "?size=100");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, page: 0, size: 100, totalElements: 6, totalPages: 1 });
    const item = res.body.data.find((d: { id: string }) => d.id === concluded[0]);
    expect(item).toEqual({
      id: concluded[0],
      callId,
      eventType: "call_concluded",
      hookId: hookIds[1],
      assistantId: expect.any(String),
      url: "http://127.0.0.1:9/c1",
      method: "POST",
      status: "FAILED",
      run: 1,
      attemptCount: 20,
      nextAttemptAt: null,
      workflowId: `hook-delivery:${concluded[0]}:1`,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(JSON.stringify(res.body)).not.toContain("hidden");
    expect(JSON.stringify(res.body)).not.toContain("AAEC");
  });

  test("filters by callId, status, hookId and eventType", async () => {
    const ids = async (query: string) => (await list(a, query)).body.data.map((d: { id: string }) => d.id).sort();
    expect(await ids(`?callId=${callId}`)).toEqual([...started, ...concluded].sort());
    expect(await ids("?status=FAILED")).toEqual([concluded[0]]);
    expect(await ids(`?hookId=${hookIds[2]}`)).toEqual([concluded[1]]);
    expect(await ids(`?eventType=call_concluded&status=SUCCEEDED`)).toEqual([concluded[1]]);
    expect((await list(a, "?eventType=call_started")).body.totalElements).toBe(4);
  });

  test("pages through the list", async () => {
    const first = await list(a, "?size=4&page=0&sort=createdAt,asc");
    const second = await list(a, "?size=4&page=1&sort=createdAt,asc");
    expect(first.body).toMatchObject({ page: 0, size: 4, totalElements: 6, totalPages: 2 });
    expect(first.body.data).toHaveLength(4);
    expect(second.body).toMatchObject({ page: 1, size: 4, totalElements: 6, totalPages: 2 });
    expect(second.body.data).toHaveLength(2);
    expect(first.body.data[0].id).toBe(started[0]);
    const seen = new Set([...first.body.data, ...second.body.data].map((d: { id: string }) => d.id));
    expect(seen.size).toBe(6);
  });

  test("rejects unknown filters and bad values with 400", async () => {
    for (const query of [
      "?status=DONE",
      "?callId=nope",
      "?eventType=tool_webhook",
      "?size=0",
      "?sort=url,asc",
      "?color=red",
    ]) {
      const res = await list(a, query);
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
    }
  });

  test("another organization sees none of them; no token is 401", async () => {
    expect((await list(b)).body.totalElements).toBe(0);
    expect((await b.org.get(`${b.P}/hook-deliveries/${concluded[0]}`)).status).toBe(404);
    expect((await b.org.get(`${a.P}/hook-deliveries`)).status).toBe(403);
    expect((await a.org.get(`${a.P}/hook-deliveries`, { authorization: "" })).status).toBe(401);
  });
});

describe("GET P/hook-deliveries/{id}", () => {
  test("returns the delivery with its attempts", async () => {
    const res = await a.org.get(`${a.P}/hook-deliveries/${concluded[1]}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: concluded[1], method: "PUT", status: "SUCCEEDED" });
    expect(res.body.data.attempts).toEqual([
      {
        run: 1,
        attempt: 1,
        startedAt: expect.any(String),
        durationMs: 12,
        statusCode: 200,
        error: null,
        responseExcerpt: "ok",
        nextAttemptAt: null,
      },
    ]);
  });

  test("is 404 for an unknown or malformed id", async () => {
    expect((await a.org.get(`${a.P}/hook-deliveries/${randomUUID()}`)).status).toBe(404);
    expect((await a.org.get(`${a.P}/hook-deliveries/not-a-uuid`)).status).toBe(404);
  });
});

describe("POST P/hook-deliveries/{id}/retry", () => {
  test("is 409 for PENDING and SUCCEEDED deliveries, 404 for another organization's", async () => {
    expect((await a.org.post(`${a.P}/hook-deliveries/${started[0]}/retry`)).status).toBe(409);
    expect((await a.org.post(`${a.P}/hook-deliveries/${concluded[1]}/retry`)).status).toBe(409);
    expect((await b.org.post(`${b.P}/hook-deliveries/${concluded[0]}/retry`)).status).toBe(404);
  });

  test("starts run 2 of a FAILED delivery, hands it to the dispatcher, and only once", async () => {
    const res = await a.org.post(`${a.P}/hook-deliveries/${concluded[0]}/retry`);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      status: "PENDING",
      run: 2,
      attemptCount: 0,
      workflowId: `hook-delivery:${concluded[0]}:2`,
    });
    const row = await deliveryRow(db, at(concluded, 0));
    expect(row.dispatchedAt).toBeNull();
    expect((await a.org.post(`${a.P}/hook-deliveries/${concluded[0]}/retry`)).status).toBe(409);
  });
});
