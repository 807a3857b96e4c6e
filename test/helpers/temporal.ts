// Temporal for tests: one dev server per `bun test` run (or TEMPORAL_ADDRESS when set), and hook
// workers spawned as real Node processes, each on its own task queue.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { createSocket } from "node:dgram";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startTemporalDevServer, type DevServer } from "../../src/temporal/dev-server";
import { buildWorker } from "../../src/temporal/worker-build";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
let shared: Promise<{ address: string }> | null = null;

// ports this process has handed out: the OS may offer a port again at once once its probe is closed,
// and two of our peers (SIPp's -p and -mp, a UAS port kept for a later test) must not both get it
const handedOut = new Set<number>();

/**
 * A port p free on 127.0.0.1 now for both TCP and UDP, and so is p + each of `also` (SIPp's -mp p
 * binds UDP p and p + 2; a two-worker bridge's SIP ports are p and p + 1); none handed out before.
 * The OS offers a port free for TCP listeners; a UDP socket on it (a peer's RTP on a port the OS
 * chose) or, for p + n, an outgoing connection's own port makes the peer fail at its bind: SIPp
 * then exits within milliseconds, a bridge worker exits and is restarted on the same port forever.
 */
export async function freePort(also: number[] = []): Promise<number> {
  for (;;) {
    const port = await probePort();
    const ports = [port, ...also.map((n) => port + n)];
    if (ports.some((p) => handedOut.has(p) || p > 65535)) continue;
    // taken before the check awaits, so no concurrent call gets them (a taken one is simply never offered)
    for (const p of ports) handedOut.add(p);
    if (await portsFree(ports)) return port;
  }
}

/**
 * A free port below the kernel's ephemeral range, for a server that binds it seconds after it was
 * chosen (SeaweedFS's filer waits for its peers): a port from that range can meanwhile become the
 * source port of any outgoing connection on the machine (seen: weed's S3 gRPC port, "address already
 * in use"). Ports below it are never given to outgoing connections.
 */
export async function freeListenPort(): Promise<number> {
  const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
  const low = 10_000;
  for (;;) {
    const port = low + Math.floor(Math.random() * (ephemeralLow! - low));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await portsFree([port])) return port;
  }
}

function probePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** Whether each port binds on 127.0.0.1 for both UDP and TCP now. */
export async function portsFree(ports: number[]): Promise<boolean> {
  const results = await Promise.all(ports.flatMap((port) => [bindsUdp(port), bindsTcp(port)]));
  return results.every(Boolean);
}

function bindsUdp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket("udp4");
    socket.once("error", () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, "127.0.0.1", () => socket.close(() => resolve(true)));
  });
}

function bindsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * bun test fires no exit event and scopes afterAll to one file, so a process meant to live for the
 * whole run is reaped by a tiny watchdog once this test process is gone.
 */
export function reapWithParent(pid: number, signal = "TERM", removeDir?: string) {
  const remove = removeDir ? `; sleep 2; rm -rf '${removeDir}'` : "";
  // `tail --pid` waits for the parent without forking (a `kill -0; sleep` loop forked twice a second
  // per watched process: with a hundred processes watched, a third of the machine went to forks)
  const script = `tail --pid=${process.pid} -f /dev/null; kill -${signal} ${pid} 2>/dev/null${remove}`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}

/** Starts a dev server on free ports, reaped when the test process exits. */
export async function startDevServer(options: { dbFilename?: string; port?: number } = {}): Promise<DevServer> {
  const server = await startTemporalDevServer({
    port: options.port ?? (await freePort()),
    uiPort: await freePort(),
    dbFilename: options.dbFilename,
  });
  reapWithParent(server.pid);
  return server;
}

/** The Temporal server shared by every test file of this run: on a database file, as `make start` runs it. */
export function ensureTemporal(): Promise<{ address: string }> {
  if (process.env.TEMPORAL_ADDRESS) return Promise.resolve({ address: process.env.TEMPORAL_ADDRESS });
  shared ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "temporal-test-"));
    const server = await startTemporalDevServer({
      port: await freePort(),
      uiPort: await freePort(),
      dbFilename: join(dir, "temporal.db"),
      // a stopped (SIGSTOP) worker's open polls keep taking tasks it never runs until they expire: the
      // default minute made a stalled-worker test wait out three 10 s workflow task time-outs
      dynamicConfig: { "matching.longPollExpirationInterval": "5s" },
    });
    reapWithParent(server.pid, "TERM", dir);
    return { address: server.address };
  })();
  return shared;
}

