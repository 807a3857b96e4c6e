// POST P/test-runs before any call is placed: what is refused (naming the field), what a queued run
// shows, cancel, results and JUnit of a run, and tenancy. The runs' calls are tested in runs.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApiWithTwoTenants, toolSchema, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;
let assistantId: string;
let agentId: string;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
  const tool = (name: string) => ({
    type: "tool_webhook",
    parameters: { name, serverUrl: "https://tools.example.com/t", schema: toolSchema(name) },
  });
  assistantId = (
    await a.org.post(`${a.P}/assistants`, {
      name: "Luigi's",
      extensions: [
        tool("book_table"),
        { type: "knowledge_base", parameters: { url: "https://kb.example.com", maxResults: 3, authToken: null } },
      ],
    })
  ).body.data.id;
  agentId = (await a.org.post(`${a.P}/agents`, { name: "Agent" })).body.data.id;
});
afterAll(() => api.stop());

const scenario = (extra: Record<string, unknown> = {}) => ({
  name: "books",
  kind: "scripted",
  turns: [{ say: "A table for two." }],
  criteria: [{ name: "booked", type: "toolCalled", tool: "book_table" }],
  ...extra,
});
const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);
const post = (body: Record<string, unknown>) => a.org.post(`${a.P}/test-runs`, body);

describe("creating a run", () => {
  test("202 with the queued run: a result per scenario and iteration, nothing decided", async () => {
    const res = await post({
      assistantId,
      scenarios: [scenario(), scenario({ name: "two" })],
      repeat: 3,
      labels: { commit: "abc123" },
    });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      assistantId,
      agentId: null,
      modality: "text",
      concurrency: 4,
      status: "queued",
      verdict: null,
      counts: { total: 6, passed: 0, failed: 0, error: 0, pending: 6 },
      labels: { commit: "abc123" },
      startedAt: null,
      endedAt: null,
    });
    const read = await a.org.get(`${a.P}/test-runs/${res.body.data.id}`);
    expect(read.body.data).toEqual(res.body.data);
  });

  test("a suite's scenarios and repeat; built-in tools (end_call, the knowledge search) may be named", async () => {
    const s = (
      await a.org.post(
        `${a.P}/test-scenarios`,
        scenario({
          criteria: [
            { name: "searched", type: "toolCalled", tool: "search_knowledge_base" },
            { name: "stays", type: "toolNotCalled", tool: "end_call" },
          ],
        }),
      )
    ).body.data;
    const suite = (await a.org.post(`${a.P}/test-suites`, { name: "smoke", scenarioIds: [s.id], repeat: 2 })).body.data;
    const res = await post({ agentId, suiteId: suite.id });
    expect(res.status).toBe(400); // the agent has no knowledge search
    expect(fieldsOf(res.body)).toEqual(["suiteId.scenarios[0].criteria[0].tool"]);
    const ok = await post({ assistantId, suiteId: suite.id });
    expect(ok.status).toBe(202);
    expect(ok.body.data).toMatchObject({ suiteId: suite.id, counts: { total: 2 } });
  });

  // bodies are built when the test runs: the ids exist only after beforeAll
  const refusals: [string, () => Record<string, unknown>, string[]][] = [
    ["both targets", () => ({ assistantId, agentId: assistantId, scenarios: [scenario()] }), ["agentId"]],
    ["no target", () => ({ scenarios: [scenario()] }), ["assistantId"]],
    [
      "two scenario sources",
      () => ({ assistantId, scenarios: [scenario()], scenarioIds: [assistantId] }),
      ["scenarios"],
    ],
    ["an assistant of another kind", () => ({ assistantId: agentId, scenarios: [scenario()] }), ["assistantId"]],
    [
      "a mock of a tool the target does not have",
      () => ({ assistantId, scenarios: [scenario({ toolMocks: [{ tool: "cancel_order", output: "ok" }] })] }),
      ["scenarios[0].toolMocks[0].tool"],
    ],
    [
      "a criterion naming a tool the target does not have",
      () => ({
        assistantId,
        scenarios: [scenario({ criteria: [{ name: "x", type: "toolNotCalled", tool: "refund" }] })],
      }),
      ["scenarios[0].criteria[0].tool"],
    ],
    [
      "a required latency criterion in a text run",
      () => ({ assistantId, scenarios: [scenario({ criteria: [{ name: "fast", type: "latency", p95MaxMs: 800 }] })] }),
      ["scenarios[0].criteria[0]"],
    ],
    [
      "an inline scenario that breaks a scenario rule",
      () => ({ assistantId, scenarios: [scenario(), scenario({ persona: "x" })] }),
      ["scenarios[1].persona"],
    ],
    [
      "a stored scenario of another organization",
      () => ({ assistantId, scenarioIds: ["00000000-0000-4000-8000-000000000000"] }),
      ["scenarioIds[0]"],
    ],
    ["concurrency 21", () => ({ assistantId, scenarios: [scenario()], concurrency: 21 }), ["concurrency"]],
    ["repeat 0", () => ({ assistantId, scenarios: [scenario()], repeat: 0 }), ["repeat"]],
    ["an unknown modality", () => ({ assistantId, scenarios: [scenario()], modality: "video" }), ["modality"]],
  ];
  for (const [what, body, fields] of refusals)
    test(`400: ${what}`, async () => {
      const res = await post(body());
      expect(res.status).toBe(400);
      for (const field of fields) expect(fieldsOf(res.body)).toContain(field);
    });

  test("a latency criterion that is not required is accepted in text (and reported notApplicable later)", async () => {
    const res = await post({
      assistantId,
      scenarios: [
        scenario({
          criteria: [
            { name: "fast", type: "latency", p95MaxMs: 800, required: false },
            { name: "ok", type: "noUnmockedTools" },
          ],
        }),
      ],
    });
    expect(res.status).toBe(202);
  });
});

