// Test scenarios and suites through the API: defaults shown, every rule of the contract's table
// refused with its field named, tenancy, and the suite ↔ scenario references.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";
import { scenarioFromMessages } from "../../src/services/testing/scenario-from-call";
import type { CallMessage } from "../../src/events/payloads";

let api: TestApi;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

const scripted = (extra: Record<string, unknown> = {}) => ({
  name: "books a table",
  kind: "scripted",
  turns: [{ say: "I'd like a table for two tonight." }, { silenceMs: 1500 }, { say: "Seven o'clock." }],
  criteria: [{ name: "booked", type: "toolCalled", tool: "book_table", arguments: { people: 2 } }],
  ...extra,
});
const simulated = (extra: Record<string, unknown> = {}) => ({
  name: "angry customer",
  kind: "simulated",
  persona: "Impatient, talks fast.",
  goal: "Get a refund for order 123.",
  facts: { orderId: "123" },
  criteria: [{ name: "polite", type: "judge", question: "Did the agent stay polite?" }],
  ...extra,
});
const fieldsOf = (body: { errors?: { field: string }[] }) => (body.errors ?? []).map((e) => e.field);

describe("test scenarios", () => {
  test("a scripted scenario is stored and read back with its defaults", async () => {
    const res = await a.org.post(`${a.P}/test-scenarios`, scripted({ tags: ["booking"] }));
    expect(res.status).toBe(201);
    const scenario = res.body.data;
    expect(scenario).toEqual({
      id: expect.any(String),
      name: "books a table",
      description: null,
      tags: ["booking"],
      kind: "scripted",
      turns: scripted().turns,
      maxDurationSeconds: 300,
      toolMocks: [],
      toolPolicy: "mock",
      criteria: [{ name: "booked", type: "toolCalled", tool: "book_table", arguments: { people: 2 }, required: true }],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await a.org.get(`${a.P}/test-scenarios/${scenario.id}`)).body.data).toEqual(scenario);
  });

  test("a simulated scenario gets maxTurns 12 unless it says otherwise; PUT replaces it", async () => {
    const res = await a.org.post(`${a.P}/test-scenarios`, simulated());
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ kind: "simulated", maxTurns: 12, facts: { orderId: "123" } });
    const put = await a.org.put(
      `${a.P}/test-scenarios/${res.body.data.id}`,
      simulated({
        maxTurns: 4,
        toolPolicy: "live",
        criteria: [{ name: "ends", type: "noUnmockedTools", required: false }],
      }),
    );
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({
      maxTurns: 4,
      toolPolicy: "live",
      criteria: [{ name: "ends", type: "noUnmockedTools", required: false }],
    });
    expect(put.body.data.facts).toEqual({ orderId: "123" });
  });

  test("every criterion type of the contract is accepted with its fields", async () => {
    const criteria = [
      { name: "j", type: "judge", question: "Was the booking confirmed?" },
      { name: "tc", type: "toolCalled", tool: "book_table", minTimes: 1, maxTimes: 2 },
      { name: "tn", type: "toolNotCalled", tool: "transfer_call" },
      { name: "s", type: "said", pattern: "table for (two|2)", by: "agent" },
      { name: "ns", type: "notSaid", pattern: "refund", by: "caller" },
      { name: "er", type: "endedReason", in: ["hangup", "assistant-ended"] },
      { name: "an", type: "analysis", path: "/booked", equals: true },
      { name: "lat", type: "latency", p95MaxMs: 1500, required: false },
      { name: "nu", type: "noUnmockedTools" },
    ];
    const toolMocks = [{ tool: "book_table", arguments: { people: 2 }, output: { ok: true }, delayMs: 200 }];
    const res = await a.org.post(`${a.P}/test-scenarios`, scripted({ criteria, toolMocks }));
    expect(res.status).toBe(201);
    expect(res.body.data.criteria.map((c: { type: string }) => c.type)).toEqual(criteria.map((c) => c.type));
    expect(res.body.data.toolMocks).toEqual(toolMocks);
  });

  const refusals: [string, Record<string, unknown>, string][] = [
    ["a scripted scenario without turns", scripted({ turns: undefined }), "turns"],
    ["persona on a scripted scenario", scripted({ persona: "x" }), "persona"],
    ["turns on a simulated scenario", simulated({ turns: [{ say: "hi" }] }), "turns"],
    ["a simulated scenario without a goal", simulated({ goal: undefined }), "goal"],
    ["a turn that is neither say nor silenceMs", scripted({ turns: [{ shout: "hi" }] }), "turns[0]"],
    ["silence shorter than 100 ms", scripted({ turns: [{ silenceMs: 50 }] }), "turns[0]"],
    ["51 turns", scripted({ turns: Array.from({ length: 51 }, () => ({ say: "x" })) }), "turns"],
    ["a persona over 4,000 characters", simulated({ persona: "x".repeat(4001) }), "persona"],
    ["maxTurns 0", simulated({ maxTurns: 0 }), "maxTurns"],
    ["maxDurationSeconds 5", scripted({ maxDurationSeconds: 5 }), "maxDurationSeconds"],
    ["no criteria", scripted({ criteria: [] }), "criteria"],
    ["an unknown criterion type", scripted({ criteria: [{ name: "x", type: "vibes" }] }), "criteria[0].type"],
    ["a judge without a question", scripted({ criteria: [{ name: "x", type: "judge" }] }), "criteria[0].question"],
    [
      "a field of another criterion type",
      scripted({ criteria: [{ name: "x", type: "toolNotCalled", tool: "t", question: "?" }] }),
      "criteria[0].question",
    ],
    [
      "a pattern that does not compile",
      scripted({ criteria: [{ name: "x", type: "said", pattern: "(unclosed", by: "agent" }] }),
      "criteria[0].pattern",
    ],
    // RE2 has no backreferences and no lookaround
    ...["(\\w)\\1", "refund(?= now)", "(?<!no )refund"].map((pattern): [string, Record<string, unknown>, string] => [
      `the pattern ${pattern}, which RE2 does not take`,
      scripted({ criteria: [{ name: "x", type: "notSaid", pattern, by: "agent" }] }),
      "criteria[0].pattern",
    ]),
    [
      "said by someone else",
      scripted({ criteria: [{ name: "x", type: "said", pattern: "hi", by: "robot" }] }),
      "criteria[0].by",
    ],
    [
      "an endedReason that does not exist",
      scripted({ criteria: [{ name: "x", type: "endedReason", in: ["exploded"] }] }),
      "criteria[0].in[0]",
    ],
    [
      "maxTimes below minTimes",
      scripted({ criteria: [{ name: "x", type: "toolCalled", tool: "t", minTimes: 3, maxTimes: 1 }] }),
      "criteria[0].maxTimes",
    ],
    [
      "an analysis path that is not a JSON Pointer",
      scripted({ criteria: [{ name: "x", type: "analysis", path: "booked", equals: 1 }] }),
      "criteria[0].path",
    ],
    [
      "two criteria with one name",
      scripted({
        criteria: [
          { name: "x", type: "noUnmockedTools" },
          { name: "x", type: "toolNotCalled", tool: "t" },
        ],
      }),
      "criteria[1].name",
    ],
    ["a mock without output", scripted({ toolMocks: [{ tool: "t" }] }), "toolMocks[0].output"],
    ["an unknown toolPolicy", scripted({ toolPolicy: "sometimes" }), "toolPolicy"],
  ];
  for (const [what, body, field] of refusals)
    test(`400 naming ${field}: ${what}`, async () => {
      const res = await a.org.post(`${a.P}/test-scenarios`, body);
      expect(res.status).toBe(400);
      expect(fieldsOf(res.body)).toContain(field);
    });

  test("another organization's token sees none of them", async () => {
    const mine = (await a.org.post(`${a.P}/test-scenarios`, scripted({ name: "private" }))).body.data;
    expect((await b.org.get(`${a.P}/test-scenarios/${mine.id}`)).status).toBe(403);
    expect((await b.org.get(`${b.P}/test-scenarios/${mine.id}`)).status).toBe(404);
    const list = await b.org.get(`${b.P}/test-scenarios`);
    expect(list.body.data.map((s: { id: string }) => s.id)).not.toContain(mine.id);
  });
});

