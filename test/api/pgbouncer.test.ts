// Issue 28, point 5: with DATABASE_PREPARE=false the API runs behind PgBouncer in transaction mode (no
// named prepared statements there), and with DATABASE_LISTEN_URL its LISTEN still hears NOTIFY on a
// direct session: a token revoked through another instance is refused by this one at once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnApi, type ApiProcess } from "../helpers/api-process";
import { client, createTenant, startTestApi, type Tenant, type TestApi } from "../helpers/api";
import { startPgBouncer } from "../helpers/pgbouncer";

let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
let pooled: ApiProcess;
let direct: TestApi;
let tenant: Tenant;

beforeAll(async () => {
  bouncer = await startPgBouncer(process.env.DATABASE_URL!);
  pooled = await spawnApi({
    DATABASE_URL: bouncer.url,
    DATABASE_PREPARE: "false",
    DATABASE_LISTEN_URL: process.env.DATABASE_URL!,
  });
  direct = await startTestApi();
  tenant = await createTenant(pooled.url, "pgbouncer");
}, 60_000);
afterAll(async () => {
  pooled?.stop();
  await direct?.stop();
  bouncer?.stop();
});

test("reads, writes, conditional and idempotent requests through the pooler, many at once", async () => {
  const { org, P } = tenant;
  const strategy = await org.post(`${P}/llm-generation-strategies`, {
    name: "s",
    type: "openai_realtime",
    parameters: { voice: { voiceId: "alloy" } },
  });
  expect(strategy.status).toBe(201);
  const created = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      org.post(`${P}/assistants`, { name: `a${i}`, llmAudioContentGenerationStrategyId: strategy.body.data.id }),
    ),
  );
  expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
  const reads = await Promise.all([
    ...created.map((r) => org.get(`${P}/assistants/${r.body.data.id}`)),
    ...Array.from({ length: 20 }, () => org.get(`${P}/assistants?size=20&sort=name,asc`)),
  ]);
  expect(reads.map((r) => r.status)).toEqual(Array(40).fill(200));
  expect(reads[20]!.body.totalElements).toBe(20);

  const id = created[0]!.body.data.id;
  const etag = reads[0]!.headers.get("etag")!;
  const put = await org.send("PUT", `${P}/assistants/${id}`, { name: "renamed" }, { "if-match": etag });
  expect(put.status).toBe(200);
  const stale = await org.send("PUT", `${P}/assistants/${id}`, { name: "again" }, { "if-match": etag });
  expect(stale.status).toBe(412);

  const key = { "idempotency-key": "pgbouncer-1" };
  const first = await org.post(`${P}/assistants`, { name: "once" }, key);
  const again = await org.post(`${P}/assistants`, { name: "once" }, key);
  expect([first.status, again.status]).toEqual([201, 201]);
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(again.body.data.id).toBe(first.body.data.id);
}, 60_000);

test("a token revoked through another instance is refused through the pooler (NOTIFY on the listen URL)", async () => {
  const admin = client(direct.url, process.env.ADMIN_TOKEN!);
  const made = await admin.post(`/api/v1/vendors/${tenant.vendorId}/api-tokens`, {
    name: "revoked",
    organizationId: tenant.organizationId,
  });
  const token = made.body.data.token as string;
  const viaPooler = client(pooled.url, token);
  // known valid, and cached, by the pooled instance
  expect((await viaPooler.get(`${tenant.P}/assistants?size=1`)).status).toBe(200);
  expect((await admin.delete(`/api/v1/vendors/${tenant.vendorId}/api-tokens/${made.body.data.id}`)).status).toBe(200);
  let status = 0;
  for (let i = 0; i < 40 && status !== 401; i++) {
    status = (await viaPooler.get(`${tenant.P}/assistants?size=1`)).status;
    if (status !== 401) await Bun.sleep(50);
  }
  expect(status).toBe(401);
}, 30_000);
