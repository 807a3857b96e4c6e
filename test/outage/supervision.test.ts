// Processes that start while Postgres is away wait for it instead of exiting, and `bun run start`
// starts a child that dies again without taking the others down.
import { afterAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { spawnService, type ServiceProcess } from "../bridge/bridge-process";
import { startTcpProxy, throughProxy } from "../bridge/tcp-proxy";
import { client } from "../helpers/api";
import { ensureTemporal, freePort, taskQueueEnv } from "../helpers/temporal";
import { dialNative } from "../helpers/ws-caller";

const started: ServiceProcess[] = [];
const spawned = (script: string, env: Record<string, string>) => {
  const service = spawnService(script, env);
  started.push(service);
  return service;
};
afterAll(() => {
  for (const { proc } of started) proc.kill("SIGKILL");
});

const pg = new URL(process.env.DATABASE_URL!);
const admin = (url: string) => client(url, process.env.ADMIN_TOKEN);

test("an API and a bridge started while Postgres refuses connections wait for it, then serve", async () => {
  const proxy = await startTcpProxy({ host: pg.hostname, port: Number(pg.port || 5432) });
  proxy.cut();
  const [apiPort, bridgePort] = await Promise.all([freePort(), freePort()]);
  const env = { DATABASE_URL: throughProxy(process.env.DATABASE_URL!, proxy), DATABASE_TIMEOUT_MS: "2000" };
  const api = spawned("src/index.ts", { ...env, PORT: String(apiPort) });
  const bridge = spawned("src/bridge/main.ts", {
    ...env,
    BRIDGE_WORKERS: "1",
    BRIDGE_PORT: String(bridgePort),
    SIP_ENABLED: "false",
    BRIDGE_INSTANCE_ID: `waiting-${process.pid}`,
  });
  await Promise.all([api.waitFor("api listening"), bridge.waitFor("database unreachable: waiting for it")]);
  const apiUrl = `http://127.0.0.1:${apiPort}`;

  expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
  expect((await fetch(`${apiUrl}/readyz`)).status).toBe(503);
  const refused = await admin(apiUrl).get("/api/v1/vendors");
  expect(refused.status).toBe(503);
  expect(refused.body).toMatchObject({ success: false });
  expect(refused.headers.get("retry-after")).toBe("1");
  expect((await fetch(`http://127.0.0.1:${bridgePort}/healthz`)).status).toBe(200);
  const early = await dialNative(`ws://127.0.0.1:${bridgePort}`, { assistantId: crypto.randomUUID(), token: "x" });
  expect((await early.closed).code).toBe(1013);

  proxy.restore();
  await bridge.waitFor("bridge listening", 20_000);
  for (let i = 0; (await admin(apiUrl).get("/api/v1/vendors")).status !== 200; i++) {
    expect(i).toBeLessThan(100);
    await Bun.sleep(100);
  }
  expect(started.filter((s) => s.proc.exitCode !== null)).toEqual([]);
  await proxy.close();
}, 60_000);

test("bun run start starts a child that exits again and keeps the others running", async () => {
  const [port, bridgePort, temporal] = await Promise.all([freePort(), freePort(), ensureTemporal()]);
  const service = spawned("src/start.ts", {
    PORT: String(port),
    BRIDGE_PORT: String(bridgePort),
    BRIDGE_WORKERS: "1",
    SIP_ENABLED: "false",
    TEMPORAL_ADDRESS: temporal.address,
    ...taskQueueEnv(`start-test-${process.pid}`),
    WORKER_METRICS_PORT: "0",
    BRIDGE_INSTANCE_ID: `start-test-${process.pid}`,
  });
  await service.waitFor("service started");
  await service.waitFor("bridge listening");
  // the worker child runs its Node build (src/temporal/worker-build.ts), not the source through tsx
  await service.waitFor("worker started");
  expect(execFileSync("pgrep", ["-P", String(service.proc.pid), "-f", "worker-build/main-"]).toString()).toMatch(/\d/);
  const bridgePid = execFileSync("pgrep", ["-P", String(service.proc.pid), "-f", "src/bridge/main.ts"])
    .toString()
    .trim();
  process.kill(Number(bridgePid), "SIGKILL");

  const restarted = await service.waitFor((l) => l.msg === "process exited; restarting" && l.process === "bridge");
  expect(restarted).toMatchObject({ signal: "SIGKILL" });
  expect([0, 500]).toContain(restarted.delayMs as number);
  await service.waitFor((l) => l.msg === "bridge listening" && service.lines.filter((x) => x.msg === l.msg).length > 1);
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${bridgePort}/healthz`)).status).toBe(200);
  expect(service.proc.exitCode).toBeNull();

  const exited = new Promise((resolve) => service.proc.once("exit", resolve));
  service.proc.kill("SIGTERM");
  expect(await exited).toBe(0);
}, 90_000);

test("bun run start:worker runs the worker's build on Node and stops it on SIGTERM", async () => {
  const temporal = await ensureTemporal();
  const worker = spawned("src/temporal/start-worker.ts", {
    TEMPORAL_ADDRESS: temporal.address,
    ...taskQueueEnv(`start-worker-test-${process.pid}`),
    WORKER_METRICS_PORT: "0",
  });
  await worker.waitFor("worker started");
  const node = execFileSync("pgrep", ["-P", String(worker.proc.pid), "-a"]).toString();
  expect(node).toMatch(/^\d+ node \S*worker-build\/main-[0-9a-f]+\.mjs/);
  const exited = new Promise((resolve) => worker.proc.once("exit", resolve));
  worker.proc.kill("SIGTERM");
  expect(await exited).toBe(0);
  expect(worker.lines.some((l) => l.msg === "worker stopped")).toBe(true);
}, 60_000);
