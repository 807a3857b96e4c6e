import { loadConfig } from "../config";
import { migrateDatabase } from "./migrate";
import { log } from "../log";

const config = loadConfig();
await migrateDatabase(config.databaseUrl);
log.info("migrations applied");
