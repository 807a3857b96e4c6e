// The call_analysis extension's request: valid, invalid then valid, invalid twice, provider down, all
// against a local chat completions server speaking the provider's wire format.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { loadConfig } from "../../src/config";
import {
  ANALYSIS_SCHEMAS_KEPT,
  compileAnalysisSchema,
  compiledAnalysisSchemas,
} from "../../src/models/analysis-schema";
import { analysisPlanOf, checkAnalysis } from "../../src/voice/call-analysis";
import { summarizeCall } from "../../src/voice/summarize";
import { type FakeChatServer, startFakeChatServer } from "../fakes/chat-completions-server";

let chat: FakeChatServer;
beforeAll(async () => (chat = await startFakeChatServer()));
afterAll(() => chat.close());
beforeEach(() => {
  chat.mode = "ok";
  chat.requests.length = 0;
  chat.answers.length = 0;
});

const transcript = [
  { role: "USER", text: "I want to cancel order 42." },
  { role: "ASSISTANT", text: "Order 42 is cancelled." },
];
const config = () => loadConfig({ OPENAI_BASE_URL: chat.baseUrl, OPENAI_API_KEY: "sk-analysis" });
const schema = JSON.stringify({
  type: "object",
  properties: { intent: { type: "string", enum: ["cancel", "order", "other"] }, orderId: { type: "string" } },
  required: ["intent", "orderId"],
  additionalProperties: false,
});
const plan = analysisPlanOf([
  {
    type: "call_analysis",
    parameters: { schema, prompt: "Name the order.", successCriteria: "The order was cancelled." },
  },
])!;
const summary = { shortSummary: "Order 42 cancelled.", summary: "The caller cancelled order 42." };
const good = {
  ...summary,
  analysis: { data: { intent: "cancel", orderId: "42" }, success: true, successReason: "Done." },
};
const bad = { ...summary, analysis: { data: { intent: "refund" }, success: true, successReason: "Done." } };

test("the summary and the analysis come from one request whose prompt carries the schema and criteria", async () => {
  chat.answers.push(good);
  const result = await summarizeCall({ transcript, config: config(), analysis: plan });
  expect(result).toEqual({ ...summary, analysis: good.analysis });
  expect(chat.requests).toHaveLength(1);
  const system = chat.requests[0]!.body.messages[0].content as string;
  expect(system).toContain(schema);
  expect(system).toContain("Name the order.");
  expect(system).toContain("The order was cancelled.");
});

test("an invalid answer is asked for once more, with why, and the valid second one kept", async () => {
  chat.answers.push(bad, good);
  const result = await summarizeCall({ transcript, config: config(), analysis: plan });
  expect(result.analysis).toEqual(good.analysis);
  expect(result.shortSummary).toBe(summary.shortSummary);
  expect(chat.requests).toHaveLength(2);
  const retry = chat.requests[1]!.body.messages.at(-1).content as string;
  expect(retry).toContain("orderId");
});

test("invalid twice: data null with the error, the summary kept", async () => {
  chat.answers.push(bad, bad);
  const result = await summarizeCall({ transcript, config: config(), analysis: plan });
  expect(chat.requests).toHaveLength(2);
  expect(result.summary).toBe(summary.summary);
  expect(result.analysis).toEqual({
    data: null,
    success: null,
    successReason: null,
    error: expect.stringContaining("invalid analysis"),
  });
});

test("a provider that is down or silent gives the analysis its error within the time-out", async () => {
  chat.mode = "error";
  const down = await summarizeCall({ transcript, config: config(), analysis: plan });
  expect(down.analysis).toEqual({ data: null, success: null, successReason: null, error: "status 500" });
  chat.mode = "hang";
  const started = performance.now();
  const silent = await summarizeCall({ transcript, config: config(), analysis: plan, timeoutMs: 300 });
  expect(performance.now() - started).toBeLessThan(2000);
  expect(silent.analysis?.error).toBe("timed out after 300 ms");
});

test("without a call_analysis extension the answer has no analysis; a stored schema that no longer compiles is none", async () => {
  chat.answers.push(good);
  expect(await summarizeCall({ transcript, config: config() })).toEqual(summary);
  expect(analysisPlanOf([{ type: "call_analysis", parameters: { schema: "{not json" } }])).toBeNull();
  expect(analysisPlanOf([{ type: "tool_webhook", parameters: {} }])).toBeNull();
});

// Schemas compiled once per distinct text, each in its own Ajv: no cache that grows per call, no
// `$id` registry that a second compile or another tenant's schema collides with.
const withId = (id: string, required: string) =>
  JSON.stringify({ $id: id, type: "object", properties: { [required]: { type: "string" } }, required: [required] });
const planOf = (schemaText: string) => analysisPlanOf([{ type: "call_analysis", parameters: { schema: schemaText } }]);

test("10,000 analyses of one schema compile it once: one cache entry, one validator", () => {
  const text = withId("https://tenant-a.example/once", "orderId");
  const before = compiledAnalysisSchemas();
  const first = planOf(text)!;
  for (let i = 0; i < 10_000; i++) {
    const again = planOf(i % 2 ? text : JSON.stringify(JSON.parse(text), null, 2))!;
    expect(again.validate).toBe(first.validate);
    expect(checkAnalysis(again, { data: { orderId: String(i) }, success: true }).ok).toBe(true);
  }
  expect(compiledAnalysisSchemas()).toBe(before + 1);
});

test("a schema with $id compiles on every call, and the same $id of two tenants holds each one's schema", () => {
  const acme = withId("https://shared.example/order", "orderId");
  const globex = withId("https://shared.example/order", "ticket");
  for (let call = 0; call < 3; call++) {
    const a = planOf(acme);
    const g = planOf(globex);
    expect(a && g).toBeTruthy();
    expect(checkAnalysis(a!, { data: { orderId: "42" } }).ok).toBe(true);
    expect(checkAnalysis(a!, { data: { ticket: "7" } }).ok).toBe(false);
    expect(checkAnalysis(g!, { data: { ticket: "7" } }).ok).toBe(true);
    expect(checkAnalysis(g!, { data: { orderId: "42" } }).ok).toBe(false);
  }
});

test("a schema cannot $ref another tenant's $id", () => {
  expect(planOf(withId("https://tenant-a.example/private", "secret"))).not.toBeNull();
  const result = compileAnalysisSchema(JSON.stringify({ $ref: "https://tenant-a.example/private" }));
  expect(result.ok).toBe(false);
});

test(`the compiled schemas are bounded: ${ANALYSIS_SCHEMAS_KEPT + 100} distinct schemas keep ${ANALYSIS_SCHEMAS_KEPT}`, () => {
  for (let i = 0; i < ANALYSIS_SCHEMAS_KEPT + 100; i++)
    expect(planOf(withId(`https://bound.example/${i}`, "n"))).not.toBeNull();
  expect(compiledAnalysisSchemas()).toBe(ANALYSIS_SCHEMAS_KEPT);
});
