import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, createTenant, startTestApi, type Tenant } from "../helpers/api";

let api: Awaited<ReturnType<typeof startTestApi>>;
let a: Tenant;

beforeAll(async () => {
  // a port nothing listens on: Temporal counts as unreachable for /readyz
  api = await startTestApi({ TEMPORAL_ADDRESS: "127.0.0.1:1" });
  a = await createTenant(api.url, "conv");
});
afterAll(() => api.stop());

describe("envelope and trace id", () => {
  test("success and error responses carry the envelope and a traceId", async () => {
    const ok = await a.org.post(`${a.P}/assistants`, { name: "Env" });
    // checked before toMatchObject, which (Bun 1.3) leaves its matchers in the received object
    expect(Number.isNaN(Date.parse(ok.body.timestamp))).toBe(false);
    expect(ok.body).toMatchObject({
      success: true,
      data: expect.any(Object),
      timestamp: expect.any(String),
      traceId: expect.any(String),
    });
    for (const res of [
      await a.org.post(`${a.P}/assistants`, { name: 5 }),
      await client(api.url).get(`${a.P}/assistants`),
      await a.org.get(`${a.P}/assistants/${crypto.randomUUID()}`),
      await a.org.get("/api/v1/no-such-route"),
    ]) {
      expect(res.body).toMatchObject({
        success: false,
        message: expect.any(String),
        timestamp: expect.any(String),
        traceId: expect.any(String),
      });
      expect(res.headers.get("content-type")).toContain("application/json");
    }
  });

  test("an incoming x-request-id or traceparent becomes the traceId", async () => {
    const byId = await a.org.get(`${a.P}/assistants`, { "x-request-id": "req-123" });
    expect(byId.body.traceId).toBe("req-123");
    expect(byId.headers.get("x-request-id")).toBe("req-123");
    const byParent = await a.org.get(`${a.P}/assistants`, {
      traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    });
    expect(byParent.body.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    const error = await client(api.url).get(`${a.P}/assistants`, { "x-request-id": "req-err" });
    expect(error.body.traceId).toBe("req-err");
  });

  test("400s name the fields: unknown fields, wrong types, missing fields, malformed JSON", async () => {
    const unknown = await a.org.post(`${a.P}/assistants`, { name: "x", colour: "blue" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: "colour", message: expect.any(String) }]);
    const wrongType = await a.org.post(`${a.P}/assistants`, { name: "x", systemPrompt: 42 });
    expect(wrongType.body.errors[0].field).toBe("systemPrompt");
    const missing = await a.org.post(`${a.P}/assistants`, {});
    expect(missing.body.errors[0].field).toBe("name");
    const malformed = await a.org.send("POST", `${a.P}/assistants`, '{"name":', { "content-type": "application/json" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].field).toBe("body");
    const nested = await a.org.post(`${a.P}/assistants`, {
      name: "x",
      callEventHooks: [{ type: "call_started", parameters: { url: "https://x.example" }, extra: 1 }],
    });
    expect(nested.body.errors[0].field).toBe("callEventHooks[0].extra");
  });
});

