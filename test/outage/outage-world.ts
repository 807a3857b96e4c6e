// Every process of the service (the API, two bridges, the hook worker) as real processes, each reaching
// Postgres through one TCP proxy that the test cuts (connections reset, then refused) or black-holes
// (silence), and the outage as a user sees it: API answers, /readyz, a new call, live calls' audio,
// calls ending during the outage, and what comes back after. Shared by test/outage and bench/outage.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sine } from "../audio/signals";
import { startServiceProcess, startBridgeProcess } from "../bridge/bridge-process";
import { createAssistant } from "../bridge/fixtures";
import { startTcpProxy, throughProxy, type TcpProxy } from "../bridge/tcp-proxy";
import { startFakeChatServer } from "../fakes/chat-completions-server";
import { startFakeRealtimeHub, type FakeRealtimeServer } from "../fakes/openai-realtime-server";
import { client, createTenant, type Tenant } from "../helpers/api";
import { startReceiver, type Receiver } from "../helpers/receiver";
import { ensureTemporal, freePort, startWorker, type TestWorker } from "../helpers/temporal";
import { dialNative, type WsCaller } from "../helpers/ws-caller";

export type OutageSettings = { databaseTimeoutMs: number; heartbeatMs: number; heartbeatTtlMs: number };
export type Variant = "refused" | "black-holed";

export type OutageWorld = {
  proxy: TcpProxy;
  apiUrl: string;
  bridgeUrls: string[];
  tenant: Tenant;
  hooks: Receiver;
  assistantId: string;
  settings: OutageSettings;
  /** a call on bridge `index`, answered (`ready`) and streaming the caller's side */
  dial(index: number): Promise<{ caller: WsCaller; callId: string }>;
  /** the processes that exited since the start (none should) */
  exited(): string[];
  stop(): Promise<void>;
};

const now = () => performance.now();

