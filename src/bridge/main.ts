// start:bridge — the call bridge alone: migrations, recovery of calls a crash left open, then listen.
import { loadConfig } from "../config";
import { migrateDatabase } from "../db/migrate";
import { log, setLogLevel } from "../log";
import { startSipStack } from "../sip/sip-stack";
import { startBridge } from "./ws-server";

const config = loadConfig();
setLogLevel(config.logLevel);
await migrateDatabase(config.databaseUrl);
const bridge = await startBridge(config);
const sip = config.bridge.sip.enabled ? await startSipStack(config) : null;
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, async () => {
    log.info("bridge stopping", { signal, calls: bridge.activeCalls + (sip?.activeCalls ?? 0) });
    await Promise.all([bridge.stop(), sip?.stop()]);
    process.exit(0);
  });
