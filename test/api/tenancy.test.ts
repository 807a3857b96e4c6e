import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { client, startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(() => api.stop());

describe("vendors", () => {
  test("only the admin token creates and lists vendors", async () => {
    const created = await a.admin.post("/api/v1/vendors", { name: "Acme" });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: "Acme" });
    expect((await a.vendor.post("/api/v1/vendors", { name: "x" })).status).toBe(403);
    expect((await a.org.get("/api/v1/vendors")).status).toBe(403);
    const list = await a.admin.get("/api/v1/vendors?size=100");
    expect(list.status).toBe(200);
    expect(list.body.data.map((v: { id: string }) => v.id)).toContain(created.body.data.id);
  });

  test("a vendor token reads its own vendor, not another", async () => {
    expect((await a.vendor.get(`/api/v1/vendors/${a.vendorId}`)).body.data.id).toBe(a.vendorId);
    expect((await a.vendor.get(`/api/v1/vendors/${b.vendorId}`)).status).toBe(403);
  });
});

describe("organizations", () => {
  test("create, read, list, update and delete", async () => {
    const base = `/api/v1/vendors/${a.vendorId}/organizations`;
    const created = await a.vendor.post(base, { name: "zeta" });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({ id, vendorId: a.vendorId, name: "zeta" });
    expect((await a.vendor.get(`${base}/${id}`)).body.data.name).toBe("zeta");
    const list = await a.vendor.get(`${base}?sort=name,desc`);
    expect(list.body.data.map((o: { name: string }) => o.name)).toEqual(["zeta", "a-org"]);
    expect(list.body).toMatchObject({ page: 0, size: 20, totalElements: 2, totalPages: 1 });
    const updated = await a.vendor.put(`${base}/${id}`, { name: "Eta" });
    expect(updated.status).toBe(200);
    expect(updated.body.data.name).toBe("Eta");
    expect((await a.vendor.delete(`${base}/${id}`)).status).toBe(200);
    expect((await a.vendor.get(`${base}/${id}`)).status).toBe(404);
    expect((await a.vendor.delete(`${base}/${id}`)).status).toBe(404);
  });

  test("an organization token reads its organization but cannot manage the vendor", async () => {
    expect((await a.org.get(`/api/v1/vendors/${a.vendorId}/organizations/${a.organizationId}`)).status).toBe(200);
    expect((await a.org.get(`/api/v1/vendors/${a.vendorId}/organizations`)).status).toBe(403);
    expect((await a.org.post(`/api/v1/vendors/${a.vendorId}/organizations`, { name: "x" })).status).toBe(403);
    expect(
      (await a.org.put(`/api/v1/vendors/${a.vendorId}/organizations/${a.organizationId}`, { name: "x" })).status,
    ).toBe(403);
    expect((await a.org.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, {})).status).toBe(403);
  });

  test("deleting an organization removes its tokens and everything in it", async () => {
    const base = `/api/v1/vendors/${a.vendorId}/organizations`;
    const org = (await a.vendor.post(base, { name: "Doomed" })).body.data;
    const token = (await a.vendor.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, { organizationId: org.id })).body
      .data.token;
    const scoped = client(api.url, token);
    const P = `${base}/${org.id}`;
    expect((await scoped.post(`${P}/assistants`, { name: "x" })).status).toBe(201);
    expect((await a.vendor.delete(P)).status).toBe(200);
    expect((await scoped.get(`${P}/assistants`)).status).toBe(401);
    expect((await a.vendor.get(`${P}/assistants`)).status).toBe(404);
  });
});

