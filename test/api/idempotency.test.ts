// Issue 30, point 1: Idempotency-Key on every POST (design.md, "HTTP conventions").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { startApi } from "../../src/server";
import { idempotencyKeys } from "../../src/db/schema";
import {
  claimKey,
  deleteExpiredKeys,
  EXPIRED_KEYS_BATCH,
  releaseClaim,
  startIdempotencyKeyCleanup,
} from "../../src/services/idempotency";
import { client, createTenant, startTestApi, type Reply, type Tenant, type TestApi } from "../helpers/api";
import { spawnApi, type ApiProcess } from "../helpers/api-process";

let api: TestApi;
let a: Tenant;
let b: Tenant;
const database = createDb(process.env.DATABASE_URL!, { max: 2 });

beforeAll(async () => {
  api = await startTestApi();
  a = await createTenant(api.url, "idem-a");
  b = await createTenant(api.url, "idem-b");
});
afterAll(async () => {
  await api.stop();
  await database.close();
});

const key = () => `key-${crypto.randomUUID()}`;
const withKey = (k: string) => ({ "idempotency-key": k });
const replayed = (res: Reply) => res.headers.get("idempotent-replayed") === "true";
const assistantsNamed = async (tenant: Tenant, name: string) =>
  ((await tenant.org.get(`${tenant.P}/assistants?size=100`)).body.data as { name: string }[]).filter(
    (x) => x.name === name,
  ).length;

describe("a repeat with the same key", () => {
  test("same body: the first response again, marked replayed, and nothing created twice", async () => {
    const k = key();
    const first = await a.org.post(`${a.P}/assistants`, { name: "once" }, withKey(k));
    expect(first.status).toBe(201);
    expect(replayed(first)).toBe(false);
    const again = await a.org.post(`${a.P}/assistants`, { name: "once" }, withKey(k));
    expect(again.status).toBe(201);
    expect(replayed(again)).toBe(true);
    expect(again.body).toEqual(first.body);
    expect(await assistantsNamed(a, "once")).toBe(1);
  });

  test("another body: 422 in the envelope naming the header, nothing created", async () => {
    const k = key();
    expect((await a.org.post(`${a.P}/assistants`, { name: "first-body" }, withKey(k))).status).toBe(201);
    const other = await a.org.post(`${a.P}/assistants`, { name: "second-body" }, withKey(k));
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ success: false, errors: [{ field: "Idempotency-Key" }] });
    expect(await assistantsNamed(a, "second-body")).toBe(0);
  });

  test("a validation 400 is kept: the same body replays it, a corrected body under the key is 422", async () => {
    const k = key();
    const invalid = await a.org.post(`${a.P}/assistants`, { name: 5 }, withKey(k));
    expect(invalid.status).toBe(400);
    const again = await a.org.post(`${a.P}/assistants`, { name: 5 }, withKey(k));
    expect(again.status).toBe(400);
    expect(replayed(again)).toBe(true);
    expect(again.body).toEqual(invalid.body);
    expect((await a.org.post(`${a.P}/assistants`, { name: "fixed" }, withKey(k))).status).toBe(422);
  });

  test("401 and 403 are not kept: nothing is stored under the key", async () => {
    const k = key();
    const forbidden = await a.org.post(`${b.P}/assistants`, { name: "intruder" }, withKey(k));
    expect(forbidden.status).toBe(403);
    const unauthorized = await client(api.url, "vas_unknown").post(`${a.P}/assistants`, { name: "x" }, withKey(k));
    expect(unauthorized.status).toBe(401);
    const rows = await database.db.execute(sql`select 1 from idempotency_keys where key = ${k}`);
    expect(rows.length).toBe(0);
  });

  test("a 5xx is not kept, nor an answer that bypassed the reply step: the retry runs again", async () => {
    let runs = 0;
    // a route that fails like an outage would, on the real app with every hook in place
    const failing = await startApi(loadConfig(process.env), { port: 0 });
    failing.app.post("/api/v1/outage", () => {
      runs++;
      throw new Error("database went away");
    });
    let rawRuns = 0;
    failing.app.post("/api/v1/raw", () => {
      rawRuns++;
      return new Response("{}", { status: 201 });
    });
    try {
      const admin = client(failing.url, process.env.ADMIN_TOKEN);
      const k = key();
      expect((await admin.post("/api/v1/outage", {}, withKey(k))).status).toBe(500);
      const retry = await admin.post("/api/v1/outage", {}, withKey(k));
      expect(retry.status).toBe(500);
      expect(replayed(retry)).toBe(false);
      expect(runs).toBe(2);

      // a handler answering with its own Response bypasses the reply step: its key is given back
      const raw = key();
      expect((await admin.post("/api/v1/raw", {}, withKey(raw))).status).toBe(201);
      let retry2 = await admin.post("/api/v1/raw", {}, withKey(raw));
      // the release happens once the first answer is sent, so a retry may still meet the claim
      for (let i = 0; i < 50 && retry2.status === 409; i++) {
        await Bun.sleep(20);
        retry2 = await admin.post("/api/v1/raw", {}, withKey(raw));
      }
      expect(retry2.status).toBe(201);
      expect(rawRuns).toBe(2);
    } finally {
      await failing.stop();
    }
  });

  test("the kept response is sealed at rest: a created token's value is not in the table", async () => {
    const k = key();
    const created = await a.admin.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, { name: "sealed" }, withKey(k));
    expect(created.status).toBe(201);
    const token: string = created.body.data.token;
    const [row] = await database.db.execute<{ response: string }>(
      sql`select response from idempotency_keys where key = ${k}`,
    );
    expect(row!.response).toStartWith("v1:");
    expect(row!.response).not.toContain(token);
    const again = await a.admin.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, { name: "sealed" }, withKey(k));
    expect(again.body.data.token).toBe(token);
  });
});

