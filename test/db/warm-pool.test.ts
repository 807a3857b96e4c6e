// createDb's warm option: the SIP stack's pool opens every connection when it starts, so the first
// burst of calls at a fresh bridge does not wait for connects behind its reservations. Counted from
// Postgres's side (pg_stat_activity), each handle under an application_name of its own.
import { afterAll, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { createDb } from "../../src/db/client";

const observer = postgres(process.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
const handles: { close(): Promise<unknown> }[] = [];
afterAll(async () => {
  await Promise.all(handles.map((h) => h.close()));
  await observer.end();
});

function open(options: { warm?: boolean }) {
  const name = `vas-pool-${randomUUID().slice(0, 8)}`;
  const url = new URL(process.env.DATABASE_URL!);
  url.searchParams.set("application_name", name);
  const handle = createDb(url.toString(), { max: 4, readModel: { enabled: false, leaseMs: 100 }, ...options });
  handles.push(handle);
  const backends = async () =>
    Number((await observer`select count(*) as n from pg_stat_activity where application_name = ${name}`)[0]!.n);
  return { ...handle, backends };
}

async function until(reached: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await reached()); i++) await Bun.sleep(50);
  return reached();
}

test("a warm pool has all its connections open before any statement; a cold one opens them as statements need them", async () => {
  const warm = open({ warm: true });
  expect(await until(async () => (await warm.backends()) >= 4)).toBe(true);

  const cold = open({});
  await cold.db.execute(sql`select 1`);
  expect(await cold.backends()).toBe(1);
});
