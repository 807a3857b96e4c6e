// Runs once before the whole suite: a throw-away database per run, secrets for the run, quiet logs.
import { afterAll } from "bun:test";
import { randomBytes } from "node:crypto";
import { loadConfig } from "../src/config";
import { dropDatabase, migrateDatabase } from "../src/db/migrate";
import { setLogLevel } from "../src/log";

const server = process.env.TEST_DATABASE_SERVER ?? "postgres://postgres@127.0.0.1:5432";
const databaseUrl = `${server}/vas_test_${Date.now()}_${process.pid}`;

process.env.DATABASE_URL = databaseUrl;
process.env.ADMIN_TOKEN ||= `admin_${randomBytes(16).toString("hex")}`;
process.env.ENCRYPTION_KEY ||= randomBytes(32).toString("hex");
process.env.LOG_LEVEL ||= "warn";
setLogLevel(loadConfig().logLevel);
// the receivers tests start listen on loopback, which the outbound guard refuses by default
process.env.OUTBOUND_ALLOW_CIDRS ||= "127.0.0.0/8";
// a spawned start:bridge is one process (tests kill it by pid); test/bridge/workers.test.ts sets more
process.env.BRIDGE_WORKERS ||= "1";

await migrateDatabase(databaseUrl);

afterAll(async () => {
  if (!process.env.KEEP_TEST_DB) await dropDatabase(databaseUrl);
});
