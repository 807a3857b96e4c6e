// call_context and call_analysis extensions through the API: bad parameters are a 400 naming the
// field, and tasks are filtered by their analysis' success.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { createDb } from "../../src/db/client";
import { agentTasks } from "../../src/db/schema";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;
const database = createDb(process.env.DATABASE_URL!, { max: 1 });

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(async () => {
  await api.stop();
  await database.close();
});

const withExtension = (type: string, parameters: Record<string, unknown>) => ({
  name: "context assistant",
  extensions: [{ type, parameters }],
});
const fields = (res: { body: any }) => res.body.errors.map((e: { field: string }) => e.field);
const schema = JSON.stringify({ type: "object", properties: { intent: { type: "string" } } });

test("good call_context and call_analysis parameters are stored as given", async () => {
  const created = await a.org.post(`${a.P}/assistants`, {
    name: "both",
    extensions: [
      {
        type: "call_context",
        parameters: { url: "http://127.0.0.1:9/context", timeoutMs: 800, headers: { "X-Key": "k" } },
      },
      { type: "call_analysis", parameters: { schema, prompt: "Say why they called.", successCriteria: "Solved." } },
    ],
  });
  expect(created.status).toBe(201);
  expect(created.body.data.extensions[1].parameters.schema).toBe(schema);
});

test.each([
  ["call_context", {}, "extensions[0].parameters.url"],
  ["call_context", { url: "http://127.0.0.1:9/c", timeoutMs: 199 }, "extensions[0].parameters.timeoutMs"],
  ["call_context", { url: "http://127.0.0.1:9/c", timeoutMs: 5001 }, "extensions[0].parameters.timeoutMs"],
  ["call_context", { url: "http://169.254.169.254/latest" }, "extensions[0].parameters.url"],
  ["call_context", { url: "http://127.0.0.1:9/c", extra: 1 }, "extensions[0].parameters.extra"],
  ["call_analysis", {}, "extensions[0].parameters.schema"],
  ["call_analysis", { schema: "{not json" }, "extensions[0].parameters.schema"],
  ["call_analysis", { schema: '"a string"' }, "extensions[0].parameters.schema"],
  ["call_analysis", { schema: '{"type":"no-such-type"}' }, "extensions[0].parameters.schema"],
  ["call_analysis", { schema: '{"minLength":-1}' }, "extensions[0].parameters.schema"],
] as const)("%s %j is a 400 naming %s", async (type, parameters, field) => {
  const res = await a.org.post(`${a.P}/assistants`, withExtension(type, parameters));
  expect(res.status).toBe(400);
  expect(fields(res)).toContain(field);
});

test("a schema with $id is accepted on every write, and two tenants may use the same $id with different schemas", async () => {
  const withId = (required: string) =>
    JSON.stringify({ $id: "https://shared.example/analysis", type: "object", required: [required] });
  const body = (required: string) => withExtension("call_analysis", { schema: withId(required) });
  const created = await a.org.post(`${a.P}/assistants`, body("intent"));
  expect(created.status).toBe(201);
  for (let write = 0; write < 2; write++)
    expect((await a.org.put(`${a.P}/assistants/${created.body.data.id}`, body("intent"))).status).toBe(200);
  const other = await b.org.post(`${b.P}/assistants`, body("ticket"));
  expect(other.status).toBe(201);
  expect(other.body.data.extensions[0].parameters.schema).toBe(withId("ticket"));
});

test("GET agent-tasks?success= lists the calls whose analysis judged them so, in the caller's organization only", async () => {
  const row = (organizationId: string, analysis: Record<string, unknown> | null) => ({
    organizationId,
    callId: randomUUID(),
    transport: { type: "websocket" as const },
    status: "completed" as const,
    analysis,
  });
  const [won, lost, none] = await database.db
    .insert(agentTasks)
    .values([
      row(a.organizationId, { data: { intent: "cancel" }, success: true, successReason: "Cancelled." }),
      row(a.organizationId, { data: null, success: false, successReason: "Not solved." }),
      row(a.organizationId, null),
      row(b.organizationId, { data: {}, success: true, successReason: "Other tenant." }),
    ])
    .returning({ id: agentTasks.id });
  const ids = async (query: string) =>
    (await a.org.get(`${a.P}/agent-tasks${query}`)).body.data.map((t: { id: string }) => t.id);
  expect(await ids("?success=true")).toEqual([won!.id]);
  expect(await ids("?success=false")).toEqual([lost!.id]);
  expect((await ids("")).sort()).toEqual([won!.id, lost!.id, none!.id].sort());
  const one = await a.org.get(`${a.P}/agent-tasks/${won!.id}`);
  expect(one.body.data.analysis).toEqual({ data: { intent: "cancel" }, success: true, successReason: "Cancelled." });
  expect((await a.org.get(`${a.P}/agent-tasks?success=yes`)).status).toBe(400);
});
