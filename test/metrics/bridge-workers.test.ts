// `start:bridge` with BRIDGE_WORKERS=2: the workers share the port, so a scrape lands on either one;
// every scrape must still report both workers, and a call on one of them shows in all scrapes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { freePort, reapWithParent } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";
import { createAssistant, startWorld, type World } from "../bridge/fixtures";
import { scrape, total } from "./scrape";

let world: World;
let port: number;
let bridge: ChildProcess;

beforeAll(async () => {
  [world, port] = await Promise.all([startWorld(), freePort()]);
  const env = {
    ...process.env,
    LOG_LEVEL: "info",
    BRIDGE_WORKERS: "2",
    BRIDGE_PORT: String(port),
    SIP_ENABLED: "false",
    OPENAI_REALTIME_URL: world.realtime.url,
    OPENAI_BASE_URL: world.chat.baseUrl,
    BRIDGE_INSTANCE_ID: `metrics-workers-${process.pid}`,
  };
  bridge = spawn("bun", ["src/bridge/main.ts"], { env, stdio: ["ignore", "pipe", "inherit"] });
  reapWithParent(bridge.pid!, "KILL");
  let listening = 0;
  await new Promise<void>((resolve, reject) => {
    bridge.stdout!.on("data", (d: Buffer) => {
      listening += d.toString().split('"bridge listening"').length - 1;
      if (listening === 2) resolve();
    });
    bridge.once("exit", (code) => reject(new Error(`bridge exited (${code})`)));
  });
}, 60_000);
afterAll(async () => {
  if (bridge?.exitCode === null) {
    const exited = new Promise((resolve) => bridge.once("exit", resolve));
    bridge.kill("SIGTERM");
    await exited;
  }
  await world?.stop();
});

const metrics = () => scrape(`http://127.0.0.1:${port}/metrics`);

test("every scrape sums both workers, whichever one answers", async () => {
  const assistant = await createAssistant(world, { greeting: "Hello." });
  const caller = await dialNative(`ws://127.0.0.1:${port}`, {
    assistantId: assistant.id,
    sampleRate: "16000",
    token: world.tenant.orgToken,
  });
  await caller.waitFor((e) => e.type === "ready");
  caller.startStreaming();
  await caller.waitForAgentSaid("Hello.");
  for (let i = 0; i < 6; i++) {
    const samples = await metrics();
    expect(total(samples, "vas_bridge_processes")).toBe(2);
    expect(total(samples, "vas_calls_active", { transport: "websocket" })).toBe(1);
    expect(total(samples, "vas_call_setup_seconds_count", { transport: "websocket" })).toBe(1);
  }
  caller.sendJson({ type: "hangup" });
  await caller.closed;
}, 60_000);