describe("test suites", () => {
  test("a suite keeps its scenarios in order; a scenario it names cannot be deleted until it is taken out", async () => {
    const one = (await a.org.post(`${a.P}/test-scenarios`, scripted({ name: "one" }))).body.data;
    const two = (await a.org.post(`${a.P}/test-scenarios`, simulated({ name: "two" }))).body.data;
    const res = await a.org.post(`${a.P}/test-suites`, { name: "smoke", scenarioIds: [two.id, one.id] });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: "smoke", scenarioIds: [two.id, one.id], repeat: 1 });

    const blocked = await a.org.delete(`${a.P}/test-scenarios/${one.id}`);
    expect(blocked.status).toBe(409);
    const put = await a.org.put(`${a.P}/test-suites/${res.body.data.id}`, {
      name: "smoke",
      scenarioIds: [two.id],
      repeat: 3,
    });
    expect(put.body.data).toMatchObject({ scenarioIds: [two.id], repeat: 3 });
    expect((await a.org.delete(`${a.P}/test-scenarios/${one.id}`)).status).toBe(200);
    expect((await a.org.delete(`${a.P}/test-suites/${res.body.data.id}`)).status).toBe(200);
    expect((await a.org.delete(`${a.P}/test-scenarios/${two.id}`)).status).toBe(200);
  });

  test("400 naming the id: another organization's scenario, one named twice, repeat out of range", async () => {
    const mine = (await a.org.post(`${a.P}/test-scenarios`, scripted())).body.data;
    const theirs = (await b.org.post(`${b.P}/test-scenarios`, scripted())).body.data;
    const foreign = await a.org.post(`${a.P}/test-suites`, { name: "s", scenarioIds: [mine.id, theirs.id] });
    expect(foreign.status).toBe(400);
    expect(fieldsOf(foreign.body)).toEqual(["scenarioIds[1]"]);
    const twice = await a.org.post(`${a.P}/test-suites`, { name: "s", scenarioIds: [mine.id, mine.id] });
    expect(fieldsOf(twice.body)).toEqual(["scenarioIds[1]"]);
    const repeat = await a.org.post(`${a.P}/test-suites`, { name: "s", scenarioIds: [mine.id], repeat: 11 });
    expect(repeat.status).toBe(400);
    expect(fieldsOf(repeat.body)).toContain("repeat");
    const none = await a.org.post(`${a.P}/test-suites`, { name: "s", scenarioIds: [] });
    expect(fieldsOf(none.body)).toContain("scenarioIds");
  });
});

