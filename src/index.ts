// start:api — the management API alone (migrations first, so a fresh database just works).
import { loadConfig } from "./config";
import { migrateDatabase } from "./db/migrate";
import { startApi } from "./server";
import { log } from "./log";

const config = loadConfig();
await migrateDatabase(config.databaseUrl);
const api = await startApi(config);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, async () => {
    log.info("api stopping", { signal });
    await api.stop();
    process.exit(0);
  });
