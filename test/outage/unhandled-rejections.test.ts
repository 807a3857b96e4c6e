// Issue 40 item 7: a promise rejection nobody handles (a bug somewhere) is logged and the process
// goes on: the API, the bridge supervisor and its workers with their live calls, the hook worker.
// Each process gets test/helpers/reject-on-signal.mjs loaded first, which rejects on SIGUSR2.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inArray } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks } from "../../src/db/schema";
import { alive, spawnService, type LogLine, type ServiceProcess } from "../bridge/bridge-process";
import { createAssistant, startWorld, type World } from "../bridge/fixtures";
import { client } from "../helpers/api";
import { ensureTemporal, freePort, startWorker, type TestWorker } from "../helpers/temporal";
import { dialNative, type WsCaller } from "../helpers/ws-caller";
import { eventually } from "../sip/helpers/eventually";

const rejectOnSignal = fileURLToPath(new URL("../helpers/reject-on-signal.mjs", import.meta.url));
const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: World;
const services: ServiceProcess[] = [];
let hookWorker: TestWorker | null = null;

beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  for (const { proc } of services) proc.kill("SIGKILL");
  await hookWorker?.kill("SIGKILL");
  await world?.stop();
  await close();
});

const spawned = (script: string, env: Record<string, string>) => {
  const service = spawnService(script, { BUN_OPTIONS: `--preload ${rejectOnSignal}`, ...env });
  services.push(service);
  return service;
};
/** The line the process `pid` logged for the rejection the fixture made in it. */
const rejectionOf = (pid: number) => (l: LogLine) =>
  l.msg === "unhandled promise rejection" && l.error === `Error: rejected on purpose (pid ${pid})`;

test("an unhandled rejection in the API, the bridge supervisor, its workers or the hook worker is logged, and every process and live call goes on", async () => {
  const temporal = await ensureTemporal();
  const [apiPort, bridgePort] = await Promise.all([freePort(), freePort()]);
  const instanceId = `rejections-${process.pid}`;
  const api = spawned("src/index.ts", { PORT: String(apiPort) });
  const bridge = spawned("src/bridge/main.ts", {
    BRIDGE_WORKERS: "2",
    BRIDGE_INSTANCE_ID: instanceId,
    BRIDGE_PORT: String(bridgePort),
    BRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "rejections-")),
    SIP_ENABLED: "false",
    OPENAI_REALTIME_URL: world.realtime.url,
    OPENAI_BASE_URL: world.chat.baseUrl,
  });
  hookWorker = await startWorker({
    address: temporal.address,
    backoffBaseMs: 1_000,
    env: { NODE_OPTIONS: `--import ${rejectOnSignal}` },
  });
  await api.waitFor("api listening");
  await eventually(() => bridge.lines.filter((l) => l.msg === "bridge listening").length === 2, "both bridge workers");

  // live calls on both workers (the kernel spreads connections: 12 on one worker has odds 2^-11)
  const assistant = await createAssistant(world, { greeting: "Hello." });
  const callers: WsCaller[] = await Promise.all(
    Array.from({ length: 12 }, () =>
      dialNative(`ws://127.0.0.1:${bridgePort}`, { assistantId: assistant.id, token: world.tenant.orgToken }),
    ),
  );
  const callIds = await Promise.all(callers.map(async (c) => (await c.waitFor((e) => e.type === "ready")).callId));
  const onWorkers = await db
    .selectDistinct({ bridgeId: agentTasks.bridgeId })
    .from(agentTasks)
    .where(inArray(agentTasks.callId, callIds));
  expect(onWorkers).toHaveLength(2);

  const bridgePids = bridge.lines.filter((l) => l.msg === "bridge worker started").map((l) => l.pid as number);
  const targets = [
    { name: "api", pid: api.proc.pid!, lines: api.lines },
    { name: "bridge supervisor", pid: bridge.proc.pid!, lines: bridge.lines },
    ...bridgePids.map((pid) => ({ name: "bridge worker", pid, lines: bridge.lines })),
    { name: "hook worker", pid: hookWorker.pid()!, lines: hookWorker.lines as LogLine[] },
  ];
  for (const { pid } of targets) process.kill(pid, "SIGUSR2");
  for (const { name, pid, lines } of targets) {
    await eventually(() => {
      expect({ name, alive: alive(pid) }).toEqual({ name, alive: true });
      return lines.some(rejectionOf(pid));
    }, `the ${name}'s rejection logged`);
  }

  // every process still runs and serves; no worker was restarted; every call is live and ends normally
  expect(targets.filter(({ pid }) => !alive(pid))).toEqual([]);
  expect(bridge.lines.filter((l) => l.msg === "bridge worker exited; restarting")).toEqual([]);
  expect(hookWorker.running()).toBe(true);
  expect((await client(`http://127.0.0.1:${apiPort}`, process.env.ADMIN_TOKEN).get("/api/v1/vendors")).status).toBe(
    200,
  );
  expect(callers.filter((c) => c.ws.readyState !== c.ws.OPEN)).toEqual([]);
  for (const caller of callers) caller.ws.send(JSON.stringify({ type: "hangup" }));
  const closed = await Promise.all(callers.map((c) => c.closed));
  expect(closed.filter((c) => c.code !== 1000)).toEqual([]);
  await eventually(async () => {
    const tasks = await db
      .select({ status: agentTasks.status, endedReason: agentTasks.endedReason })
      .from(agentTasks)
      .where(inArray(agentTasks.callId, callIds));
    return tasks.every((t) => t.status === "completed") && tasks;
  }, "every call concluded");
}, 180_000);
