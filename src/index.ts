// start:api — the management API alone. It listens at once (/healthz); migrations run meanwhile and are
// retried while the database is away, and until they are done the API routes answer 503.
import { loadConfig } from "./config";
import { migrateOnStart } from "./db/migrate";
import { startApi } from "./server";
import { log, logFromThread } from "./log";
import { logUnhandledRejections } from "./unhandled-rejections";

const config = loadConfig();
logUnhandledRejections();
// a log reader that stalls must not stall the API, and the lines of one event-loop turn go as one write
logFromThread();
const migrated = migrateOnStart(config.databaseUrl);
const api = await startApi(config, { started: migrated });
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, async () => {
    log.info("api stopping", { signal });
    await api.stop();
    process.exit(0);
  });
await migrated;
