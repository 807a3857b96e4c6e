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
// /metrics on the API port wants this bearer (test/metrics/scrape.ts sends it); the SIP tests read
// per-credential series, which carry tenants' ids and are off by default
process.env.METRICS_TOKEN ||= `metrics_${randomBytes(8).toString("hex")}`;
process.env.METRICS_TENANT_LABELS ||= "true";
// every answer checked against its schema (off in production: src/models/common.ts)
process.env.API_CHECK_RESPONSES ||= "true";
// tests send bursts with one token; test/api/token-rate.test.ts sets a rate of its own
process.env.API_TOKEN_RATE ||= "0";
// a spawned start:bridge is one process (tests kill it by pid); test/bridge/workers.test.ts sets more
process.env.BRIDGE_WORKERS ||= "1";

await migrateDatabase(databaseUrl);

afterAll(async () => {
  if (!process.env.KEEP_TEST_DB) await dropDatabase(databaseUrl);
});
