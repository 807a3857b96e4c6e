// SIGTERM is how an orchestrator stops a pod: the bridge ends its calls (each concluded, with its
// call_concluded) and exits 0; the API stops serving and exits 0; a second signal changes nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { and, eq } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks, hookDeliveries } from "../../src/db/schema";
import { freePort, reapWithParent } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { startBridgeProcess } from "./bridge-process";
import { createAssistant, startWorld, type World } from "./fixtures";

const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
let world: World;

beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
  await close();
});

const exitOf = (proc: { once(event: "exit", fn: (code: number | null) => void): unknown }) =>
  new Promise<number | null>((resolve) => proc.once("exit", resolve));

test("SIGTERM (twice) ends the bridge's calls with their call_concluded, then the bridge exits 0", async () => {
  const port = await freePort();
  const bridge = await startBridgeProcess({
    BRIDGE_INSTANCE_ID: `sigterm-${process.pid}`,
    BRIDGE_PORT: String(port),
    SIP_ENABLED: "false",
    OPENAI_REALTIME_URL: world.realtime.url,
    OPENAI_BASE_URL: world.chat.baseUrl,
  });
  let stderr = "";
  bridge.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const assistant = await createAssistant(world, { greeting: "Hello." });
  const caller = await dialNative(`ws://127.0.0.1:${port}`, {
    assistantId: assistant.id,
    sampleRate: "8000",
    token: world.tenant.orgToken,
  });
  const { callId } = await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentAudio();

  const exited = exitOf(bridge);
  bridge.kill("SIGTERM");
  await Bun.sleep(50);
  bridge.kill("SIGTERM"); // an impatient orchestrator
  expect(await exited).toBe(0);
  expect(stderr).not.toMatch(/error|Unhandled|at .*\.ts:\d+/i);
  expect(caller.events.at(-1)).toEqual({ type: "ended", callId, reason: "bridge-shutdown" });
  const [task] = await db.select().from(agentTasks).where(eq(agentTasks.callId, callId));
  expect(task?.status).not.toBe("active");
  expect(task?.endedAt).not.toBeNull();
  const concluded = await db
    .select({ id: hookDeliveries.id })
    .from(hookDeliveries)
    .where(and(eq(hookDeliveries.callId, callId), eq(hookDeliveries.eventType, "call_concluded")));
  expect(concluded).toHaveLength(1);
}, 30_000);

test("SIGTERM (twice) stops the API cleanly with exit code 0", async () => {
  const port = await freePort();
  const api = spawn("bun", ["src/index.ts"], {
    env: { ...process.env, PORT: String(port), LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  reapWithParent(api.pid!, "KILL");
  let stderr = "";
  api.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve) =>
    api.stdout!.on("data", (d: Buffer) => d.toString().includes('"api listening"') && resolve()),
  );
  expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBeLessThan(500);
  const exited = exitOf(api);
  api.kill("SIGTERM");
  await Bun.sleep(20);
  api.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(stderr).not.toMatch(/error|Unhandled|at .*\.ts:\d+/i);
}, 30_000);