describe("while the first is being processed", () => {
  test("a repeat is 409 in the envelope, and nothing runs; a claim left by a dead request stays so", async () => {
    const k = key();
    const body = '{"name":"held"}';
    // the claim an in-flight (or dead) first request holds, as the plugin would have made it
    const hash = createHash("sha256").update(body).digest("base64url");
    const scope = `organization:${a.organizationId}`;
    await claimKey(database.db, { scope, method: "POST", path: `${a.P}/assistants`, key: k }, hash);
    const repeat = await a.org.send("POST", `${a.P}/assistants`, body, {
      "content-type": "application/json",
      "idempotency-key": k,
    });
    expect(repeat.status).toBe(409);
    expect(repeat.body).toMatchObject({ success: false, message: expect.stringContaining("Idempotency-Key") });
    expect(await assistantsNamed(a, "held")).toBe(0);
  });
});

describe("scope", () => {
  test("tokens with the same reach share keys; other reaches do not", async () => {
    const k = key();
    expect((await a.org.post(`${a.P}/assistants`, { name: "shared" }, withKey(k))).status).toBe(201);
    const sibling = (
      await a.admin.post(`/api/v1/vendors/${a.vendorId}/api-tokens`, {
        name: "second org token",
        organizationId: a.organizationId,
      })
    ).body.data.token as string;
    const sameReach = await client(api.url, sibling).post(`${a.P}/assistants`, { name: "shared" }, withKey(k));
    expect(replayed(sameReach)).toBe(true);
    // the vendor token reaches further: its own key space, so this is a new assistant
    const vendor = await a.vendor.post(`${a.P}/assistants`, { name: "shared" }, withKey(k));
    expect(vendor.status).toBe(201);
    expect(replayed(vendor)).toBe(false);
    const otherTenant = await b.org.post(`${b.P}/assistants`, { name: "shared" }, withKey(k));
    expect(replayed(otherTenant)).toBe(false);
    expect(await assistantsNamed(a, "shared")).toBe(2);
  });

  test("the key is per path: the same key on another POST acts there", async () => {
    const k = key();
    expect((await a.org.post(`${a.P}/assistants`, { name: "per-path" }, withKey(k))).status).toBe(201);
    const agent = await a.org.post(`${a.P}/agents`, { name: "per-path" }, withKey(k));
    expect(agent.status).toBe(201);
    expect(replayed(agent)).toBe(false);
  });
});

describe("bad keys", () => {
  test("empty, longer than 255 or non-printable: 400 naming the header, nothing created", async () => {
    for (const bad of ["", "x".repeat(256), "tab\there", "del\x7f"]) {
      const res = await a.org.send("POST", `${a.P}/assistants`, '{"name":"bad-key"}', {
        "content-type": "application/json",
        "idempotency-key": bad,
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, errors: [{ field: "Idempotency-Key" }] });
    }
    expect(await assistantsNamed(a, "bad-key")).toBe(0);
    // the limits themselves are allowed
    const longest = await a.org.post(`${a.P}/assistants`, { name: "longest-key" }, withKey("~".repeat(255)));
    expect(longest.status).toBe(201);
  });
});

describe("concurrent duplicates", () => {
  test("identical requests at once: one acts, the others are 409 or its replay", async () => {
    for (let round = 0; round < 5; round++) {
      const k = key();
      const name = `race-${round}`;
      const replies = await Promise.all(
        Array.from({ length: 4 }, () => a.org.post(`${a.P}/assistants`, { name }, withKey(k))),
      );
      const acted = replies.filter((r) => r.status === 201 && !replayed(r));
      expect(acted.length).toBe(1);
      for (const r of replies) if (r !== acted[0]) expect(r.status === 409 || replayed(r)).toBe(true);
      for (const r of replies.filter((r) => r.status === 409))
        expect(r.body).toMatchObject({ success: false, message: expect.stringContaining("Idempotency-Key") });
      expect(await assistantsNamed(a, name)).toBe(1);
    }
  });

  test("two API processes: one acts, the other answers 409 or the replay, and a retry on either replays", async () => {
    const instances: ApiProcess[] = await Promise.all([spawnApi(), spawnApi()]);
    try {
      for (let round = 0; round < 3; round++) {
        const k = key();
        const name = `two-instances-${round}`;
        const replies = await Promise.all(
          instances.map((i) => client(i.url, a.orgToken).post(`${a.P}/assistants`, { name }, withKey(k))),
        );
        expect(replies.filter((r) => r.status === 201 && !replayed(r)).length).toBe(1);
        expect(replies.every((r) => r.status === 201 || r.status === 409)).toBe(true);
        for (const i of instances) {
          const retry = await client(i.url, a.orgToken).post(`${a.P}/assistants`, { name }, withKey(k));
          expect(retry.status).toBe(201);
          expect(replayed(retry)).toBe(true);
        }
        expect(await assistantsNamed(a, name)).toBe(1);
      }
    } finally {
      for (const i of instances) i.stop();
    }
  }, 60_000);
});