/** The environment naming a worker's three task queues after `taskQueue`: tests sharing a server never share a queue. */
export const taskQueueEnv = (taskQueue: string) => ({
  HOOK_TASK_QUEUE: taskQueue,
  TEST_RUN_TASK_QUEUE: `${taskQueue}-test-runs`,
  CAMPAIGN_TASK_QUEUE: `${taskQueue}-campaigns`,
});

export type WorkerOptions = {
  address: string;
  backoffBaseMs: number;
  timeoutMs?: number;
  taskQueue?: string;
  env?: Record<string, string>;
};

export type TestWorker = {
  taskQueue: string;
  /** log lines the worker printed, parsed */
  lines: Record<string, unknown>[];
  /** the last 4,000 characters the current process wrote to stderr */
  stderr(): string;
  /** sends `signal` (each of them, in order, when several) and resolves with the exit code once it exited */
  kill(...signals: NodeJS.Signals[]): Promise<number | null>;
  restart(): Promise<void>;
  /** the current process has not exited */
  running(): boolean;
  /** the current process's id (benches read its CPU time) */
  pid(): number | undefined;
};

// workers/main.ts built once per `bun test` run (~20 ms): `node --import tsx workers/main.ts` took 1.98 s to
// "worker started", the built file 1.25 s (2-core machine, load ~3)
let built: Promise<string> | null = null;

/** Spawns the worker (workers/main.ts, built: src/temporal/worker-build.ts) on Node and resolves once its Temporal worker polls. */
export async function startWorker(options: WorkerOptions): Promise<TestWorker> {
  built ??= buildWorker();
  const script = await built;
  const taskQueue = options.taskQueue ?? `hooks-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: options.address,
    ...taskQueueEnv(taskQueue),
    HOOK_BACKOFF_BASE_MS: String(options.backoffBaseMs),
    HOOK_TIMEOUT_MS: String(options.timeoutMs ?? 2_000),
    LOG_LEVEL: "info",
    // a free port per worker: several run at once in the tests
    WORKER_METRICS_PORT: "0",
    // a killed worker's workflows go on elsewhere after 2 s, not the SDK's 10 s
    TEMPORAL_STICKY_QUEUE_TIMEOUT_MS: "2000",
    ...options.env,
  };
  const lines: Record<string, unknown>[] = [];
  let child: ChildProcess | null = null;
  let stderr = "";

  const spawnOnce = () =>
    new Promise<void>((resolve, reject) => {
      // BENCH_PROFILE=workers/main (benches): the worker writes a V8 CPU profile to BENCH_PROFILE_DIR on exit
      const profile = process.env.BENCH_PROFILE && "workers/main.ts".includes(process.env.BENCH_PROFILE);
      const flags = profile
        ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR ?? "bench-profiles"}`]
        : [];
      const proc = spawn("node", [...flags, script], {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = proc;
      reapWithParent(proc.pid!, "KILL");
      let buffer = "";
      stderr = "";
      proc.stdout!.on("data", (d: Buffer) => {
        buffer += d.toString();
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          try {
            const parsed = JSON.parse(line) as Record<string, unknown>;
            lines.push(parsed);
            if (parsed.msg === "worker started") resolve();
          } catch {
            // not ours (e.g. a library banner): ignore
          }
        }
      });
      proc.stderr!.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      proc.once("exit", (code) => reject(new Error(`worker exited (${code}) before starting: ${stderr}`)));
    });

  const kill = async (...signals: NodeJS.Signals[]) => {
    const proc = child as ChildProcess | null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return proc?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
    for (const signal of signals.length ? signals : (["SIGTERM"] as const)) proc.kill(signal);
    return exited;
  };

  await spawnOnce();
  const running = () => {
    const proc = child as ChildProcess | null;
    return proc !== null && proc.exitCode === null && proc.signalCode === null;
  };
  const pid = () => (child as ChildProcess | null)?.pid;
  return { taskQueue, lines, stderr: () => stderr, kill, restart: spawnOnce, running, pid };
}
