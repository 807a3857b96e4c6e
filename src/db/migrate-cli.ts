import { loadConfig } from "../config";
import { migrateDatabase } from "./migrate";
import { log } from "../log";

const config = loadConfig();
const applied = await migrateDatabase(config.databaseUrl);
log.info("migrations applied", { applied });
