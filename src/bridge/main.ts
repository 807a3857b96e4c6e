// start:bridge — migrations, then either the call bridge itself (BRIDGE_WORKERS=1, or a worker the
// supervisor started: recovery of calls a crash left open, then listen) or the supervisor of
// BRIDGE_WORKERS worker processes (src/bridge/supervisor.ts).
import { loadConfig } from "../config";
import { migrateOnStart } from "../db/migrate";
import { log, logFromThread, setLogLevel } from "../log";
import { startSipStack } from "../sip/sip-stack";
import { logUnhandledRejections } from "../unhandled-rejections";
import { exitWithSupervisor, superviseBridgeWorkers } from "./supervisor";
import { startBridge } from "./ws-server";

const config = loadConfig();
setLogLevel(config.logLevel);
// the supervisor and each worker: a rejection nobody handled must not end the calls of a worker
logUnhandledRejections();
const worker = config.bridge.workerIndex;
// the supervisor migrates once for all its workers, before any starts; while the database is away
// the migrations are retried (a single bridge serves /healthz meanwhile and refuses calls)
const migrated = worker === null ? migrateOnStart(config.databaseUrl) : undefined;

if (worker === null && config.bridge.workers > 1) {
  await migrated;
  const supervisor = superviseBridgeWorkers(config);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, async () => {
      log.info("bridge supervisor stopping", { signal });
      await supervisor.stop(signal);
      process.exit(0);
    });
} else {
  logFromThread(); // a log reader that stalls must not stall the calls' audio
  const bridge = await startBridge(config, { migrated });
  const sip = config.bridge.sip.enabled ? await startSipStack(config) : null;
  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    log.info("bridge stopping", { reason, worker, calls: bridge.activeCalls + (sip?.activeCalls ?? 0) });
    await Promise.all([bridge.stop(), sip?.stop()]);
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stop(signal));
  if (worker !== null) exitWithSupervisor(() => void stop("supervisor gone"));
}