describe("paging and sorting", () => {
  beforeAll(async () => {
    for (const name of ["p-c", "p-a", "p-e", "p-b", "p-d"]) await a.org.post(`${a.P}/agents`, { name });
  });

  test("defaults: page 0, size 20, sorted by name ascending", async () => {
    const res = await a.org.get(`${a.P}/agents`);
    expect(res.body).toMatchObject({ page: 0, size: 20, totalElements: 5, totalPages: 1 });
    expect(res.body.data.map((x: { name: string }) => x.name)).toEqual(["p-a", "p-b", "p-c", "p-d", "p-e"]);
  });

  test("pages walk the whole list without overlap; past the end is empty", async () => {
    const names: string[] = [];
    for (let page = 0; page < 3; page++) {
      const res = await a.org.get(`${a.P}/agents?page=${page}&size=2&sort=name,desc`);
      expect(res.body).toMatchObject({ page, size: 2, totalElements: 5, totalPages: 3 });
      names.push(...res.body.data.map((x: { name: string }) => x.name));
    }
    expect(names).toEqual(["p-e", "p-d", "p-c", "p-b", "p-a"]);
    const past = await a.org.get(`${a.P}/agents?page=9&size=2`);
    expect(past.status).toBe(200);
    expect(past.body.data).toEqual([]);
    expect((await a.org.get(`${a.P}/agents?size=100`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/agents?size=1`)).body.data).toHaveLength(1);
  });

  test("totalElements follows creates and deletes, per kind", async () => {
    const total = async (kind: string) => (await a.org.get(`${a.P}/${kind}?size=1`)).body.totalElements as number;
    const [agents, assistants] = [await total("agents"), await total("assistants")];
    const created = await Promise.all([1, 2, 3].map((i) => a.org.post(`${a.P}/assistants`, { name: `count-${i}` })));
    expect(await total("assistants")).toBe(assistants + 3);
    expect(await total("agents")).toBe(agents);
    await a.org.delete(`${a.P}/assistants/${created[0]!.body.data.id}`);
    expect(await total("assistants")).toBe(assistants + 2);
    // an organization's totals start at zero and go with it
    const org = (await a.vendor.post(`/api/v1/vendors/${a.vendorId}/organizations`, { name: "counted" })).body.data;
    const P = `/api/v1/vendors/${a.vendorId}/organizations/${org.id}`;
    expect((await a.vendor.get(`${P}/assistants`)).body).toMatchObject({ totalElements: 0, totalPages: 0 });
    await a.vendor.post(`${P}/assistants`, { name: "only" });
    expect((await a.vendor.get(`${P}/assistants`)).body).toMatchObject({ totalElements: 1, totalPages: 1 });
    expect((await a.vendor.delete(P)).status).toBe(200);
  });

  test("bad paging or sorting is a 400 naming the parameter", async () => {
    for (const [query, field] of [
      ["page=-1", "page"],
      ["page=abc", "page"],
      ["size=0", "size"],
      ["size=101", "size"],
      ["size=1.5", "size"],
      ["sort=systemPrompt", "sort"],
      ["sort=name,sideways", "sort"],
      ["sort=name,asc,extra", "sort"],
      ["colour=red", "colour"],
    ]) {
      const res = await a.org.get(`${a.P}/agents?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
    expect((await a.org.get(`${a.P}/agents?sort=createdAt`)).status).toBe(200);
    expect((await a.org.get(`${a.P}/agents?sort=updatedAt,DESC`)).status).toBe(200);
  });
});

describe("OpenAPI and health", () => {
  test("/swagger/json lists every route with request and response schemas", async () => {
    const doc = (await client(api.url).get("/swagger/json")).body;
    const P = "/api/v1/vendors/{vendorId}/organizations/{organizationId}";
    const expected: Record<string, string[]> = {
      "/api/v1/vendors": ["get", "post"],
      "/api/v1/vendors/{vendorId}/organizations": ["get", "post"],
      "/api/v1/vendors/{vendorId}/organizations/{organizationId}": ["get", "put", "delete"],
      "/api/v1/vendors/{vendorId}/api-tokens": ["get", "post"],
      "/api/v1/vendors/{vendorId}/api-tokens/{tokenId}": ["delete"],
      [`${P}/assistants`]: ["get", "post"],
      [`${P}/assistants/{assistantId}`]: ["get", "put", "delete"],
      [`${P}/agents`]: ["get", "post"],
      [`${P}/agents/{agentId}`]: ["get", "put", "delete"],
      [`${P}/llm-generation-strategies`]: ["get", "post"],
      [`${P}/llm-generation-strategies/{strategyId}`]: ["get", "put", "delete"],
      [`${P}/sip/credentials`]: ["get", "post"],
      [`${P}/sip/credentials/{sipCredentialsId}`]: ["get", "put", "delete"],
      [`${P}/sip/credentials/{sipCredentialsId}/phone-numbers`]: ["get", "post"],
      [`${P}/sip/credentials/{sipCredentialsId}/phone-numbers/{phoneNumberId}`]: ["get", "put", "delete"],
      [`${P}/agent-tasks`]: ["get"],
      [`${P}/agent-tasks/{agentTaskId}`]: ["get"],
    };
    for (const [path, methods] of Object.entries(expected))
      for (const method of methods) {
        const op = doc.paths[path]?.[method];
        expect(op, `${method} ${path}`).toBeDefined();
        expect(Object.keys(op.responses)).toContain(method === "post" ? "201" : "200");
        if (method === "post" || method === "put") expect(op.requestBody, `${method} ${path} body`).toBeDefined();
      }
    const create = doc.paths[`${P}/assistants`].post.requestBody.content["application/json"].schema;
    expect(create.required).toEqual(["name"]);
    expect(Object.keys(create.properties)).toEqual(
      expect.arrayContaining([
        "name",
        "systemPrompt",
        "systemPromptGreeting",
        "llmAudioContentGenerationStrategyId",
        "telephoneNumberId",
        "extensions",
        "callEventHooks",
      ]),
    );
  });

  test("/healthz answers; /readyz reports the database up and an unreachable Temporal", async () => {
    expect((await client(api.url).get("/healthz")).body).toMatchObject({
      success: true,
      data: { status: "ok" },
      traceId: expect.any(String),
    });
    const ready = await client(api.url).get("/readyz");
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({
      success: false,
      message: "not ready: Temporal unreachable",
      data: { status: "not ready", database: true, temporal: false },
    });
  });
});
