import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createDb } from "../../src/db/client";
import { agentTasks, assistants, sipCredentials, sipRegistrations } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;
const database = createDb(process.env.DATABASE_URL!, { max: 2 });

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(async () => {
  await api.stop();
  await database.close();
});

describe("LLM generation strategies", () => {
  const params = {
    temperature: 0.6,
    outputSampleRate: 24000,
    model: "gpt-realtime",
    voice: {
      provider: "openai",
      voiceId: "alloy",
      modelId: "m",
      speed: 1.1,
      stability: 0.5,
      similarityBoost: 0.7,
      style: 0,
      useSpeakerBoost: true,
    },
    vad: { confidenceThreshold: 0.5, minVolume: 0.1, startDuration: 200, stopDuration: 600, backbufferDuration: 300 },
  };

  test("create, read, list, update and delete", async () => {
    const created = await a.org.post(`${a.P}/llm-generation-strategies`, {
      name: "warm",
      type: "openai_realtime",
      parameters: params,
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toEqual({
      id,
      name: "warm",
      type: "openai_realtime",
      organizationId: a.organizationId,
      parameters: params,
    });
    expect((await a.org.get(`${a.P}/llm-generation-strategies/${id}`)).body.data).toEqual(created.body.data);
    const updated = await a.org.put(`${a.P}/llm-generation-strategies/${id}`, {
      name: "cool",
      type: "openai_realtime",
      parameters: { temperature: 0.2 },
    });
    expect(updated.body.data).toMatchObject({ name: "cool", parameters: { temperature: 0.2 } });
    const list = await a.org.get(`${a.P}/llm-generation-strategies?sort=type,asc`);
    expect(list.body.data.map((s: { id: string }) => s.id)).toContain(id);
    expect((await a.org.delete(`${a.P}/llm-generation-strategies/${id}`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/llm-generation-strategies/${id}`)).status).toBe(404);
  });

  test("voice and vad values are type-checked; keys the type does not know are refused (strategy-types.test.ts has more)", async () => {
    const bad = await a.org.post(`${a.P}/llm-generation-strategies`, {
      name: "bad",
      type: "openai_realtime",
      parameters: {
        temperature: "hot",
        outputSampleRate: 0,
        voice: { speed: "fast", useSpeakerBoost: "yes" },
        vad: { stopDuration: null },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(
      [
        "parameters.outputSampleRate",
        "parameters.temperature",
        "parameters.vad.stopDuration",
        "parameters.voice.speed",
        "parameters.voice.useSpeakerBoost",
      ].sort(),
    );
    expect(
      (
        await a.org.post(`${a.P}/llm-generation-strategies`, {
          name: "f",
          type: "pipeline",
          parameters: { outputSampleRate: 8000.5 },
        })
      ).status,
    ).toBe(400);
    const custom = await a.org.post(`${a.P}/llm-generation-strategies`, {
      name: "f",
      type: "pipeline",
      parameters: { custom: { x: 1 } },
    });
    expect(custom.body.errors.map((e: { field: string }) => e.field)).toEqual(["parameters.custom"]);
    expect(
      (await a.org.post(`${a.P}/llm-generation-strategies`, { name: "f", type: "pipeline" })).body.errors[0].field,
    ).toBe("parameters");
  });

  test("the strategy read is 404 for another organization's strategy", async () => {
    const theirs = (
      await b.org.post(`${b.P}/llm-generation-strategies`, { name: "b", type: "pipeline", parameters: {} })
    ).body.data;
    expect((await a.org.get(`${a.P}/llm-generation-strategies/${theirs.id}`)).status).toBe(404);
  });
});

describe("SIP credentials", () => {
  const cred = { hostname: "sip.trunk.example", port: 5060, username: "acme", password: "s3cr3t-pw" };

  test("create, read, list, update, delete; the password is never returned", async () => {
    const created = await a.org.post(`${a.P}/sip/credentials`, cred);
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toEqual({
      id,
      hostname: "sip.trunk.example",
      port: 5060,
      username: "acme",
      maxAgentTasks: 10,
      activeAgentTasks: 0,
      registration: null,
    });
    const all = [created, await a.org.get(`${a.P}/sip/credentials/${id}`), await a.org.get(`${a.P}/sip/credentials`)];
    const updated = await a.org.put(`${a.P}/sip/credentials/${id}`, {
      ...cred,
      password: "n3w-pw",
      port: 5080,
      maxAgentTasks: 3,
    });
    expect(updated.body.data).toMatchObject({ port: 5080, maxAgentTasks: 3 });
    // until a bridge owns the credential there is no registration state; then it reads back with it
    await database.db.insert(sipRegistrations).values({
      credentialId: id,
      leaseExpiresAt: new Date(),
      state: "failing",
      lastStatus: 401,
      lastError: "401 Unauthorized",
    });
    const withState = [await a.org.get(`${a.P}/sip/credentials/${id}`), await a.org.get(`${a.P}/sip/credentials`)];
    expect(withState[0]!.body.data.registration).toEqual({
      state: "failing",
      lastStatus: 401,
      lastError: "401 Unauthorized",
      updatedAt: expect.any(String),
    });
    expect(withState[1]!.body.data.find((c: { id: string }) => c.id === id).registration).toMatchObject({
      state: "failing",
      lastStatus: 401,
    });
    for (const res of [...all, updated]) expect(JSON.stringify(res.body)).not.toMatch(/s3cr3t|n3w-pw|password/i);
    // stored encrypted, not in the clear
    const [row] = await database.db.select().from(sipCredentials).where(eq(sipCredentials.id, id));
    expect(row!.passwordEncrypted).not.toContain("n3w-pw");
    // PUT without maxAgentTasks resets it to the default
    expect((await a.org.put(`${a.P}/sip/credentials/${id}`, cred)).body.data.maxAgentTasks).toBe(10);
    expect((await a.org.delete(`${a.P}/sip/credentials/${id}`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/sip/credentials/${id}`)).status).toBe(404);
  });

  test("PUT requires every field; bounds on port and maxAgentTasks", async () => {
    const id = (await a.org.post(`${a.P}/sip/credentials`, cred)).body.data.id;
    const missing = await a.org.put(`${a.P}/sip/credentials/${id}`, { hostname: "h", port: 5060, username: "u" });
    expect(missing.body.errors.map((e: { field: string }) => e.field)).toEqual(["password"]);
    for (const [body, field] of [
      [{ ...cred, port: 0 }, "port"],
      [{ ...cred, port: 65536 }, "port"],
      [{ ...cred, port: "5060" }, "port"],
      [{ ...cred, port: 5060.5 }, "port"],
      [{ ...cred, maxAgentTasks: 0 }, "maxAgentTasks"],
      [{ ...cred, hostname: "bad host!" }, "hostname"],
    ] as const) {
      const res = await a.org.post(`${a.P}/sip/credentials`, body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    for (const port of [1, 65535])
      expect((await a.org.post(`${a.P}/sip/credentials`, { ...cred, port })).status).toBe(201);
    // a private registrar is refused unless OUTBOUND_ALLOW_CIDRS opens it (test/security covers every form)
    expect((await a.org.post(`${a.P}/sip/credentials`, { ...cred, hostname: "10.0.0.1" })).body.errors[0].field).toBe(
      "hostname",
    );
  });
});

describe("SIP phone numbers", () => {
  let credId: string;
  let base: string;
  beforeAll(async () => {
    credId = (
      await a.org.post(`${a.P}/sip/credentials`, {
        hostname: "sip.numbers.example",
        port: 5060,
        username: "n",
        password: "p",
      })
    ).body.data.id;
    base = `${a.P}/sip/credentials/${credId}/phone-numbers`;
  });

  test("create, read, list, update, delete, with numbers normalised", async () => {
    const created = await a.org.post(base, { phoneNumber: "+49 (30) 1234-5678" });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({ id: expect.any(String), phoneNumber: "+493012345678", fallback: false });
    const id = created.body.data.id;
    expect((await a.org.get(`${base}/${id}`)).body.data.phoneNumber).toBe("+493012345678");
    const updated = await a.org.put(`${base}/${id}`, { phoneNumber: "0049 30 1234 5679", fallback: true });
    expect(updated.body.data).toEqual({ id, phoneNumber: "+493012345679", fallback: true });
    expect((await a.org.get(base)).body.data.map((n: { id: string }) => n.id)).toContain(id);
    expect((await a.org.delete(`${base}/${id}`)).status).toBe(200);
    expect((await a.org.get(`${base}/${id}`)).status).toBe(404);
  });

  test("duplicates are refused within a vendor, in any spelling and under any credential", async () => {
    expect((await a.org.post(base, { phoneNumber: "+1 415 555 0100" })).status).toBe(201);
    const again = await a.org.post(base, { phoneNumber: "001-415-555-0100" });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain("already exists");
    // another organization of the same vendor
    const sibling = (await a.vendor.post(`/api/v1/vendors/${a.vendorId}/organizations`, { name: "sib" })).body.data;
    const sibP = `/api/v1/vendors/${a.vendorId}/organizations/${sibling.id}`;
    const sibCred = (
      await a.vendor.post(`${sibP}/sip/credentials`, {
        hostname: "h.example",
        port: 5060,
        username: "u",
        password: "p",
      })
    ).body.data;
    expect(
      (await a.vendor.post(`${sibP}/sip/credentials/${sibCred.id}/phone-numbers`, { phoneNumber: "+14155550100" }))
        .status,
    ).toBe(409);
    // another vendor may hold the same number
    const bCred = (
      await b.org.post(`${b.P}/sip/credentials`, { hostname: "h.example", port: 5060, username: "u", password: "p" })
    ).body.data;
    expect(
      (await b.org.post(`${b.P}/sip/credentials/${bCred.id}/phone-numbers`, { phoneNumber: "+14155550100" })).status,
    ).toBe(201);
  });

  test("at most one fallback per credential", async () => {
    expect((await a.org.post(base, { phoneNumber: "+3311111111", fallback: true })).status).toBe(201);
    const second = await a.org.post(base, { phoneNumber: "+3311111112", fallback: true });
    expect(second.status).toBe(409);
    expect(second.body.message).toContain("fallback");
  });

  test("malformed numbers are a 400 on phoneNumber; PUT needs phoneNumber", async () => {
    for (const phoneNumber of ["abc", "+", "12+34", "1"]) {
      const res = await a.org.post(base, { phoneNumber });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe("phoneNumber");
    }
    const id = (await a.org.post(base, { phoneNumber: "+3399999999" })).body.data.id;
    expect((await a.org.put(`${base}/${id}`, { fallback: true })).body.errors[0].field).toBe("phoneNumber");
  });

  test("numbers of an unknown or foreign credential are 404", async () => {
    expect((await a.org.get(`${a.P}/sip/credentials/${crypto.randomUUID()}/phone-numbers`)).status).toBe(404);
    expect(
      (await a.org.post(`${a.P}/sip/credentials/${crypto.randomUUID()}/phone-numbers`, { phoneNumber: "+123456" }))
        .status,
    ).toBe(404);
  });
});

describe("agent tasks", () => {
  test("list with filters and read; another organization's task is 404", async () => {
    const assistant = (await a.org.post(`${a.P}/assistants`, { name: "Tasks" })).body.data;
    const agent = (await a.org.post(`${a.P}/agents`, { name: "Tasks agent" })).body.data;
    const now = new Date();
    const rows = await database.db
      .insert(agentTasks)
      .values([
        {
          organizationId: a.organizationId,
          callId: crypto.randomUUID(),
          assistantId: assistant.id,
          transport: { type: "websocket" },
          status: "active",
          startedAt: now,
        },
        {
          organizationId: a.organizationId,
          callId: crypto.randomUUID(),
          assistantId: assistant.id,
          transport: { type: "sip", calledNumber: "+1", callingNumber: "anonymous" },
          status: "completed",
          startedAt: now,
          endedAt: now,
        },
        {
          organizationId: a.organizationId,
          callId: crypto.randomUUID(),
          assistantId: agent.id,
          transport: { type: "websocket" },
          status: "completed",
        },
        {
          organizationId: b.organizationId,
          callId: crypto.randomUUID(),
          transport: { type: "websocket" },
          status: "active",
        },
      ])
      .returning();
    const all = await a.org.get(`${a.P}/agent-tasks?size=100`);
    expect(all.body.totalElements).toBe(3);
    const active = await a.org.get(`${a.P}/agent-tasks?status=active`);
    expect(active.body.data.map((t: { id: string }) => t.id)).toEqual([rows[0]!.id]);
    const byAssistant = await a.org.get(`${a.P}/agent-tasks?assistantId=${assistant.id}&status=completed`);
    expect(byAssistant.body.data).toHaveLength(1);
    expect(byAssistant.body.data[0]).toMatchObject({
      assistantId: assistant.id,
      agentId: null,
      transport: { type: "sip", callingNumber: "anonymous" },
    });
    const byAgent = await a.org.get(`${a.P}/agent-tasks?agentId=${agent.id}`);
    expect(byAgent.body.data[0]).toMatchObject({ agentId: agent.id, assistantId: null });
    const one = await a.org.get(`${a.P}/agent-tasks/${rows[0]!.id}`);
    expect(one.body.data).toMatchObject({ id: rows[0]!.id, callId: rows[0]!.callId, status: "active", endedAt: null });
    expect((await a.org.get(`${a.P}/agent-tasks/${rows[3]!.id}`)).status).toBe(404);
    expect((await a.org.get(`${a.P}/agent-tasks?status=ringing`)).body.errors[0].field).toBe("status");
    expect((await a.org.get(`${a.P}/agent-tasks?assistantId=nope`)).body.errors[0].field).toBe("assistantId");
    // a deleted assistant leaves its finished calls on record
    await database.db.delete(assistants).where(eq(assistants.id, agent.id));
    expect((await a.org.get(`${a.P}/agent-tasks/${rows[2]!.id}`)).body.data).toMatchObject({
      agentId: null,
      status: "completed",
    });
  });
});
