// Issue 40, item 15: the OpenAPI document is as strict as validation on the newer routes. Bodies and
// queries are generated from /swagger/json itself (test/helpers/schema-arbitrary.ts), Ajv confirms each
// is valid per the document, and the API must accept every one: no 400, no 5xx but the documented 503
// (no bridge holds the caller id's SIP credential here, so a call is refused with it).
//
// What the document can only say in words, the generated values keep as a client would (each rule is in
// the document's descriptions): ids name this organization's resources, a sip: host passes the outbound
// guard, mocks and criteria name the target's tools, a said/notSaid pattern is one RE2 accepts, a
// required criterion applies in the run's modality, a scenario's criteria have names of their own,
// toolCalled's maxTimes is at least minTimes, a schedule window ends after it starts, and a time
// window's createdBefore (now by default) is later than its createdAfter.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { loadConfig } from "../../src/config";
import { SIP_URI } from "../../src/models/calls";
import { createOutboundGuard } from "../../src/net/outbound-guard";
import {
  client,
  createCallerId,
  createTenant,
  startTestApi,
  toolSchema,
  type Tenant,
  type TestApi,
} from "../helpers/api";
import { arbitraryFor, schemaJudge, type Hint } from "../helpers/schema-arbitrary";
import { ensureTemporal } from "../helpers/temporal";

const P = "/api/v1/vendors/{vendorId}/organizations/{organizationId}";
const RUNS_PER_ROUTE = 40;
const QUERIES_PER_ROUTE = 15;
const TOOL = "lookup_order";

let api: TestApi;
let a: Tenant;
let doc: any;
const world: Record<string, string> = {};
let scenarioIds: string[];

beforeAll(async () => {
  // campaigns signal their workflow: a real Temporal server answers at once (no worker runs them here)
  api = await startTestApi({ TEMPORAL_ADDRESS: (await ensureTemporal()).address });
  a = await createTenant(api.url, "schema-fuzz");
  doc = (await client(api.url).get("/swagger/json")).body;
  const { phoneNumberId, credentialId: sipCredentialsId } = await createCallerId(a);
  // each target calls from a number of its own: a call or campaign may leave phoneNumberId out
  const agentNumber = (await createCallerId(a, "+15550400001")).phoneNumberId;
  const tools = {
    extensions: [
      {
        type: "tool_webhook",
        parameters: { name: TOOL, serverUrl: "https://tools.example.com/x", schema: toolSchema() },
      },
    ],
  };
  const id = async (path: string, body: object) => {
    const res = await a.org.post(`${a.P}${path}`, body);
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).toBe(201);
    return res.body.data.id as string;
  };
  const scenario = {
    kind: "scripted",
    turns: [{ say: "hi" }],
    criteria: [{ name: "ends", type: "endedReason", in: ["hangup"] }],
  };
  Object.assign(world, {
    phoneNumberId,
    assistantId: await id("/assistants", { name: "fuzz target", telephoneNumberId: phoneNumberId, ...tools }),
    agentId: await id("/agents", { name: "fuzz agent", telephoneNumberId: agentNumber, ...tools }),
    knowledgeBaseId: await id("/knowledge-bases", { name: "fuzz kb" }),
    // rewritten by the fuzz: nothing else refers to it
    scenarioId: await id("/test-scenarios", { name: "rewritten", ...scenario }),
  });
  scenarioIds = [
    await id("/test-scenarios", { name: "s1", ...scenario }),
    await id("/test-scenarios", { name: "s2", ...scenario }),
  ];
  world.suiteId = await id("/test-suites", { name: "fuzz suite", scenarioIds });
  world.sipCredentialsId = sipCredentialsId;
  world.campaignId = await id("/campaigns", {
    name: "listed",
    assistantId: world.assistantId,
    contacts: [{ to: "+15550400002" }],
  });
  const run = await a.org.post(`${a.P}/test-runs`, { assistantId: world.assistantId, suiteId: world.suiteId });
  expect(run.status).toBe(202);
  world.testRunId = run.body.data.id;
}, 120_000);
afterAll(() => api.stop());

const guard = createOutboundGuard({ allowCidrs: loadConfig().outbound.allowCidrs });

const hint: Hint = (path, schema) => {
  const name = path.at(-1);
  if (schema.format === "uuid" && name === "scenarioIds") return fc.constantFrom(...scenarioIds);
  if (schema.format === "uuid" && name && world[name]) return fc.constant(world[name]);
  if (schema.type === "string" && name === "tool") return fc.constant(TOOL);
  if (schema.type === "string" && name === "pattern" && path.includes("criteria"))
    return fc.constantFrom("book(ed|ing)", "^thanks", "order [0-9]+", "sorry|apolog", "\\bhello\\b");
  return undefined;
};

/** The rules stated in words, kept by the generated value (see the header). */
function keepRules(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(keepRules);
  if (typeof value !== "object" || value === null) return value;
  const o = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, keepRules(v)])) as Record<string, any>;
  if (Array.isArray(o.criteria)) {
    o.criteria = o.criteria.map((c: any, i: number) => ({ ...c, name: `${i}:${c.name}`.slice(0, 200) }));
    for (const c of o.criteria)
      if (c.maxTimes !== undefined && c.maxTimes < (c.minTimes ?? 1)) c.maxTimes = c.minTimes ?? 1;
  }
  if (typeof o.start === "string" && typeof o.end === "string" && o.end <= o.start) o.end = "24:00";
  const { createdAfter: after, createdBefore: before = new Date().toISOString() } = o;
  if (typeof after === "string" && before <= after) Object.assign(o, { createdAfter: before, createdBefore: after });
  return o;
}

