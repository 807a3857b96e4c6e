// start:bridge — the call bridge alone: migrations, recovery of calls a crash left open, then listen.
import { loadConfig } from "../config";
import { migrateDatabase } from "../db/migrate";
import { log, setLogLevel } from "../log";
import { startBridge } from "./ws-server";

const config = loadConfig();
setLogLevel(config.logLevel);
await migrateDatabase(config.databaseUrl);
const bridge = await startBridge(config);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, async () => {
    log.info("bridge stopping", { signal, calls: bridge.activeCalls });
    await bridge.stop();
    process.exit(0);
  });
