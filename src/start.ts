// `bun run start`: the whole service on one machine — migrations, the Temporal dev server (unless
// TEMPORAL_ADDRESS is set), SeaweedFS as the recordings' S3 server (RECORDING_STORE=s3 without
// S3_ENDPOINT), the API in this process, the call bridge and the hook worker as children.
// A child that exits is started again (restart-policy.ts); it never takes the others down. The API
// listens at once; while the database is away at start the migrations are retried and the children
// wait for them.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { loadConfig, localS3Ports } from "./config";
import { migrateOnStart } from "./db/migrate";
import { restartBackoff } from "./lib/restart-policy";
import { startApi } from "./server";
import { dataDir, localSecrets } from "./local-secrets";
import { startLocalS3, type LocalS3 } from "./storage/local-s3";
import { startTemporalDevServer, type DevServer } from "./temporal/dev-server";
import { isTemporalReachable } from "./temporal/health";
import { buildWorker } from "./temporal/worker-build";
import { log } from "./log";
import { logUnhandledRejections } from "./unhandled-rejections";

const root = fileURLToPath(new URL("..", import.meta.url));
const env: Record<string, string | undefined> = { ...process.env, ...localSecrets(process.env) };
const config = loadConfig(env);
logUnhandledRejections();

const migrated = migrateOnStart(config.databaseUrl);

let devServer: DevServer | null = null;
if (!process.env.TEMPORAL_ADDRESS && !(await isTemporalReachable(config))) {
  const [, port] = config.temporal.address.split(":");
  devServer = await startTemporalDevServer({ port: Number(port), uiPort: 8233, dbFilename: `${dataDir}temporal.db` });
  log.info("temporal web ui", { url: devServer.uiUrl });
}

let localS3: LocalS3 | null = null;
const { s3 } = config.recordingStore;
if (s3 && !process.env.S3_ENDPOINT) {
  const { bucket, accessKeyId, secretAccessKey } = s3;
  const ports = localS3Ports(env);
  localS3 = await startLocalS3({ dir: `${dataDir}seaweedfs`, ports, bucket, accessKeyId, secretAccessKey });
}

const children = new Set<ChildProcess>();
const restarts = new Set<ReturnType<typeof setTimeout>>();
let stopping = false;
function child(name: string, command: string, args: string[]) {
  const backoff = restartBackoff();
  const run = () => {
    backoff.started();
    const proc = spawn(command, args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
    children.add(proc);
    proc.once("exit", (code, signal) => {
      children.delete(proc);
      if (stopping) return;
      const { livedMs, delayMs } = backoff.exited();
      log.error("process exited; restarting", { process: name, code, signal, livedMs, delayMs });
      const timer = setTimeout(() => {
        restarts.delete(timer);
        run();
      }, delayMs);
      restarts.add(timer);
    });
  };
  run();
}

const api = await startApi(config, { started: migrated });
const workerScript = await buildWorker(); // plain Node: tsx's loader cost seconds per start
await migrated;
child("worker", "node", [workerScript]);
child("bridge", process.execPath, ["src/bridge/main.ts"]);
log.info("service started", {
  api: `http://127.0.0.1:${config.port}`,
  swagger: `http://127.0.0.1:${config.port}/swagger`,
  console: `http://127.0.0.1:${config.port}/console`,
  bridge: `ws://127.0.0.1:${config.bridge.port}`,
  adminTokenFile: process.env.ADMIN_TOKEN ? undefined : `${dataDir}admin-token`,
});

async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  for (const timer of restarts) clearTimeout(timer);
  const running = [...children];
  for (const proc of running) proc.kill("SIGTERM");
  await Promise.all(running.map((proc) => (proc.exitCode === null ? new Promise((r) => proc.once("exit", r)) : null)));
  await api.stop();
  await devServer?.stop();
  await localS3?.stop();
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop(0));
