// A crashed bridge must not leave calls active forever: the real start:bridge process is killed with
// SIGKILL mid-call, started again, and closes the call it owned with a call_concluded event.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import { and, eq } from "drizzle-orm";
import { loadConfig } from "../../src/config";
import { createDb } from "../../src/db/client";
import { hookDeliveries, hookEventBodies } from "../../src/db/schema";
import { at } from "../hooks/fixtures";
import { freePort } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { startBridgeProcess, killHard } from "./bridge-process";
import { agentTask, createAssistant, startWorld, type World } from "./fixtures";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: World;
let port: number;
let bridge: ChildProcess | null = null;

/** `bun src/bridge/main.ts` on `port` with the default instance id (host and port). */
const startBridge = () =>
  startBridgeProcess({ OPENAI_REALTIME_URL: world.realtime.url, BRIDGE_PORT: String(port), BRIDGE_INSTANCE_ID: "" });

beforeAll(async () => {
  [world, port] = await Promise.all([startWorld(), freePort()]);
});
afterAll(async () => {
  bridge?.kill("SIGKILL");
  await world?.stop();
  await close();
});

test("the instance id is stable across restarts by default: host and port", () => {
  expect(loadConfig({ BRIDGE_PORT: "4555" }).bridge.instanceId).toBe(`${hostname()}:4555`);
});

test("a restarted bridge fails and concludes the calls a crash left active", async () => {
  const assistant = await createAssistant(world, { greeting: "Hello." });
  bridge = await startBridge();
  const caller = await dialNative(`ws://127.0.0.1:${port}`, {
    assistantId: assistant.id,
    sampleRate: "8000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentAudio();
  await Promise.all([killHard(bridge), caller.closed]);
  const left = await agentTask(world, callId);
  expect(left).toMatchObject({ status: "active", endedAt: null });
  expect(left.startedAt).not.toBeNull();

  bridge = await startBridge(); // recovery runs before it listens
  const task = await agentTask(world, callId);
  expect(task).toMatchObject({ status: "failed", error: "bridge restarted" });
  const deliveries = await db
    .select({ payload: hookEventBodies.payload })
    .from(hookDeliveries)
    .innerJoin(hookEventBodies, eq(hookEventBodies.id, hookDeliveries.bodyId))
    .where(and(eq(hookDeliveries.callId, callId), eq(hookDeliveries.eventType, "call_concluded")));
  expect(JSON.parse(at(deliveries).payload)).toEqual({
    type: "call_concluded",
    callId,
    startedAt: new Date(left.startedAt).getTime(),
    endedAt: new Date(task.endedAt).getTime(),
    direction: "inbound",
    endedReason: "bridge-lost",
    variables: expect.any(Object),
    transport: { type: "websocket" },
    messages: [],
  });
}, 30_000);