describe("a call as a scenario", () => {
  test("the caller's utterances become turns, tool calls with their results become mocks", () => {
    const at = 1_700_000_000_000;
    const messages: CallMessage[] = [
      { type: "text", role: "ASSISTANT", timestamp: at, text: "Hello, Acme here." },
      { type: "text", role: "USER", timestamp: at + 1, text: "Where is order 42?" },
      {
        type: "tool_call",
        role: "TOOL_CALL",
        timestamp: at + 2,
        callId: "c1",
        toolName: "lookup",
        parameters: { id: "42" },
      },
      {
        type: "tool_result",
        role: "TOOL_CALL_RESULT",
        timestamp: at + 3,
        callId: "c1",
        toolName: "lookup",
        text: '{"status":"shipped"}',
      },
      { type: "text", role: "ASSISTANT", timestamp: at + 4, text: "It shipped." },
      { type: "text", role: "USER", timestamp: at + 5, text: "Thanks, bye." },
    ];
    expect(scenarioFromMessages("from call", messages, "hangup") as unknown).toEqual({
      name: "from call",
      kind: "scripted",
      turns: [{ say: "Where is order 42?" }, { say: "Thanks, bye." }],
      toolMocks: [{ tool: "lookup", arguments: { id: "42" }, output: '{"status":"shipped"}' }],
      criteria: [{ name: "ends the same way", type: "endedReason", in: ["hangup"] }],
    });
  });
});
