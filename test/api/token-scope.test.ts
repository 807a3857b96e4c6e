// Issue 28, point 7: GET /api/v1/token says what the presented token may reach, and nothing secret.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { client, createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";

let api: TestApi;
let tenant: Tenant;
beforeAll(async () => {
  api = await startTestApi();
  tenant = await createTenant(api.url, "token-scope");
});
afterAll(() => api.stop());

test("an organization token reaches its vendor and organization", async () => {
  const res = await tenant.org.get("/api/v1/token");
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({
    scope: "organization",
    tokenId: expect.any(String),
    vendorId: tenant.vendorId,
    organizationId: tenant.organizationId,
  });
  expect(JSON.stringify(res.body)).not.toContain(tenant.orgToken);
});

test("a vendor token reaches its vendor and no single organization; the admin token everything", async () => {
  const vendor = await tenant.vendor.get("/api/v1/token");
  expect(vendor.body.data).toMatchObject({ scope: "vendor", vendorId: tenant.vendorId, organizationId: null });
  const admin = await tenant.admin.get("/api/v1/token");
  expect(admin.body.data).toEqual({ scope: "admin", tokenId: null, vendorId: null, organizationId: null });
});

test("no token or a wrong one is 401 in the envelope", async () => {
  for (const token of [undefined, "vas_not-a-token"]) {
    const res = await client(api.url, token).get("/api/v1/token");
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, message: expect.any(String) });
  }
});

test("a revoked token is 401", async () => {
  const created = await tenant.admin.post(`/api/v1/vendors/${tenant.vendorId}/api-tokens`, { name: "short-lived" });
  const token = created.body.data.token as string;
  expect((await client(api.url, token).get("/api/v1/token")).status).toBe(200);
  await tenant.admin.delete(`/api/v1/vendors/${tenant.vendorId}/api-tokens/${created.body.data.id}`);
  expect((await client(api.url, token).get("/api/v1/token")).status).toBe(401);
});
