// `start:bridge` with BRIDGE_WORKERS=2: a supervisor and two real worker processes sharing one
// websocket port (SO_REUSEPORT). Calls reach both workers, a worker killed with SIGKILL is started
// again under its instance id, and SIGTERM to the supervisor stops every worker.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { inArray } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks } from "../../src/db/schema";
import { freePort, reapWithParent } from "../helpers/temporal";
import { alive } from "./bridge-process";
import { dialNative } from "../helpers/ws-caller";
import { createAssistant, startWorld, type World } from "./fixtures";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: World;
let supervisor: ChildProcess | null = null;
let output = "";
const instanceId = `workers-${process.pid}`;

beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  supervisor?.kill("SIGKILL");
  await world?.stop();
  await close();
});

/** The JSON log lines of the supervisor and its workers with this `msg`. */
const lines = (msg: string): any[] =>
  output
    .split("\n")
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l));

async function until<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** Opens `n` calls at once and hangs them up once ready; resolves with their call ids. */
async function callsThrough(url: string, assistantId: string, n: number) {
  const callers = await Promise.all(
    Array.from({ length: n }, () =>
      dialNative(url, { assistantId, sampleRate: "16000", token: world.tenant.orgToken }),
    ),
  );
  const ids = await Promise.all(
    callers.map(async (c) => (await c.waitFor((e) => e.type === "ready")).callId as string),
  );
  for (const caller of callers) caller.ws.send(JSON.stringify({ type: "hangup" }));
  await Promise.all(callers.map((c) => c.closed));
  return ids;
}

test("two workers share the websocket port, a killed worker comes back, SIGTERM stops them all", async () => {
  const port = await freePort();
  supervisor = spawn("bun", ["src/bridge/main.ts"], {
    env: {
      ...process.env,
      LOG_LEVEL: "info",
      BRIDGE_WORKERS: "2",
      BRIDGE_INSTANCE_ID: instanceId,
      BRIDGE_PORT: String(port),
      SIP_ENABLED: "false",
      OPENAI_REALTIME_URL: world.realtime.url,
      OPENAI_BASE_URL: world.chat.baseUrl,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  reapWithParent(supervisor.pid!, "KILL");
  supervisor.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  supervisor.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => supervisor!.once("exit", (code) => resolve(code)));

  await until("both workers listening", () => lines("bridge listening").length === 2);
  expect(
    lines("bridge listening")
      .map((l) => l.bridgeId)
      .sort(),
  ).toEqual([`${instanceId}#0`, `${instanceId}#1`]);
  expect(lines("bridge listening").every((l) => l.port === port)).toBe(true);

  // the kernel spreads connections by their address and port: 16 calls all on one worker has odds 2^-15
  const assistant = await createAssistant(world, { greeting: "Hello." });
  const url = `ws://127.0.0.1:${port}`;
  const callIds = await callsThrough(url, assistant.id, 16);
  const tasks = await db
    .select({ bridgeId: agentTasks.bridgeId })
    .from(agentTasks)
    .where(inArray(agentTasks.callId, callIds));
  expect(new Set(tasks.map((t) => t.bridgeId))).toEqual(new Set([`${instanceId}#0`, `${instanceId}#1`]));

  // SIGKILL one worker: the supervisor starts it again with the same instance id
  const [first] = lines("bridge worker started").filter((l) => l.worker === 0);
  process.kill(first.pid, "SIGKILL");
  const restarted = await until("worker 0 started again", () =>
    lines("bridge worker started").find((l) => l.worker === 0 && l.pid !== first.pid),
  );
  expect(lines("bridge worker exited; restarting")).toMatchObject([{ worker: 0, signal: "SIGKILL" }]);
  await until(
    "worker 0 listening again",
    () => lines("bridge listening").filter((l) => l.bridgeId === `${instanceId}#0`).length === 2,
  );
  expect(alive(restarted.pid)).toBe(true);
  // calls go on being answered on the port
  expect(await callsThrough(url, assistant.id, 4)).toHaveLength(4);

  const workers = lines("bridge worker started")
    .slice(-2)
    .map((l) => l.pid as number);
  supervisor.kill("SIGTERM");
  expect(await exited).toBe(0);
  supervisor = null;
  expect(workers.filter(alive)).toEqual([]);
  expect(lines("bridge stopping")).toHaveLength(2);
}, 90_000);