describe("claims and expiry", () => {
  const id = () => ({ scope: "admin", method: "POST", path: "/api/v1/test", key: key() });

  test("a released claim can be claimed again; a held one cannot", async () => {
    const k = id();
    const first = await claimKey(database.db, k, "h");
    expect("claim" in first).toBe(true);
    expect("existing" in (await claimKey(database.db, k, "h"))).toBe(true);
    if ("claim" in first) await releaseClaim(database.db, first.claim);
    expect("claim" in (await claimKey(database.db, k, "h"))).toBe(true);
  });

  test("expired keys are acted on anew and deleted by the cleanup", async () => {
    const k = id();
    await claimKey(database.db, k, "h");
    await database.db.execute(
      sql`update idempotency_keys set status = 201, response = 'x', expires_at = now() - interval '1 second' where key = ${k.key}`,
    );
    const kept = await database.db.$count(idempotencyKeys, sql`key = ${k.key}`);
    expect(kept).toBe(1);
    expect(await deleteExpiredKeys(database.db)).toBeGreaterThanOrEqual(1);
    expect(await database.db.$count(idempotencyKeys, sql`key = ${k.key}`)).toBe(0);
    // and before the cleanup came, an expired row would have been taken over by a new claim
    await claimKey(database.db, k, "h");
    await database.db.execute(
      sql`update idempotency_keys set status = 201, response = 'x', expires_at = now() - interval '1 second' where key = ${k.key}`,
    );
    expect("claim" in (await claimKey(database.db, k, "other body"))).toBe(true);
  });

  test("more expired keys than one batch all go, each statement deleting one batch at most", async () => {
    const count = EXPIRED_KEYS_BATCH * 2 + 500;
    const prefix = key();
    await database.db.execute(sql`
      insert into idempotency_keys (scope, method, path, key, request_hash, claim_token, status, expires_at)
      select 'admin', 'POST', '/api/v1/test', ${prefix} || '-' || n, 'h', 't', 201, now() - interval '1 second'
      from generate_series(1, ${count}) as n`);
    // how many rows each DELETE statement on the table removed, as Postgres saw it
    await database.db.execute(
      sql.raw(`
      create table deleted_per_statement (rows int not null);
      create function count_deleted() returns trigger language plpgsql as $$
        begin insert into deleted_per_statement select count(*) from gone; return null; end $$;
      create trigger count_deleted after delete on idempotency_keys
        referencing old table as gone for each statement execute function count_deleted();`),
    );
    try {
      expect(await deleteExpiredKeys(database.db)).toBeGreaterThanOrEqual(count);
      expect(await database.db.$count(idempotencyKeys, sql`key like ${`${prefix}-%`}`)).toBe(0);
      const [seen] = await database.db.execute<{ statements: number; largest: number; total: number }>(
        sql`select count(*)::int as statements, max(rows) as largest, sum(rows)::int as total from deleted_per_statement`,
      );
      expect(seen!.total).toBeGreaterThanOrEqual(count);
      expect(seen!.largest).toBeLessThanOrEqual(EXPIRED_KEYS_BATCH);
      expect(seen!.statements).toBeGreaterThanOrEqual(Math.ceil(count / EXPIRED_KEYS_BATCH));
    } finally {
      await database.db.execute(
        sql.raw(`drop trigger count_deleted on idempotency_keys; drop function count_deleted();
          drop table deleted_per_statement;`),
      );
    }
  });

  test("the worker's periodic cleanup runs as soon as it starts", async () => {
    const k = id();
    await claimKey(database.db, k, "h");
    await database.db.execute(
      sql`update idempotency_keys set status = 201, response = 'x', expires_at = now() - interval '1 second' where key = ${k.key}`,
    );
    const stop = startIdempotencyKeyCleanup(database.db);
    try {
      let left = 1;
      for (let i = 0; i < 100 && left > 0; i++) {
        await Bun.sleep(20);
        left = await database.db.$count(idempotencyKeys, sql`key = ${k.key}`);
      }
      expect(left).toBe(0);
    } finally {
      stop();
    }
  });
});
