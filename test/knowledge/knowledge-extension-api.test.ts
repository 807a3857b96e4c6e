import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { extensions } from "../../src/db/schema";
import { createTenant, startApiWithTwoTenants, type TestApi, type Tenant } from "../helpers/api";

let api: TestApi;
let a: Tenant;
let b: Tenant;
const database = createDb(process.env.DATABASE_URL!, { max: 1 });

beforeAll(async () => {
  ({ api, a, b } = await startApiWithTwoTenants());
});
afterAll(async () => {
  await api.stop();
  await database.close();
});

const withKb = (parameters: Record<string, unknown>) => ({
  name: "kb assistant",
  extensions: [{ type: "knowledge_base", parameters }],
});
const fields = (res: { body: any }) => res.body.errors.map((e: { field: string }) => e.field);

test("authToken is write-only: encrypted at rest, never answered; omitted keeps it, null removes it", async () => {
  const created = await a.org.post(
    `${a.P}/assistants`,
    withKb({ url: "http://127.0.0.1:9/kb", authToken: "s3cret-kb" }),
  );
  expect(created.status).toBe(201);
  expect(JSON.stringify(created.body)).not.toContain("s3cret-kb");
  const ext = created.body.data.extensions[0];
  expect(ext.parameters).toEqual({ url: "http://127.0.0.1:9/kb" });
  const sealed = async () =>
    (await database.db.select().from(extensions).where(eq(extensions.id, ext.id)))[0]!.secretEncrypted;
  const first = await sealed();
  expect(first).toBeString();
  expect(first).not.toContain("s3cret-kb");
  const id = created.body.data.id;
  const read = await a.org.get(`${a.P}/assistants/${id}`);
  expect(JSON.stringify(read.body)).not.toContain("s3cret-kb");
  // a read-back body sent as is keeps the token
  expect((await a.org.put(`${a.P}/assistants/${id}`, read.body.data)).status).toBe(200);
  expect(await sealed()).toBe(first);
  const cleared = { ...read.body.data, extensions: [{ ...ext, parameters: { ...ext.parameters, authToken: null } }] };
  expect((await a.org.put(`${a.P}/assistants/${id}`, cleared)).status).toBe(200);
  expect(await sealed()).toBeNull();
});

test("bad parameters are a 400 naming the field", async () => {
  const kb = (await a.org.post(`${a.P}/knowledge-bases`, { name: "kb" })).body.data.id;
  const cases: [Record<string, unknown>, string][] = [
    [{}, "extensions[0].parameters.url"],
    [{ url: "http://127.0.0.1:9/kb", knowledgeBaseId: kb }, "extensions[0].parameters.url"],
    [{ knowledgeBaseId: kb, authToken: "x" }, "extensions[0].parameters.authToken"],
    [{ knowledgeBaseId: kb, maxResults: 21 }, "extensions[0].parameters.maxResults"],
    [{ knowledgeBaseId: kb, maxResults: 0 }, "extensions[0].parameters.maxResults"],
    [{ knowledgeBaseId: kb, extra: 1 }, "extensions[0].parameters.extra"],
    [{ url: "http://169.254.169.254/latest" }, "extensions[0].parameters.url"],
    [{ knowledgeBaseId: "not-a-uuid" }, "extensions[0].parameters.knowledgeBaseId"],
    [{ knowledgeBaseId: kb, name: "end_call" }, "extensions[0].parameters.name"],
  ];
  for (const [parameters, field] of cases) {
    const res = await a.org.post(`${a.P}/assistants`, withKb(parameters));
    expect(res.status).toBe(400);
    expect(fields(res)).toContain(field);
  }
});

test("another tenant's knowledge base cannot be used; one in use cannot be deleted", async () => {
  const foreign = (await b.org.post(`${b.P}/knowledge-bases`, { name: "theirs" })).body.data.id;
  const res = await a.org.post(`${a.P}/assistants`, withKb({ knowledgeBaseId: foreign }));
  expect(res.status).toBe(400);
  expect(fields(res)).toEqual(["extensions[0].parameters.knowledgeBaseId"]);
  const kb = (await a.org.post(`${a.P}/knowledge-bases`, { name: "ours" })).body.data.id;
  const assistant = await a.org.post(`${a.P}/assistants`, withKb({ knowledgeBaseId: kb, maxResults: 5 }));
  expect(assistant.status).toBe(201);
  expect((await a.org.delete(`${a.P}/knowledge-bases/${kb}`)).status).toBe(409);
  await a.org.delete(`${a.P}/assistants/${assistant.body.data.id}`);
  expect((await a.org.delete(`${a.P}/knowledge-bases/${kb}`)).status).toBe(200);
});

test("deleting an organization deletes its knowledge bases with the assistants that use them", async () => {
  const tenant = await createTenant(api.url, "doomed");
  const kb = (await tenant.org.post(`${tenant.P}/knowledge-bases`, { name: "kb" })).body.data.id;
  await tenant.org.post(`${tenant.P}/knowledge-bases/${kb}/documents`, { title: "t", content: "text" });
  expect((await tenant.org.post(`${tenant.P}/assistants`, withKb({ knowledgeBaseId: kb }))).status).toBe(201);
  expect((await tenant.vendor.delete(tenant.P)).status).toBe(200);
  expect((await tenant.admin.get(`${tenant.P}/knowledge-bases/${kb}`)).status).toBe(404);
});
