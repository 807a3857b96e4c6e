// Issue 28, point 5: /metrics is not open to the world on the API port (METRICS_TOKEN bearer, or a
// METRICS_PORT of its own), and tenants' ids are no label values unless METRICS_TENANT_LABELS asks.
import { afterEach, expect, test } from "bun:test";
import { createTenant, startTestApi, type TestApi } from "../helpers/api";
import { scrape } from "./scrape";

let api: TestApi | null = null;
afterEach(async () => {
  await api?.stop();
  api = null;
});

const get = (url: string, token?: string) =>
  fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
    challenge: r.headers.get("www-authenticate"),
  }));

test("without METRICS_TOKEN or METRICS_PORT the API port serves no metrics", async () => {
  api = await startTestApi({ METRICS_TOKEN: "", METRICS_PORT: "" });
  const res = await get(`${api.url}/metrics`);
  expect(res.status).toBe(404);
  expect(res.text).toContain("METRICS_TOKEN");
  expect(res.text).not.toContain("vas_");
});

test("with METRICS_TOKEN the API port wants it as a bearer", async () => {
  api = await startTestApi({ METRICS_TOKEN: "m3trics-secret", METRICS_PORT: "" });
  for (const token of [undefined, "wrong", process.env.ADMIN_TOKEN!]) {
    const res = await get(`${api.url}/metrics`, token);
    expect(res.status).toBe(401);
    expect(res.challenge).toContain("Bearer");
    expect(res.text).not.toContain("vas_");
  }
  const ok = await get(`${api.url}/metrics`, "m3trics-secret");
  expect(ok.status).toBe(200);
  expect(ok.text).toContain("vas_http_requests_total");
});

test("METRICS_PORT serves them apart without a token; the API port still wants the token", async () => {
  api = await startTestApi({ METRICS_TOKEN: "", METRICS_PORT: "0" });
  const { metricsPort } = api;
  expect(metricsPort).toBeGreaterThan(0);
  const apart = await get(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(apart.status).toBe(200);
  expect(apart.text).toContain("vas_http_requests_total");
  expect((await get(`${api.url}/metrics`)).status).toBe(404);
});

test("by default no label holds a tenant's id; METRICS_TENANT_LABELS=true adds the per-credential series", async () => {
  api = await startTestApi({ METRICS_TENANT_LABELS: "false" });
  const tenant = await createTenant(api.url, "metrics-labels");
  const credential = await tenant.org.post(`${tenant.P}/sip/credentials`, {
    hostname: "127.0.0.1",
    port: 5999,
    username: "labels",
    password: "pw",
  });
  const ids = [tenant.vendorId, tenant.organizationId, credential.body.data.id as string];
  const text = (await scrape(`${api.url}/metrics`)).map((s) => JSON.stringify(s.labels)).join("\n");
  for (const id of ids) expect(text).not.toContain(id);
  await api.stop();

  api = await startTestApi({ METRICS_TENANT_LABELS: "true" });
  const labelled = await scrape(`${api.url}/metrics`);
  expect(labelled.some((s) => s.labels.credential === credential.body.data.id)).toBe(true);
});
