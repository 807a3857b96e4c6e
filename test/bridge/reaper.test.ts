// A bridge killed with SIGKILL during websocket calls and never started again under its id (a replaced
// pod): another bridge process, with a different BRIDGE_INSTANCE_ID, sees its heartbeat expire and
// concludes its calls: failed with "bridge lost", call_concluded in the outbox, nothing left open.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { and, eq, inArray } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks, bridgeHeartbeats, hookDeliveries } from "../../src/db/schema";
import { freePort } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { killHard, startBridgeProcess } from "./bridge-process";
import { createAssistant, startWorld, type World } from "./fixtures";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: World;
const procs: ChildProcess[] = [];

beforeAll(async () => {
  // the test's own in-process bridge beats once and then stays out of the way: the reaping is left to
  // the bridge processes
  world = await startWorld({ BRIDGE_HEARTBEAT_MS: "600000" });
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await world?.stop();
  await close();
});

async function bridgeProcess(id: string) {
  const port = await freePort();
  const proc = await startBridgeProcess({
    BRIDGE_INSTANCE_ID: id,
    BRIDGE_PORT: String(port),
    BRIDGE_HEARTBEAT_MS: "300",
    // a TTL well over a loaded CI machine's stalls: the lost bridge must not be reaped while it still runs
    BRIDGE_HEARTBEAT_TTL_MS: "4000",
    SIP_ENABLED: "false",
    OPENAI_REALTIME_URL: world.realtime.url,
    OPENAI_BASE_URL: world.chat.baseUrl,
  });
  procs.push(proc);
  let output = "";
  proc.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  return { proc, url: `ws://127.0.0.1:${port}`, output: () => output };
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

test("the calls of a bridge killed for good are concluded by a live bridge within seconds", async () => {
  const lostId = `reaper-lost-${process.pid}`;
  const liveId = `reaper-live-${process.pid}`;
  const [lost, live] = await Promise.all([bridgeProcess(lostId), bridgeProcess(liveId)]);
  const assistant = await createAssistant(world, { greeting: "Hello." });
  const callers = await Promise.all(
    [0, 1].map(() =>
      dialNative(lost.url, { assistantId: assistant.id, sampleRate: "16000", token: world.tenant.orgToken }),
    ),
  );
  const callIds: string[] = [];
  for (const caller of callers) {
    callIds.push((await caller.waitFor((e) => e.type === "ready")).callId);
    caller.startStreaming();
  }
  await Promise.all(callers.map((c) => c.waitForAgentAudio()));
  const tasks = () => db.select().from(agentTasks).where(inArray(agentTasks.callId, callIds));
  await until("both calls started", async () => (await tasks()).every((t) => t.startedAt !== null), 10_000);
  expect((await tasks()).map((t) => [t.status, t.bridgeId])).toEqual([
    ["active", lostId],
    ["active", lostId],
  ]);

  await Promise.all([killHard(lost.proc), ...callers.map((c) => c.closed)]);
  // TTL 4 s, beats every 0.3 s: well within this
  const closed = await until(
    "the lost bridge's calls concluded",
    async () => ((await tasks()).every((t) => t.status !== "active") ? tasks() : null),
    15_000,
  );
  for (const task of closed) {
    expect(task).toMatchObject({ status: "failed", error: "bridge lost" });
    expect(task.endedAt).not.toBeNull();
  }
  const concluded = await db
    .select({ callId: hookDeliveries.callId })
    .from(hookDeliveries)
    .where(and(inArray(hookDeliveries.callId, callIds), eq(hookDeliveries.eventType, "call_concluded")));
  expect(concluded.map((d) => d.callId).sort()).toEqual([...callIds].sort());
  expect(live.output()).toContain(`"lostBridgeId":"${lostId}"`);
  // the dead bridge's row is gone once it has nothing open; the live one keeps beating
  await until(
    "the lost bridge's heartbeat row removed",
    async () => (await db.select().from(bridgeHeartbeats).where(eq(bridgeHeartbeats.bridgeId, lostId))).length === 0,
    5_000,
  );
  expect(await db.select().from(bridgeHeartbeats).where(eq(bridgeHeartbeats.bridgeId, liveId))).toHaveLength(1);
}, 60_000);