describe("tokens", () => {
  test("are shown once, listed without their value, and revocable at once", async () => {
    const issued = await a.vendor.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, {
      name: "temp",
      organizationId: a.organizationId,
    });
    expect(issued.status).toBe(201);
    expect(issued.body.data.token).toStartWith("vas_");
    const temp = client(api.url, issued.body.data.token);
    expect((await temp.get(`${a.P}/assistants`)).status).toBe(200);

    const list = await a.vendor.get(`/api/v1/vendors/${a.vendorId}/api-tokens?size=100`);
    const listed = list.body.data.find((t: { id: string }) => t.id === issued.body.data.id);
    expect(listed).toMatchObject({ name: "temp", organizationId: a.organizationId, revokedAt: null });
    expect(JSON.stringify(list.body)).not.toContain(issued.body.data.token);
    expect(JSON.stringify(list.body)).not.toMatch(/tokenHash|token_hash/);

    expect((await a.vendor.delete(`/api/v1/vendors/${a.vendorId}/api-tokens/${issued.body.data.id}`)).status).toBe(200);
    expect((await temp.get(`${a.P}/assistants`)).status).toBe(401);
    expect((await a.vendor.delete(`/api/v1/vendors/${a.vendorId}/api-tokens/${issued.body.data.id}`)).status).toBe(404);
  });

  test("a token for an organization of another vendor is refused", async () => {
    const res = await a.vendor.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, { organizationId: b.organizationId });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe("organizationId");
  });

  test("the CLI issues a working token without HTTP", async () => {
    const proc = Bun.spawnSync(
      ["bun", "src/cli/token-create.ts", "--vendor", a.vendorId, "--organization", a.organizationId, "--name", "cli"],
      {
        env: process.env,
      },
    );
    expect(proc.exitCode).toBe(0);
    const token = proc.stdout.toString().trim();
    expect(token).toStartWith("vas_");
    expect((await client(api.url, token).get(`${a.P}/assistants`)).status).toBe(200);
    const bad = Bun.spawnSync(["bun", "src/cli/token-create.ts", "--vendor", crypto.randomUUID()], {
      env: process.env,
    });
    expect(bad.exitCode).toBe(1);
  });
});

describe("authentication and tenancy", () => {
  test("401 without a token, with a malformed header, or an unknown token", async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Basic abc" },
      { authorization: "Bearer" },
      { authorization: "Bearer vas_unknown" },
    ]) {
      const res = await client(api.url).get(`${a.P}/assistants`, headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false });
    }
  });

  test("403 for a token used outside its organization or vendor", async () => {
    expect((await a.org.get(`${b.P}/assistants`)).status).toBe(403);
    expect((await a.vendor.get(`${b.P}/assistants`)).status).toBe(403);
    expect((await a.vendor.post(`${b.P}/assistants`, { name: "intruder" })).status).toBe(403);
    // another organization of the same vendor
    const sibling = (await a.vendor.post(`/api/v1/vendors/${a.vendorId}/organizations`, { name: "sibling" })).body.data;
    const siblingP = `/api/v1/vendors/${a.vendorId}/organizations/${sibling.id}`;
    expect((await a.org.get(`${siblingP}/assistants`)).status).toBe(403);
    expect((await a.vendor.get(`${siblingP}/assistants`)).status).toBe(200);
  });

  test("403 comes before validation: an outsider learns nothing about the body", async () => {
    const res = await a.org.post(`${b.P}/assistants`, { nonsense: true });
    expect(res.status).toBe(403);
  });

  test("404 for what does not exist inside the token's reach", async () => {
    const ghostOrg = `/api/v1/vendors/${a.vendorId}/organizations/${crypto.randomUUID()}`;
    expect((await a.vendor.get(`${ghostOrg}/assistants`)).status).toBe(404);
    expect(
      (await a.admin.get(`/api/v1/vendors/${crypto.randomUUID()}/organizations/${crypto.randomUUID()}/assistants`))
        .status,
    ).toBe(404);
    expect((await a.org.get(`${a.P}/assistants/not-a-uuid`)).status).toBe(404);
    // a resource of org B addressed under org A is simply absent
    const foreign = (await b.org.post(`${b.P}/assistants`, { name: "b-only" })).body.data.id;
    expect((await a.org.get(`${a.P}/assistants/${foreign}`)).status).toBe(404);
    expect((await a.org.put(`${a.P}/assistants/${foreign}`, { name: "hijack" })).status).toBe(404);
    expect((await a.org.delete(`${a.P}/assistants/${foreign}`)).status).toBe(404);
    expect((await b.org.get(`${b.P}/assistants/${foreign}`)).body.data.name).toBe("b-only");
  });

  test("an organization of vendor B under vendor A's path is 404 for the admin and 403 for A's tokens", async () => {
    const crossed = `/api/v1/vendors/${a.vendorId}/organizations/${b.organizationId}/assistants`;
    expect((await a.admin.get(crossed)).status).toBe(404);
    expect((await a.vendor.get(crossed)).status).toBe(404);
    expect((await a.org.get(crossed)).status).toBe(403);
  });
});