const requiresAudio = (body: any) =>
  (body.scenarios ?? []).some((s: any) => s.criteria.some((c: any) => c.type === "latency" && c.required !== false));
const destinationsAllowed = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.every(destinationsAllowed);
  if (typeof value !== "object" || value === null) return true;
  return Object.entries(value).every(([k, v]) => {
    if (k !== "to" || typeof v !== "string") return destinationsAllowed(v);
    const host = SIP_URI.exec(v)?.[1];
    return host === undefined || guard.configuredHostRefusal(host.replace(/^\[|\]$/g, "")) === null;
  });
};

function fillPath(path: string) {
  return path
    .replace("{vendorId}", a.vendorId)
    .replace("{organizationId}", a.organizationId)
    .replace(/\{(\w+)\}/g, (_, name: string) => {
      if (!world[name]) throw new Error(`no ${name} in the fuzz's world: add one`);
      return world[name];
    });
}

const routes: [string, string][] = [
  ["post", "/test-scenarios"],
  ["put", "/test-scenarios/{scenarioId}"],
  ["post", "/test-suites"],
  ["put", "/test-suites/{suiteId}"],
  ["post", "/test-runs"],
  ["post", "/calls"],
  ["post", "/campaigns"],
  ["post", "/knowledge-bases"],
  ["put", "/knowledge-bases/{knowledgeBaseId}"],
  ["post", "/knowledge-bases/{knowledgeBaseId}/documents"],
  ["post", "/llm-generation-strategies"],
];

test("every body the document calls valid is accepted", async () => {
  const judge = schemaJudge(doc);
  const arbitrary = arbitraryFor(doc, hint);
  const failures: string[] = [];
  let sent = 0;
  for (const [method, path] of routes) {
    const operation = doc.paths[P + path][method];
    const schema = operation.requestBody.content["application/json"].schema;
    const bodies = fc.sample(arbitrary(schema).map(keepRules).filter(destinationsAllowed), {
      seed: 40_15,
      numRuns: RUNS_PER_ROUTE,
    });
    for (const generated of bodies) {
      const body = requiresAudio(generated) ? { ...(generated as object), modality: "audio" } : generated;
      const invalid = judge(schema, body);
      // the generator's slip, not the API's: such a body is not counted
      if (invalid) continue;
      sent++;
      const res = await a.org.send(method.toUpperCase(), fillPath(`${P}${path}`), JSON.stringify(body), {
        "content-type": "application/json",
      });
      const documented = Object.keys(operation.responses).includes(String(res.status));
      if (res.status === 400 || (res.status >= 500 && !documented) || !documented)
        failures.push(
          `${method} ${path} ${res.status} ${JSON.stringify(res.body.errors ?? res.body.message)} ${JSON.stringify(body).slice(0, 600)}`,
        );
    }
  }
  expect(failures).toEqual([]);
  // most generated bodies are valid ones: the fuzz did test the API
  expect(sent).toBeGreaterThan(routes.length * RUNS_PER_ROUTE * 0.9);
}, 300_000);

test("every query the document calls valid is accepted (lists, filters, the knowledge search)", async () => {
  const judge = schemaJudge(doc);
  const arbitrary = arbitraryFor(doc, hint);
  const failures: string[] = [];
  let sent = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const parameters = (item.get?.parameters ?? []).filter((p: any) => p.in === "query");
    if (!path.startsWith("/api/") || parameters.length === 0) continue;
    const schema = {
      type: "object",
      properties: Object.fromEntries(parameters.map((p: any) => [p.name, p.schema])),
      required: parameters.filter((p: any) => p.required).map((p: any) => p.name),
    };
    for (const query of fc.sample(arbitrary(schema).map(keepRules), { seed: 40_15, numRuns: QUERIES_PER_ROUTE })) {
      expect(judge(schema, query)).toBeNull();
      sent++;
      // the admin reaches every list, the vendors' too
      const res = await a.admin.get(`${fillPath(path)}?${new URLSearchParams(query as Record<string, string>)}`);
      if (res.status !== 200)
        failures.push(`${path} ${res.status} ${JSON.stringify(res.body.errors)} ${JSON.stringify(query)}`);
    }
  }
  expect(failures).toEqual([]);
  expect(sent).toBeGreaterThan(15 * QUERIES_PER_ROUTE);
}, 300_000);

test("a time the document does not call valid is a 400 naming it, never a 500", async () => {
  for (const [path, field] of [
    [`${a.P}/agent-tasks?createdAfter=`, "createdAfter"],
    [`${a.P}/hook-deliveries/stats?createdAfter=`, "createdAfter"],
  ])
    for (const time of ["+275760-09-12T23:59:59.983Z", "0000-01-01T00:00:00Z"]) {
      const res = await a.org.get(path + encodeURIComponent(time));
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe(field);
    }
});
