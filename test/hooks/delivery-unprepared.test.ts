// A worker with DATABASE_PREPARE=false (behind PgBouncer in transaction mode, which refuses named
// prepared statements): the dispatcher's claims, attempt 1's read and the batched attempt records run
// unprepared, and a burst is delivered and recorded. Its lease, a session advisory lock, is held on
// DATABASE_LISTEN_URL's direct connection, so it ends with the worker.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { LEASE_LOCK_CLASS } from "../../workers/dispatcher-lease";
import { startPgBouncer } from "../helpers/pgbouncer";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { eventually } from "../sip/helpers/eventually";
import { ensureTemporal, startWorker, type TestWorker } from "../helpers/temporal";
import { attemptsOf, callConcluded, createAssistantWithHooks, emitOne, openDb, waitForStatus } from "./fixtures";

const { db, close } = openDb();
let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
let worker: TestWorker;
let receiver: Receiver;

beforeAll(async () => {
  const { address } = await ensureTemporal();
  bouncer = await startPgBouncer(process.env.DATABASE_URL!);
  receiver = await startReceiver(() => ({ status: 204 }));
  worker = await startWorker({
    address,
    backoffBaseMs: 60_000,
    env: { DATABASE_URL: bouncer.url, DATABASE_PREPARE: "false", DATABASE_LISTEN_URL: process.env.DATABASE_URL! },
  });
}, 60_000);
afterAll(async () => {
  await worker?.kill();
  await receiver?.close();
  bouncer?.stop();
  await close();
});

test("a burst through PgBouncer without prepared statements is delivered, every attempt recorded", async () => {
  const a = await createAssistantWithHooks(db, [{ url: `${receiver.url}/hook`, secret: "s3cret" }]);
  const ids = await Promise.all(
    Array.from({ length: 30 }, () =>
      emitOne(db, { organizationId: a.organizationId, assistantId: a.assistantId, event: callConcluded() }),
    ),
  );
  const rows = await waitForStatus(db, ids, ["SUCCEEDED"], 20_000);
  expect(rows.every((r) => r.attemptCount === 1)).toBe(true);
  for (const id of ids) expect((await attemptsOf(db, id)).map((x) => x.statusCode)).toEqual([204]);
  expect(receiver.requests).toHaveLength(30);
  expect(worker.lines.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
}, 40_000);

/** The lease keys held in the database now (every live dispatcher's). */
async function leaseKeys(): Promise<string[]> {
  const rows = await db.execute<{ key: string }>(
    sql`select objid::text as key from pg_locks
      where locktype = 'advisory' and granted and classid::bigint = ${LEASE_LOCK_CLASS} and objsubid = 2`,
  );
  return rows.map((r) => r.key);
}

test("the dispatcher's lease is held on the direct session, so a killed worker's lease ends with it", async () => {
  const before = await leaseKeys();
  expect(before.length).toBeGreaterThan(0);
  // through PgBouncer in transaction mode the lock stayed on a pooled server connection after the
  // worker died, and the runs it had claimed with it waited for nobody
  await worker.kill("SIGKILL");
  await eventually(async () => ((await leaseKeys()).length < before.length ? true : undefined), "the lease ended");
  expect((await leaseKeys()).every((key) => before.includes(key))).toBe(true);
}, 30_000);