export async function startOutageWorld(settings: OutageSettings): Promise<OutageWorld> {
  const target = new URL(process.env.DATABASE_URL!);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const [hooks, chat, realtime, temporal, apiPort, ...bridgePorts] = await Promise.all([
    startReceiver(),
    startFakeChatServer(),
    startFakeRealtimeHub(),
    ensureTemporal(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const env = {
    DATABASE_URL: throughProxy(process.env.DATABASE_URL!, proxy),
    DATABASE_TIMEOUT_MS: String(settings.databaseTimeoutMs),
    BRIDGE_HEARTBEAT_MS: String(settings.heartbeatMs),
    BRIDGE_HEARTBEAT_TTL_MS: String(settings.heartbeatTtlMs),
    OPENAI_REALTIME_URL: realtime.url,
    OPENAI_BASE_URL: chat.baseUrl,
    SIP_ENABLED: "false",
  };
  const processes = new Map<string, ChildProcess>();
  const exited: string[] = [];
  const watch = (name: string, proc: ChildProcess) => {
    processes.set(name, proc);
    proc.once("exit", (code, signal) => exited.push(`${name} (${code ?? signal})`));
  };
  watch("api", await startServiceProcess("src/index.ts", "api listening", { ...env, PORT: String(apiPort) }));
  for (const [i, port] of bridgePorts.entries()) {
    const proc = await startBridgeProcess({
      ...env,
      BRIDGE_PORT: String(port),
      BRIDGE_INSTANCE_ID: `outage-${i}-${process.pid}`,
      BRIDGE_DATA_DIR: mkdtempSync(join(tmpdir(), "outage-bridge-")),
    });
    watch(`bridge ${i}`, proc);
  }
  const worker: TestWorker = await startWorker({ address: temporal.address, backoffBaseMs: 1_000, env });
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  await untilOk(() => client(apiUrl, process.env.ADMIN_TOKEN).get("/api/v1/vendors"), 30_000);
  const tenant = await createTenant(apiUrl, "outage");
  const fakes: FakeRealtimeServer[] = [];
  // the agent talks for a minute, in real time: its audio flows all through an outage
  const { id: assistantId } = await createAssistant(
    { realtime, fakes, tenant, hooks },
    {
      greeting: "Hello.",
      fake: { realtime: true, onInstructions: () => ({ text: "Hello.", audio: sine(440, 24_000, 60) }) },
    },
  );
  const bridgeUrls = bridgePorts.map((port) => `ws://127.0.0.1:${port}`);

  return {
    proxy,
    apiUrl,
    bridgeUrls,
    tenant,
    hooks,
    assistantId,
    settings,
    async dial(index) {
      const caller = await dialNative(bridgeUrls[index]!, {
        assistantId,
        sampleRate: "16000",
        token: tenant.orgToken,
      });
      const { callId } = await caller.waitFor((e) => e.type === "ready");
      caller.startStreaming();
      await caller.until(() => caller.frames.length > 0, 10_000, "agent audio", 20);
      return { caller, callId };
    },
    exited: () => [...exited, ...(worker.running() ? [] : [`worker: ${worker.stderr().slice(-500)}`])],
    async stop() {
      if (process.env.SERVICE_LOGS) for (const line of worker.lines) console.error(JSON.stringify(line));
      for (const proc of processes.values()) proc.kill("SIGKILL");
      await worker.kill("SIGKILL");
      await Promise.all([proxy.close(), hooks.close(), chat.close(), realtime.close()]);
    },
  };
}

export type OutageReport = {
  variant: Variant;
  outageMs: number;
  /** every API answer during the outage: its status and how long it took */
  /** at: when the read was sent, ms after the outage began */
  apiAnswers: { status: number; ms: number; success: unknown; at: number }[];
  readyz: { status: number; ms: number };
  /** a websocket call dialled during the outage: the close code it got and when */
  newCall: { code: number; ms: number };
  /** from the database's return to the first 200 of the API */
  firstOkAfterReturnMs: number;
  /** the longest wait for agent audio of the calls live through the outage */
  longestAudioGapMs: number;
  /**
   * call_concluded of the calls ended during the outage: how many different events arrived for each
   * (delivery is at-least-once: an attempt whose outcome could not be recorded is sent again, the same
   * body, which counts once), and at what rate after the return
   */
  concludedCounts: number[];
  /** requests that repeated an event already received (the same delivery sent again) */
  concludedResent: number;
  hooksPerSecond: number;
  /** the tasks of the calls live through the outage, read a TTL and more after the return */
  liveStatuses: string[];
};

/**
 * One outage of `outageMs`: `live` calls per bridge through it, `ending` calls per bridge hung up
 * during it, a request to the API every 200 ms, /readyz and a new call once each.
 */
export async function runOutage(
  world: OutageWorld,
  variant: Variant,
  { outageMs, ending, live: livePerBridge = 1 }: { outageMs: number; ending: number; live?: number },
): Promise<OutageReport> {
  const perBridge = (n: number) =>
    Promise.all(world.bridgeUrls.flatMap((_, i) => Array.from({ length: n }, () => world.dial(i))));
  const live = await perBridge(livePerBridge);
  const enders = await perBridge(ending);
  for (const { caller } of live) caller.watchGaps();
  const { org, P } = world.tenant;
  const read = async () => {
    const started = now();
    const reply = await org.get(`${P}/assistants/${world.assistantId}`);
    return { status: reply.status, ms: now() - started, success: reply.body?.success, at: started - outageStart };
  };

  const outageStart = now();
  if (variant === "refused") world.proxy.cut();
  else world.proxy.blackhole();

  const apiAnswers: OutageReport["apiAnswers"] = [];
  let returned = false;
  const reads = (async () => {
    while (!returned) {
      apiAnswers.push(await read());
      await Bun.sleep(200);
    }
  })();
  const readyz = (async () => {
    const started = now();
    const res = await fetch(`${world.apiUrl}/readyz`);
    await res.arrayBuffer();
    return { status: res.status, ms: now() - started };
  })();
  const newCall = (async () => {
    const started = now();
    const caller = await dialNative(world.bridgeUrls[1]!, {
      assistantId: world.assistantId,
      sampleRate: "16000",
      token: world.tenant.orgToken,
    });
    const closed = await caller.closed;
    return { code: closed.code, ms: now() - started };
  })();
  await Bun.sleep(300);
  for (const { caller } of enders) caller.sendJson({ type: "hangup" });

  await Bun.sleep(Math.max(0, outageStart + outageMs - now()));
  const longestAudioGapMs = Math.max(...live.map(({ caller }) => caller.longestGapMs()));
  world.proxy.restore();
  const back = now();
  returned = true;
  await reads;
  const ok = await untilOk(read, 30_000);
  const firstOkAfterReturnMs = ok.at - back;

  // every call ended during the outage gets its call_concluded, one event (sent again at most)
  const concluded = (callId: string) =>
    world.hooks.requests.filter((r) => {
      const body = JSON.parse(r.body.toString());
      return body.callId === callId && body.type === "call_concluded";
    });
  const arrivals: number[] = [];
  for (const { callId } of enders) {
    await waitUntil(() => concluded(callId).length > 0, 30_000, `call_concluded of ${callId}`);
    arrivals.push(now());
  }
  const hooksPerSecond = enders.length / Math.max(0.001, (Math.max(...arrivals) - back) / 1000);

  // the live calls' bridges must not have taken each other for dead: a TTL and two beats later they are open
  await Bun.sleep(world.settings.heartbeatTtlMs + 3 * world.settings.heartbeatMs);
  const tasks = (await org.get(`${P}/agent-tasks?size=100`)).body.data as { callId: string; status: string }[];
  const liveStatuses = live.map(({ callId }) => tasks.find((t) => t.callId === callId)?.status ?? "missing");
  for (const { caller } of live) caller.sendJson({ type: "hangup" });
  await Promise.all(live.map(({ caller }) => caller.closed));

  // a delivery sent again carries the same body: distinct bodies are distinct events
  const perEnder = enders.map(({ callId }) => {
    const requests = concluded(callId);
    return { requests: requests.length, events: new Set(requests.map((r) => r.body.toString())).size };
  });
  return {
    variant,
    outageMs,
    apiAnswers,
    readyz: await readyz,
    newCall: await newCall,
    firstOkAfterReturnMs,
    longestAudioGapMs,
    concludedCounts: perEnder.map((c) => c.events),
    concludedResent: perEnder.reduce((n, c) => n + c.requests - c.events, 0),
    hooksPerSecond,
    liveStatuses,
  };
}

async function untilOk<T extends { status: number }>(attempt: () => Promise<T>, timeoutMs: number) {
  const deadline = now() + timeoutMs;
  for (;;) {
    const reply = await attempt().catch(() => null);
    if (reply?.status === 200) return { reply, at: now() };
    if (now() > deadline) throw new Error(`no 200 within ${timeoutMs} ms (last: ${reply?.status})`);
    await Bun.sleep(100);
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = now() + timeoutMs;
  while (!check()) {
    if (now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}
