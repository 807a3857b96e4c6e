import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApiWithTwoTenants, toolSchema, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

const tool = (name = "lookup_order", extra: Record<string, unknown> = {}) => ({
  type: "tool_webhook",
  parameters: {
    name,
    serverUrl: "https://tools.example.com/orders",
    schema: toolSchema(name),
    headers: { Authorization: "Bearer t0k" },
    ...extra,
  },
});
const hook = (type: string, parameters: Record<string, unknown> = {}) => ({
  type,
  parameters: { url: "https://hooks.example.com/calls", ...parameters },
});

for (const kind of ["assistants", "agents"] as const) {
  describe(kind, () => {
    test("create with only a name, then read it back with every field", async () => {
      const res = await a.org.post(`${a.P}/${kind}`, { name: "Reception" });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.any(String),
        name: "Reception",
        systemPrompt: null,
        systemPromptGreeting: null,
        llmAudioContentGenerationStrategyId: null,
        telephoneNumberId: null,
        extensions: [],
        callEventHooks: [],
      });
      const read = await a.org.get(`${a.P}/${kind}/${res.body.data.id}`);
      expect(read.body.data).toEqual(res.body.data);
    });

    test("create with nested extensions and hooks returns their ids", async () => {
      const res = await a.org.post(`${a.P}/${kind}`, {
        name: "Full",
        systemPrompt: "You are helpful.",
        systemPromptGreeting: "Hello!",
        extensions: [
          tool(),
          { type: "knowledge_base", parameters: { url: "https://kb.example.com", maxResults: 3, authToken: null } },
        ],
        callEventHooks: [
          hook("call_started"),
          hook("call_concluded", { method: "PUT", headers: { "X-Env": "prod" } }),
          { type: "audit_log", parameters: { target: "x" } },
        ],
      });
      expect(res.status).toBe(201);
      const data = res.body.data;
      expect(data.extensions).toHaveLength(2);
      expect(data.extensions[0]).toMatchObject({ id: expect.any(String), type: "tool_webhook", name: "lookup_order" });
      // a knowledge_base's authToken is write-only (docs/knowledge.md): never answered, not even as null
      expect(data.extensions[1]).toMatchObject({ type: "knowledge_base" });
      expect(data.extensions[1].parameters).toEqual({ url: "https://kb.example.com", maxResults: 3 });
      expect(data.callEventHooks.map((h: { type: string }) => h.type)).toEqual([
        "call_started",
        "call_concluded",
        "audit_log",
      ]);
      expect(data.callEventHooks[1].parameters).toEqual({
        url: "https://hooks.example.com/calls",
        method: "PUT",
        headers: { "X-Env": "prod" },
      });
    });

    test("PUT updates by id, creates without id and removes what is left out, in one request", async () => {
      const created = (
        await a.org.post(`${a.P}/${kind}`, {
          name: "Nested",
          extensions: [tool("first"), tool("second")],
          callEventHooks: [hook("call_started"), hook("call_concluded")],
        })
      ).body.data;
      const [first, second] = created.extensions;
      const [started] = created.callEventHooks;
      const put = await a.org.put(`${a.P}/${kind}/${created.id}`, {
        name: "Nested v2",
        extensions: [
          {
            ...tool("second"),
            id: second.id,
            parameters: { ...tool("second").parameters, serverUrl: "https://new.example.com/x" },
          },
          tool("third"),
        ],
        callEventHooks: [
          { id: started.id, ...hook("call_started", { url: "https://hooks.example.com/v2" }) },
          { id: null, ...hook("call_concluded") },
        ],
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ success: true, data: null });
      const after = (await a.org.get(`${a.P}/${kind}/${created.id}`)).body.data;
      expect(after.name).toBe("Nested v2");
      expect(after.extensions.map((e: { name: string }) => e.name)).toEqual(["second", "third"]);
      expect(after.extensions[0].id).toBe(second.id);
      expect(after.extensions[0].parameters.serverUrl).toBe("https://new.example.com/x");
      expect(after.extensions[1].id).not.toBe(first.id);
      expect(after.extensions.map((e: { id: string }) => e.id)).not.toContain(first.id);
      expect(after.callEventHooks[0]).toMatchObject({
        id: started.id,
        parameters: { url: "https://hooks.example.com/v2" },
      });
      expect(after.callEventHooks[1].id).not.toBe(created.callEventHooks[1].id);
    });

    test("PUT clears scalar fields left out and empties lists sent empty", async () => {
      const created = (await a.org.post(`${a.P}/${kind}`, { name: "Clear", systemPrompt: "p", extensions: [tool()] }))
        .body.data;
      expect((await a.org.put(`${a.P}/${kind}/${created.id}`, { name: "Clear", extensions: [] })).status).toBe(200);
      const after = (await a.org.get(`${a.P}/${kind}/${created.id}`)).body.data;
      expect(after).toMatchObject({ systemPrompt: null, extensions: [], callEventHooks: [] });
    });

    test("PUT accepts the read-back object as is", async () => {
      const created = (
        await a.org.post(`${a.P}/${kind}`, {
          name: "Roundtrip",
          extensions: [tool()],
          callEventHooks: [hook("call_started")],
        })
      ).body.data;
      expect((await a.org.put(`${a.P}/${kind}/${created.id}`, created)).status).toBe(200);
      expect((await a.org.get(`${a.P}/${kind}/${created.id}`)).body.data).toEqual(created);
      const mismatched = await a.org.put(`${a.P}/${kind}/${created.id}`, { ...created, id: crypto.randomUUID() });
      expect(mismatched.status).toBe(400);
      expect(mismatched.body.errors[0].field).toBe("id");
    });

    test("an element id of another assistant is a 400, and nothing moves", async () => {
      const other = (
        await a.org.post(`${a.P}/${kind}`, {
          name: "Owner",
          extensions: [tool("owned")],
          callEventHooks: [hook("call_started")],
        })
      ).body.data;
      const thief = (await a.org.post(`${a.P}/${kind}`, { name: "Thief" })).body.data;
      const ext = await a.org.put(`${a.P}/${kind}/${thief.id}`, {
        name: "Thief",
        extensions: [{ ...tool("owned"), id: other.extensions[0].id }],
      });
      expect(ext.status).toBe(400);
      expect(ext.body.errors[0].field).toBe("extensions[0].id");
      const hk = await a.org.put(`${a.P}/${kind}/${thief.id}`, {
        name: "Thief",
        callEventHooks: [{ ...hook("call_started"), id: other.callEventHooks[0].id }],
      });
      expect(hk.status).toBe(400);
      expect(hk.body.errors[0].field).toBe("callEventHooks[0].id");
      const unknown = await a.org.put(`${a.P}/${kind}/${thief.id}`, {
        name: "Thief",
        extensions: [{ ...tool(), id: crypto.randomUUID() }],
      });
      expect(unknown.status).toBe(400);
      expect((await a.org.get(`${a.P}/${kind}/${other.id}`)).body.data).toEqual(other);
      expect((await a.org.get(`${a.P}/${kind}/${thief.id}`)).body.data.extensions).toEqual([]);
    });

    test("the same element id twice in one list is a 400", async () => {
      const created = (await a.org.post(`${a.P}/${kind}`, { name: "Twice", extensions: [tool()] })).body.data;
      const id = created.extensions[0].id;
      const res = await a.org.put(`${a.P}/${kind}/${created.id}`, {
        name: "Twice",
        extensions: [
          { ...tool(), id },
          { ...tool("other_tool"), id },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe("extensions[1].id");
    });

    test("tool names are unique per assistant and end_call is reserved (the call's own tool)", async () => {
      const twice = await a.org.post(`${a.P}/${kind}`, { name: "Names", extensions: [tool(), tool()] });
      expect(twice.status).toBe(400);
      expect(twice.body.errors).toEqual([
        { field: "extensions[1].parameters.name", message: "another tool is named lookup_order" },
      ]);
      const reserved = await a.org.post(`${a.P}/${kind}`, { name: "Names", extensions: [tool("end_call")] });
      expect(reserved.status).toBe(400);
      expect(reserved.body.errors).toEqual([
        { field: "extensions[0].parameters.name", message: "end_call is reserved" },
      ]);
    });

    test("a hook secret is write-only: stored, never returned, kept when omitted, removed with null", async () => {
      const created = (
        await a.org.post(`${a.P}/${kind}`, {
          name: "Signed",
          callEventHooks: [hook("call_concluded", { secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" })],
        })
      ).body.data;
      expect(JSON.stringify(created)).not.toContain("whsec_");
      expect(created.callEventHooks[0].parameters).toEqual({ url: "https://hooks.example.com/calls" });
      const read = await a.org.get(`${a.P}/${kind}/${created.id}`);
      expect(JSON.stringify(read.body)).not.toContain("secret");
      const list = await a.org.get(`${a.P}/${kind}?size=100`);
      expect(JSON.stringify(list.body)).not.toContain("whsec_");
    });

    test("delete, then 404", async () => {
      const created = (await a.org.post(`${a.P}/${kind}`, { name: "Gone" })).body.data;
      expect((await a.org.delete(`${a.P}/${kind}/${created.id}`)).status).toBe(200);
      expect((await a.org.get(`${a.P}/${kind}/${created.id}`)).status).toBe(404);
      expect((await a.org.delete(`${a.P}/${kind}/${created.id}`)).status).toBe(404);
    });
  });
}

describe("assistants and agents are apart", () => {
  test("an assistant is not reachable at the agent paths", async () => {
    const created = (await a.org.post(`${a.P}/assistants`, { name: "Only assistant" })).body.data;
    expect((await a.org.get(`${a.P}/agents/${created.id}`)).status).toBe(404);
    const agents = await a.org.get(`${a.P}/agents?size=100`);
    expect(agents.body.data.map((x: { id: string }) => x.id)).not.toContain(created.id);
  });
});

describe("tool_webhook validation", () => {
  const post = (extensions: unknown[]) => a.org.post(`${a.P}/assistants`, { name: "V", extensions });
  const fieldOf = async (extensions: unknown[]) => {
    const res = await post(extensions);
    expect(res.status).toBe(400);
    return res.body.errors.map((e: { field: string }) => e.field);
  };

  test("requires name, serverUrl and schema", async () => {
    expect(await fieldOf([{ type: "tool_webhook", parameters: {} }])).toEqual(
      expect.arrayContaining([
        "extensions[0].parameters.name",
        "extensions[0].parameters.serverUrl",
        "extensions[0].parameters.schema",
      ]),
    );
  });
  test("serverUrl must be http(s)", async () => {
    expect(await fieldOf([tool("x", { serverUrl: "ftp://example.com/x" })])).toEqual([
      "extensions[0].parameters.serverUrl",
    ]);
    expect(await fieldOf([tool("x", { serverUrl: "not a url" })])).toEqual(["extensions[0].parameters.serverUrl"]);
  });
  test("schema must be JSON in OpenAI function format", async () => {
    expect(await fieldOf([tool("x", { schema: "{not json" })])).toEqual(["extensions[0].parameters.schema"]);
    expect(await fieldOf([tool("x", { schema: JSON.stringify([1]) })])).toEqual(["extensions[0].parameters.schema"]);
    expect(
      await fieldOf([tool("x", { schema: JSON.stringify({ name: "x", parameters: { type: "array" } }) })]),
    ).toEqual(["extensions[0].parameters.schema"]);
    const missingRequired = JSON.stringify({
      name: "x",
      parameters: { type: "object", properties: {}, required: ["ghost"] },
    });
    expect(await fieldOf([tool("x", { schema: missingRequired })])).toEqual(["extensions[0].parameters.schema"]);
  });
  test("argument types must be among the six supported", async () => {
    const bad = JSON.stringify({
      name: "x",
      description: "d",
      parameters: { type: "object", properties: { when: { type: "date" } } },
    });
    const res = await post([tool("x", { schema: bad })]);
    expect(res.body.errors[0]).toMatchObject({ field: "extensions[0].parameters.schema" });
    expect(res.body.errors[0].message).toContain("string, integer, number, boolean, object, array");
    for (const type of ["string", "integer", "number", "boolean", "object", "array"]) {
      const ok = JSON.stringify({
        name: "x",
        description: "d",
        parameters: { type: "object", properties: { v: { type } } },
      });
      expect((await post([tool("x", { schema: ok })])).status).toBe(201);
    }
  });
  test("headers are string to string; unknown parameters are refused", async () => {
    expect(await fieldOf([tool("x", { headers: { "X-N": 5 } })])).toEqual(["extensions[0].parameters.headers.X-N"]);
    expect(await fieldOf([tool("x", { extra: true })])).toEqual(["extensions[0].parameters.extra"]);
  });
  test("other extension types are stored as given", async () => {
    const res = await post([{ type: "future_type", name: "f", parameters: { anything: [1, { deep: true }] } }]);
    expect(res.status).toBe(201);
    expect(res.body.data.extensions[0]).toMatchObject({
      type: "future_type",
      name: "f",
      parameters: { anything: [1, { deep: true }] },
    });
  });
});

describe("call event hook validation", () => {
  const fields = async (callEventHooks: unknown[]) => {
    const res = await a.org.post(`${a.P}/assistants`, { name: "H", callEventHooks });
    expect(res.status).toBe(400);
    return res.body.errors.map((e: { field: string }) => e.field);
  };
  test("url is required and must be http(s); method is one of five", async () => {
    expect(await fields([{ type: "call_started", parameters: {} }])).toEqual(["callEventHooks[0].parameters.url"]);
    expect(await fields([hook("call_started", { url: "mailto:x@y" })])).toEqual(["callEventHooks[0].parameters.url"]);
    expect(await fields([hook("call_concluded", { method: "TRACE" })])).toEqual([
      "callEventHooks[0].parameters.method",
    ]);
    expect(await fields([hook("call_concluded", { headers: ["x"] })])).toEqual([
      "callEventHooks[0].parameters.headers",
    ]);
  });
  test("every allowed method is accepted", async () => {
    for (const method of ["POST", "GET", "PUT", "PATCH", "DELETE"])
      expect(
        (await a.org.post(`${a.P}/assistants`, { name: "M", callEventHooks: [hook("call_started", { method })] }))
          .status,
      ).toBe(201);
  });
});

describe("references", () => {
  test("a strategy or phone number of another organization is a 400 naming the field", async () => {
    const strategy = (
      await b.org.post(`${b.P}/llm-generation-strategies`, { name: "s", type: "openai_realtime", parameters: {} })
    ).body.data;
    const res = await a.org.post(`${a.P}/assistants`, { name: "X", llmAudioContentGenerationStrategyId: strategy.id });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe("llmAudioContentGenerationStrategyId");
    const cred = (
      await b.org.post(`${b.P}/sip/credentials`, {
        hostname: "sip.b.example",
        port: 5060,
        username: "u",
        password: "p",
      })
    ).body.data;
    const number = (await b.org.post(`${b.P}/sip/credentials/${cred.id}/phone-numbers`, { phoneNumber: "+4930111222" }))
      .body.data;
    const res2 = await a.org.post(`${a.P}/assistants`, { name: "X", telephoneNumberId: number.id });
    expect(res2.status).toBe(400);
    expect(res2.body.errors[0].field).toBe("telephoneNumberId");
  });

  test("one phone number serves one assistant or agent; a used strategy or number cannot be deleted", async () => {
    const strategy = (
      await a.org.post(`${a.P}/llm-generation-strategies`, { name: "s", type: "openai_realtime", parameters: {} })
    ).body.data;
    const cred = (
      await a.org.post(`${a.P}/sip/credentials`, {
        hostname: "sip.a.example",
        port: 5060,
        username: "u",
        password: "p",
      })
    ).body.data;
    const number = (await a.org.post(`${a.P}/sip/credentials/${cred.id}/phone-numbers`, { phoneNumber: "+4930999000" }))
      .body.data;
    const owner = await a.org.post(`${a.P}/assistants`, {
      name: "Owner",
      telephoneNumberId: number.id,
      llmAudioContentGenerationStrategyId: strategy.id,
    });
    expect(owner.status).toBe(201);
    expect((await a.org.post(`${a.P}/agents`, { name: "Agent", telephoneNumberId: number.id })).status).toBe(409);
    const other = (await a.org.post(`${a.P}/assistants`, { name: "Other" })).body.data;
    expect(
      (await a.org.put(`${a.P}/assistants/${other.id}`, { name: "Other", telephoneNumberId: number.id })).status,
    ).toBe(409);
    // the owner may keep its own number on update
    expect(
      (await a.org.put(`${a.P}/assistants/${owner.body.data.id}`, { ...owner.body.data, name: "Owner v2" })).status,
    ).toBe(200);
    expect((await a.org.delete(`${a.P}/llm-generation-strategies/${strategy.id}`)).status).toBe(409);
    expect((await a.org.delete(`${a.P}/sip/credentials/${cred.id}/phone-numbers/${number.id}`)).status).toBe(409);
    expect((await a.org.delete(`${a.P}/sip/credentials/${cred.id}`)).status).toBe(409);
    // once the assistant lets go, both can be deleted
    expect((await a.org.delete(`${a.P}/assistants/${owner.body.data.id}`)).status).toBe(200);
    expect((await a.org.delete(`${a.P}/sip/credentials/${cred.id}/phone-numbers/${number.id}`)).status).toBe(200);
    expect((await a.org.delete(`${a.P}/llm-generation-strategies/${strategy.id}`)).status).toBe(200);
  });
});
