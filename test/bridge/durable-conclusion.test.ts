// The end of a call survives a database that is unreachable when the call ends: the bridge reaches
// Postgres through a proxy the test cuts while the caller hangs up, then restores. The conclusion is
// retried until it lands; a bridge stopped before that keeps it in its spool, and the next start of the
// same instance writes it (with the call's history, not the bare "bridge restarted" one).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { startBridge } from "../../src/bridge/ws-server";
import { spoolDirOf } from "../../src/calls/conclusion-writer";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { agentTasks, hookDeliveries } from "../../src/db/schema";
import { dialNative } from "../helpers/ws-caller";
import { createAssistant, startWorld, type World } from "./fixtures";
import { startTcpProxy, throughProxy, type TcpProxy } from "./tcp-proxy";

const databaseUrl = process.env.DATABASE_URL!;
const { db, close } = createDb(databaseUrl, { max: 2 });
const dataDir = mkdtempSync(join(tmpdir(), "bridge-data-"));
let world: World;
let proxy: TcpProxy;

beforeAll(async () => {
  const pg = new URL(databaseUrl);
  proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  world = await startWorld({
    DATABASE_URL: throughProxy(databaseUrl, proxy),
    BRIDGE_DATA_DIR: dataDir,
    BRIDGE_INSTANCE_ID: `durable-${process.pid}`,
  });
});
afterAll(async () => {
  proxy?.restore();
  await world?.stop();
  await proxy?.close();
  await close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const concludedRows = (callId: string) =>
  db
    .select({ id: hookDeliveries.id })
    .from(hookDeliveries)
    .where(and(eq(hookDeliveries.callId, callId), eq(hookDeliveries.eventType, "call_concluded")));

const taskOf = async (callId: string) => (await db.select().from(agentTasks).where(eq(agentTasks.callId, callId)))[0];

/** A call that has started and heard the greeting, then the database goes away and the caller hangs up. */
async function callEndingWithoutDatabase(bridgeUrl: string, spoolDir: string) {
  const assistant = await createAssistant(world, { greeting: "Hello, Acme front desk." });
  const caller = await dialNative(bridgeUrl, {
    assistantId: assistant.id,
    sampleRate: "8000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentAudio();
  await until("call_started", async () => (await taskOf(callId))?.startedAt);
  await caller.waitFor((e) => e.type === "transcript" && e.role === "ASSISTANT" && e.final);
  proxy.cut();
  caller.sendJson({ type: "hangup" });
  await caller.closed;
  const spooled = join(spoolDir, `${callId}.json`);
  await until("the call's end in the spool", async () => existsSync(spooled));
  return { callId, spooled };
}

test("a conclusion that cannot be written is retried until the database is back", async () => {
  const spoolDir = spoolDirOf(loadConfig({ BRIDGE_DATA_DIR: dataDir, BRIDGE_INSTANCE_ID: `durable-${process.pid}` }));
  const { callId, spooled } = await callEndingWithoutDatabase(world.bridge.url, spoolDir);
  await Bun.sleep(1_500); // several attempts fail meanwhile
  expect(await concludedRows(callId)).toHaveLength(0);
  expect((await taskOf(callId))?.status).toBe("active");

  proxy.restore();
  await until("call_concluded in the outbox", async () => (await concludedRows(callId)).length > 0);
  const task = await taskOf(callId);
  expect(task).toMatchObject({ status: "completed", error: null });
  const record = await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${task!.id}`);
  expect(JSON.stringify(record.body)).toContain("Hello, Acme front desk.");
  await until("the spool file removed", async () => !existsSync(spooled));
}, 40_000);

test("a bridge stopped before the conclusion landed keeps it, and its next start writes it", async () => {
  const env = {
    ...process.env,
    DATABASE_URL: throughProxy(databaseUrl, proxy),
    OPENAI_BASE_URL: world.chat.baseUrl,
    OPENAI_REALTIME_URL: world.realtime.url,
    BRIDGE_DATA_DIR: dataDir,
    BRIDGE_INSTANCE_ID: `durable-restart-${process.pid}`,
    // cut from the database, it cannot renew its heartbeat: on a loaded CI run the test outlasted the
    // default 10 s, and the world's bridge rightly reaped the call as lost before the restart wrote it
    BRIDGE_HEARTBEAT_TTL_MS: "120000",
  };
  const config = loadConfig(env);
  const first = await startBridge(config, { port: 0 });
  const { callId, spooled } = await callEndingWithoutDatabase(first.url, spoolDirOf(config));
  await first.stop({ graceMs: 300 });
  expect(existsSync(spooled)).toBe(true);
  expect(await concludedRows(callId)).toHaveLength(0);

  proxy.restore();
  const second = await startBridge(config, { port: 0 }); // the spool is replayed before it listens
  try {
    expect(await concludedRows(callId)).toHaveLength(1);
    const task = await taskOf(callId);
    expect(task).toMatchObject({ status: "completed", error: null });
    const record = await world.tenant.org.get(`${world.tenant.P}/agent-tasks/${task!.id}`);
    expect(JSON.stringify(record.body)).toContain("Hello, Acme front desk.");
    // the recording file waited next to the spool and went out with the conclusion
    expect(record.body.data.recording).toMatchObject({ contentType: "audio/wav" });
    expect(record.body.data.recording.bytes).toBeGreaterThan(1000);
    expect(existsSync(spooled)).toBe(false);
  } finally {
    await second.stop();
  }
}, 40_000);
