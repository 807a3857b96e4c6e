// Issue 40 item 1: a deployment's processes started at the same moment on a database that does not
// exist yet all come up. One creates the database and migrates under the advisory lock; the others
// wait for it and find nothing left to do. An API is not ready before its schema is migrated.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres from "postgres";
import { dropDatabase, MIGRATION_LOCK } from "../../src/db/migrate";
import { spawnService, type ServiceProcess } from "../bridge/bridge-process";
import { ensureTemporal, freePort, startWorker, type TestWorker } from "../helpers/temporal";
import { eventually } from "../sip/helpers/eventually";

const migrations = readMigrationFiles({ migrationsFolder: fileURLToPath(new URL("../../drizzle", import.meta.url)) });
const started: ServiceProcess[] = [];
const workers: Promise<TestWorker>[] = [];
const databases: string[] = [];
afterAll(async () => {
  for (const { proc } of started) proc.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.then((worker) => worker.kill("SIGKILL")).catch(() => {})));
  for (const url of databases) await dropDatabase(url);
});

/** The URL of a database of this run's server that does not exist yet. */
function newDatabase(label: string) {
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `${url.pathname}_${label}`;
  databases.push(url.toString());
  return url.toString();
}

function spawned(script: string, env: Record<string, string>) {
  const service = spawnService(script, env);
  started.push(service);
  return service;
}

async function onDatabase<T>(url: string, work: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** How often each migration is recorded (by its hash). */
const recorded = (url: string) =>
  onDatabase(url, async (sql) => {
    const rows = await sql<{ hash: string; times: number }[]>`
      select hash, count(*)::int as times from drizzle.__drizzle_migrations group by hash`;
    return Object.fromEntries(rows.map((r) => [r.hash, r.times]));
  });
const eachOnce = () => Object.fromEntries(migrations.map((m) => [m.hash, 1]));

const readyz = (apiUrl: string) =>
  fetch(`${apiUrl}/readyz`).then(
    async (r) => ({ status: r.status, body: (await r.json()) as { message?: string; data: { status: string } } }),
    () => null,
  );

/** An API process (PORT in `env`) and its URL. */
const apiProcess = (env: Record<string, string>) => ({
  service: spawned("src/index.ts", env),
  url: `http://127.0.0.1:${env.PORT}`,
});

const rounds = [1, 2, 3];
for (const round of rounds)
  test(`round ${round} of ${rounds.length}: two APIs, a bridge with its default workers and a hook worker started at once on a database that does not exist all come up, each migration applied once`, async () => {
    const databaseUrl = newDatabase(`start${round}`);
    const temporal = await ensureTemporal();
    const env = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address };
    const [bridgePort, ...apiPorts] = await Promise.all([freePort(), freePort(), freePort()]);

    // all five spawned in one turn of the event loop
    const apis = apiPorts.map((port) => apiProcess({ ...env, PORT: String(port) }));
    const bridge = spawned("src/bridge/main.ts", {
      ...env,
      BRIDGE_PORT: String(bridgePort),
      BRIDGE_WORKERS: "", // the default: one per core
      SIP_ENABLED: "false",
      BRIDGE_INSTANCE_ID: `start-together-${process.pid}-${round}`,
      BRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "start-together-")),
    });
    const worker = startWorker({ address: temporal.address, backoffBaseMs: 1_000, env });
    workers.push(worker);

    const services = { "first API": apis[0]!.service, "second API": apis[1]!.service, bridge };
    const exited = () =>
      Object.entries(services).flatMap(([name, { proc }]) =>
        proc.exitCode !== null || proc.signalCode !== null ? [`${name}: ${proc.exitCode ?? proc.signalCode}`] : [],
      );
    // a process that exits while the others start fails the round at once
    const upWhile = (check: () => Promise<boolean> | boolean) => async () => {
      expect(exited()).toEqual([]);
      return check();
    };

    const hookWorker = await worker;
    const bridgeWorkers = availableParallelism();
    await eventually(
      upWhile(() => bridge.lines.filter((l) => l.msg === "bridge listening").length >= bridgeWorkers),
      `${bridgeWorkers} bridge workers listening`,
      120_000,
    );
    for (const { url } of apis) {
      await eventually(
        upWhile(async () => (await readyz(url))?.status === 200),
        `${url} ready`,
        120_000,
      );
      // ready means migrated
      expect(await recorded(databaseUrl)).toEqual(eachOnce());
    }

    expect(exited()).toEqual([]);
    expect(hookWorker.running()).toBe(true);
    expect(bridge.lines.filter((l) => l.msg === "bridge worker exited; restarting")).toEqual([]);
    expect(bridge.lines.filter((l) => l.msg === "bridge worker started")).toHaveLength(bridgeWorkers);
    expect(await recorded(databaseUrl)).toEqual(eachOnce());

    bridge.proc.kill("SIGTERM");
    for (const { service } of apis) service.proc.kill("SIGKILL");
    await hookWorker.kill("SIGKILL");
    await new Promise((resolve) => (bridge.proc.exitCode === null ? bridge.proc.once("exit", resolve) : resolve(null)));
  }, 240_000);

test("an API is not ready while another process migrates its database, and ready once that is done", async () => {
  const databaseUrl = newDatabase("start_ready");
  const temporal = await ensureTemporal();
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  admin.pathname = "/postgres";
  await onDatabase(admin.toString(), (sql) => sql.unsafe(`create database "${name}"`));

  // this test holds the lock as a migrating process would, inside its transaction
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const migrating = onDatabase(databaseUrl, (sql) =>
    sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${MIGRATION_LOCK}))`;
      await held;
    }),
  );
  const port = String(await freePort());
  const { service, url } = apiProcess({ DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, PORT: port });
  await eventually(
    () =>
      onDatabase(databaseUrl, async (sql) => {
        const [waiting] = await sql<{ n: number }[]>`
          select count(*)::int as n from pg_locks
          where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = ${name})`;
        return waiting!.n > 0;
      }),
    "the API waiting for the migration lock",
    60_000,
  );
  const waiting = await readyz(url);
  expect(waiting).toMatchObject({
    status: 503,
    body: { message: "not ready: migrations not applied yet", data: { status: "starting", database: true } },
  });
  expect((await fetch(`${url}/healthz`)).status).toBe(200);

  release();
  await migrating;
  await eventually(async () => (await readyz(url))?.status === 200, "the API ready", 60_000);
  expect(await recorded(databaseUrl)).toEqual(eachOnce());
  expect(service.proc.exitCode).toBeNull();
}, 120_000);
