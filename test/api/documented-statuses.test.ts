// Issue 40, item 15: every status a route answers is in its OpenAPI responses. Each operation of the
// document is called as clients get it wrong: without a token (401; from addresses of their own, so
// the failed-authentication throttle's 429 does not hide it), with another organization's token (403),
// with ids that name nothing (404), and with a body that is not JSON (400); whatever it answers must be
// documented for it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AUTH_FAILURE_LIMIT } from "../../src/services/auth";
import { client, startApiWithTwoTenants, type Tenant, type TestApi } from "../helpers/api";
import { requestsFrom, type Sent } from "../helpers/requests-from";

let api: TestApi;
let a: Tenant;
let b: Tenant;
let doc: any;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
  doc = (await client(api.url).get("/swagger/json")).body;
});
afterAll(() => api.stop());

type Call = { what: string; method: string; path: string; body?: string; documented: string[] };

/** Every operation under /api/, its path's ids filled: the tenant's own, and fresh UUIDs for the rest. */
function operations(): Call[] {
  return Object.entries<any>(doc.paths)
    .filter(([template]) => template.startsWith("/api/"))
    .flatMap(([template, item]) =>
      ["get", "post", "put", "delete"]
        .filter((method) => item[method])
        .map((method) => ({
          what: `${method} ${template}`,
          method: method.toUpperCase(),
          path: template
            .replace("{vendorId}", a.vendorId)
            .replace("{organizationId}", a.organizationId)
            .replace(/\{\w+\}/g, () => crypto.randomUUID()),
          body: method === "post" || method === "put" ? "{not json" : undefined,
          documented: Object.keys(item[method].responses),
        })),
    );
}

const json = { "content-type": "application/json" };

test("what each route answers to a missing token, a foreign token, unknown ids and a malformed body is documented", async () => {
  const undocumented: string[] = [];
  const check = (call: Call, who: string, status: number) => {
    if (!call.documented.includes(String(status)))
      undocumented.push(`${call.what} (${who}): ${status} not in ${call.documented.join(", ")}`);
  };
  const calls = operations();
  expect(calls.length).toBeGreaterThan(50);
  for (const call of calls)
    for (const [who, as] of [
      ["another organization", b.org],
      ["unknown ids", a.org],
      ["the admin", a.admin],
    ] as const)
      check(call, who, (await as.send(call.method, call.path, call.body, call.body ? json : {})).status);

  // fewer failures per address than the throttle allows
  const perAddress = AUTH_FAILURE_LIMIT - 1;
  for (let i = 0; i * perAddress < calls.length; i++) {
    const batch = calls.slice(i * perAddress, (i + 1) * perAddress);
    const sent: Sent[] = batch.map((c) => ({
      url: api.url + c.path,
      method: c.method,
      body: c.body,
      headers: c.body ? json : {},
    }));
    const answers = await requestsFrom(`127.0.1.${i + 1}`, sent);
    batch.forEach((call, j) => {
      expect(answers[j]!.status).not.toBe(429);
      check(call, "no token", answers[j]!.status);
    });
  }
  expect(undocumented).toEqual([]);
}, 120_000);
