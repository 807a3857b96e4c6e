// Issue 28, point 5: per-token request throttling, per API process (API_TOKEN_RATE, API_TOKEN_BURST):
// past its burst a token gets 429 with Retry-After in the envelope; other tokens and the admin token
// are not slowed; the bucket refills.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";

let api: TestApi;
let tenant: Tenant;
beforeAll(async () => {
  api = await startTestApi({ API_TOKEN_RATE: "2", API_TOKEN_BURST: "10" });
  tenant = await createTenant(api.url, "token-rate");
});
afterAll(() => api.stop());

test("a token past its burst is 429 with Retry-After; another token and the admin are not", async () => {
  const path = `${tenant.P}/assistants?size=1`;
  // at once: the burst passes (one more if the bucket refilled meanwhile, on a slow machine), the rest waits
  const replies = await Promise.all(Array.from({ length: 20 }, () => tenant.org.get(path)));
  const statuses = replies.map((r) => r.status);
  const passed = statuses.filter((s) => s === 200).length;
  expect(passed).toBeGreaterThanOrEqual(10);
  expect(passed).toBeLessThanOrEqual(11);
  expect(statuses.filter((s) => s === 429).length).toBe(20 - passed);

  const refused = replies.find((r) => r.status === 429)!;
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(refused.body).toMatchObject({ success: false, message: expect.stringContaining("2 requests per second") });

  expect((await tenant.vendor.get(path)).status).toBe(200);
  for (let i = 0; i < 20; i++) expect((await tenant.admin.get(path)).status).toBe(200);

  // 2 per second: a request passes again after 500 ms
  await Bun.sleep(600);
  expect((await tenant.org.get(path)).status).toBe(200);
});