describe("a queued run", () => {
  test("cancel: 200 with status canceled and no verdict; again is the same; results empty; JUnit has no testcase", async () => {
    const run = (await post({ assistantId, scenarios: [scenario()] })).body.data;
    const canceled = await a.org.post(`${a.P}/test-runs/${run.id}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body.data).toMatchObject({ status: "canceled", verdict: null, endedAt: expect.any(String) });
    expect((await a.org.post(`${a.P}/test-runs/${run.id}/cancel`)).body.data.status).toBe("canceled");
    const results = await a.org.get(`${a.P}/test-runs/${run.id}/results`);
    expect(results.body).toMatchObject({ data: [], totalElements: 0 });
    const junit = await fetch(`${api.url}${a.P}/test-runs/${run.id}/junit`, {
      headers: { authorization: `Bearer ${a.orgToken}` },
    });
    expect(junit.headers.get("content-type")).toContain("application/xml");
    expect(await junit.text()).toContain('tests="0"');
  });

  test("another organization sees none of it", async () => {
    const run = (await post({ assistantId, scenarios: [scenario()] })).body.data;
    expect((await b.org.get(`${b.P}/test-runs/${run.id}`)).status).toBe(404);
    expect((await b.org.post(`${b.P}/test-runs/${run.id}/cancel`)).status).toBe(404);
    expect((await b.org.get(`${b.P}/test-runs/${run.id}/results`)).status).toBe(404);
    expect((await b.org.get(`${b.P}/test-runs`)).body.data).toEqual([]);
    const other = await b.org.post(`${b.P}/test-runs`, { assistantId, scenarios: [scenario()] });
    expect(fieldsOf(other.body)).toEqual(["assistantId"]);
  });

  test("the list is newest first", async () => {
    const list = await a.org.get(`${a.P}/test-runs?size=2`);
    expect(list.status).toBe(200);
    const [first, second] = list.body.data;
    expect(first.createdAt >= second.createdAt).toBe(true);
  });
});
