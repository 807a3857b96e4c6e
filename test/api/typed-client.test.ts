// Issue 30, point 4: the typed client in clients/typescript. Its committed types are what the running
// server's document generates, and the example (create an assistant, read it back, rename it with
// If-Match) works against a real server through the client, not raw fetch.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createAndReadBack } from "../../clients/typescript/example";
import { generateTypes, SCHEMA_FILE } from "../../clients/typescript/generate";
import { createVasClient } from "../../clients/typescript/index";
import { createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";

let api: TestApi;
let tenant: Tenant;
beforeAll(async () => {
  api = await startTestApi();
  tenant = await createTenant(api.url, "typed-client");
});
afterAll(() => api.stop());

test("the committed types are what the running server's document generates", async () => {
  const generated = await generateTypes(`${api.url}/swagger/json`);
  // on a difference: run `bun run client:generate` against a running server and commit schema.d.ts
  expect(generated === readFileSync(SCHEMA_FILE, "utf8")).toBe(true);
}, 30_000);

test("the example creates an assistant, reads it back and renames it through the client", async () => {
  const vas = createVasClient({ baseUrl: api.url, token: tenant.orgToken });
  const result = await createAndReadBack(vas, tenant.vendorId, tenant.organizationId, "Front desk");
  expect(result.read).toEqual(result.created);
  expect(result.read.name).toBe("Front desk");
  expect(result.etag).toMatch(/^"[\w-]+"$/);
  expect(result.renamedStatus).toBe(200);

  const path = { vendorId: tenant.vendorId, organizationId: tenant.organizationId, assistantId: result.created.id };
  const now = await vas.GET("/api/v1/vendors/{vendorId}/organizations/{organizationId}/assistants/{assistantId}", {
    params: { path },
  });
  expect(now.data?.data.name).toBe("Front desk (renamed)");
  // the rename changed the ETag: a write holding the old one is refused, typed as an error envelope
  const stale = await vas.PUT("/api/v1/vendors/{vendorId}/organizations/{organizationId}/assistants/{assistantId}", {
    params: { path, header: { "If-Match": result.etag } },
    body: { name: "lost update" },
  });
  expect(stale.response.status).toBe(412);
  expect(stale.error?.success).toBe(false);
});
