// Starts the Temporal dev server (`temporal server start-dev`) built into .tools/bin by the setup.
// Used by the quickstart and by the test setup; never in production.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { hookSearchAttributeKeys } from "../../workflows/search-attributes";
import { log } from "../log";
import { isTemporalReachable } from "./health";

export const temporalBinary = fileURLToPath(new URL("../../.tools/bin/temporal", import.meta.url));

export type DevServerOptions = {
  port: number;
  uiPort: number;
  /** SQLite file that keeps workflows across restarts; in memory when omitted */
  dbFilename?: string;
  namespace?: string;
  readyTimeoutMs?: number;
  /** more dynamic config values, over the ones every dev server gets */
  dynamicConfig?: Record<string, unknown>;
};

export type DevServer = {
  address: string;
  uiUrl: string;
  pid: number;
  stop(): Promise<void>;
};

const devDynamicConfig = {
  // the timer queue otherwise fires nothing sooner than 1 s after it is set, which hides the
  // millisecond-scaled schedules of tests and benchmarks
  "history.timerProcessorMaxTimeShift": "10ms",
  // one worker per task queue here: no partitions to forward between, and the activity an attempt
  // schedules goes straight back to the worker that scheduled it
  "matching.numTaskqueueReadPartitions": 1,
  "matching.numTaskqueueWritePartitions": 1,
  "system.enableActivityEagerExecution": true,
  // lets the dispatcher's start hand the first workflow task straight to its own worker
  "system.enableEagerWorkflowStart": true,
};

const sqlitePragmas = ["journal_mode=wal", "synchronous=normal"];

// KEYWORD -> Keyword, the spelling the CLI flag wants
const flagType = (type: string) => type.charAt(0) + type.slice(1).toLowerCase();

export async function startTemporalDevServer(options: DevServerOptions): Promise<DevServer> {
  if (!existsSync(temporalBinary)) {
    throw new Error(
      `Temporal CLI not found at ${temporalBinary}: build it with GOBIN=$PWD/.tools/bin go install github.com/temporalio/cli/cmd/temporal@v1.5.1`,
    );
  }
  const namespace = options.namespace ?? "default";
  const args = [
    "server",
    "start-dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(options.port),
    "--ui-port",
    String(options.uiPort),
  ];
  args.push("--log-level", "error", "--namespace", namespace);
  if (options.dbFilename) {
    args.push("--db-filename", options.dbFilename);
    // WAL + NORMAL: as fast as in memory (the default file mode is ~3x slower), and a commit survives a
    // crash of the server process; only an OS crash or power loss may roll back the last commits
    for (const pragma of sqlitePragmas) args.push("--sqlite-pragma", pragma);
  }
  for (const [key, value] of Object.entries({ ...devDynamicConfig, ...options.dynamicConfig }))
    args.push("--dynamic-config-value", `${key}=${JSON.stringify(value)}`);
  for (const key of hookSearchAttributeKeys) args.push("--search-attribute", `${key.name}=${flagType(key.type)}`);

  const child = spawn(temporalBinary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const address = `127.0.0.1:${options.port}`;

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const forced = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(forced);
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  const config = { temporal: { address, namespace, apiKey: null, tls: false } };
  while (!(await isTemporalReachable(config, 1_000))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Temporal dev server did not start on ${address}: ${stderr.trim() || "timed out"}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  log.info("temporal dev server started", { address, uiPort: options.uiPort, pid: child.pid });
  return { address, uiUrl: `http://127.0.0.1:${options.uiPort}`, pid: child.pid!, stop };
}
