// Throws many malformed bodies and queries at every writable route: nothing may answer 5xx,
// and every refusal must be the envelope.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTenant, startTestApi, type Tenant } from "../helpers/api";

let api: Awaited<ReturnType<typeof startTestApi>>;
let t: Tenant;

beforeAll(async () => {
  api = await startTestApi();
  t = await createTenant(api.url, "fuzz");
});
afterAll(() => api.stop());

// a small deterministic PRNG so a failure can be replayed
function rng(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const atoms: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  2 ** 53,
  -(2 ** 31) - 1,
  65536,
  "",
  "x",
  "💥",
  "a".repeat(5000),
  "\u0000",
  "http://",
  "https://ok.example/x",
  "{",
  "00000000-0000-0000-0000-000000000000",
  [],
  {},
  [1, "2"],
  { id: "nope" },
];

function randomValue(next: () => number, depth = 0): unknown {
  const r = next();
  if (depth > 2 || r < 0.6) return atoms[Math.floor(next() * atoms.length)];
  if (r < 0.8) return Array.from({ length: Math.floor(next() * 3) }, () => randomValue(next, depth + 1));
  return randomObject(next, depth + 1);
}

const keys = [
  "name",
  "type",
  "parameters",
  "extensions",
  "callEventHooks",
  "id",
  "url",
  "schema",
  "serverUrl",
  "headers",
  "method",
  "secret",
  "hostname",
  "port",
  "username",
  "password",
  "maxAgentTasks",
  "phoneNumber",
  "fallback",
  "systemPrompt",
  "telephoneNumberId",
  "llmAudioContentGenerationStrategyId",
  "voice",
  "vad",
  "temperature",
  "outputSampleRate",
  "organizationId",
];

function randomObject(next: () => number, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--)
    out[keys[Math.floor(next() * keys.length)]!] = randomValue(next, depth);
  return out;
}

test("no malformed request produces a 5xx", async () => {
  const cred = (
    await t.org.post(`${t.P}/sip/credentials`, { hostname: "h.example", port: 5060, username: "u", password: "p" })
  ).body.data.id;
  const assistant = (await t.org.post(`${t.P}/assistants`, { name: "fuzz" })).body.data.id;
  const strategy = (
    await t.org.post(`${t.P}/llm-generation-strategies`, { name: "s", type: "pipeline", parameters: {} })
  ).body.data.id;
  const number = (await t.org.post(`${t.P}/sip/credentials/${cred}/phone-numbers`, { phoneNumber: "+100200300" })).body
    .data.id;
  const targets: [string, string][] = [
    ["POST", `/api/v1/vendors/${t.vendorId}/organizations`],
    ["POST", `/api/v1/vendors/${t.vendorId}/api-tokens`],
    ["POST", `${t.P}/assistants`],
    ["PUT", `${t.P}/assistants/${assistant}`],
    ["POST", `${t.P}/agents`],
    ["POST", `${t.P}/llm-generation-strategies`],
    ["PUT", `${t.P}/llm-generation-strategies/${strategy}`],
    ["POST", `${t.P}/sip/credentials`],
    ["PUT", `${t.P}/sip/credentials/${cred}`],
    ["POST", `${t.P}/sip/credentials/${cred}/phone-numbers`],
    ["PUT", `${t.P}/sip/credentials/${cred}/phone-numbers/${number}`],
  ];
  const rawBodies = ["", "{", "[]", "null", "42", '"str"', '{"name":"x"', "\u0000", '{"name": NaN}', "<xml/>"];
  const next = rng(20261121);
  const failures: string[] = [];
  let sent = 0;
  for (const [method, path] of targets) {
    const bodies = [
      ...rawBodies,
      ...Array.from({ length: 40 }, () => JSON.stringify(next() < 0.2 ? randomValue(next) : randomObject(next))),
    ];
    for (const body of bodies) {
      const res = await t.admin.send(method, path, body, { "content-type": "application/json" });
      sent++;
      if (res.status >= 500 || (res.body?.success !== false && res.status >= 400))
        failures.push(`${method} ${path} ${res.status} ${body.slice(0, 80)}`);
    }
    for (const query of [
      "?page=%00",
      "?size=9999999999999999999",
      "?sort=%27;drop",
      "?page=1e3",
      "?sort=,",
      "?size=",
    ]) {
      const res = await t.admin.get(path.replace(/\/[0-9a-f-]{36}$/, "") + query);
      sent++;
      if (res.status >= 500) failures.push(`GET ${path}${query} ${res.status}`);
    }
  }
  expect(sent).toBeGreaterThan(500);
  expect(failures).toEqual([]);
});

test("bodies that are valid JSON but wrong content types do not break the API", async () => {
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
    const res = await t.org.send("POST", `${t.P}/assistants`, "name=x", { "content-type": type });
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBeGreaterThanOrEqual(400);
  }
});
