// Builds the API's dependencies from a Config and starts listening. Used by start:api, start and tests.
import { sql } from "drizzle-orm";
import { knowledgeSearchFor } from "./services/knowledge/knowledge-search";
import type { Config } from "./config";
import { createDb } from "./db/client";
import { createApp } from "./app";
import { createOrganizationGate, createTokenResolver } from "./services/auth";
import { createSecretBox } from "./crypto/secrets";
import { within } from "./lib/within";
import { createOutboundGuard } from "./net/outbound-guard";
import { isTemporalReachable } from "./temporal/health";
import { log, setLogLevel } from "./log";
import { exposeCredentialGauges } from "./metrics/db-gauges";
import { useTenantLabels } from "./metrics/metrics";
import { startMetricsServer } from "./metrics/serve";
import { startCallRecordCleanup } from "./calls/call-records";
import { recordingObjectsOf } from "./storage/recording-objects";

/** /readyz answers within this, whatever the database does (an orchestrator's probe times out at 1 s). */
const readyCheckMs = 900;

export type ApiOptions = {
  port?: number;
  /** settles once the process's start (migrations) is done; until then API routes answer 503 */
  started?: Promise<unknown>;
};

export async function startApi(config: Config, options: ApiOptions = {}) {
  setLogLevel(config.logLevel);
  const { db, availability, close } = createDb(config.databaseUrl, {
    timeoutMs: config.databaseTimeoutMs,
    prepare: config.databasePrepare,
    listenUrl: config.databaseListenUrl ?? undefined,
    readModel: config.readModel,
    name: "api",
  });
  const tokens = createTokenResolver(db, config.adminToken, config.apiTokenRate);
  useTenantLabels(config.metrics.tenantLabels);
  // the per-credential gauges are labelled with credential ids: tenants' ids, exported only when asked for
  const releaseGauges = config.metrics.tenantLabels ? exposeCredentialGauges(db) : () => {};
  const metricsServer = config.metrics.port === null ? null : await startMetricsServer(config.metrics.port);
  if (metricsServer) log.info("api metrics listening", { port: metricsServer.port });
  let started = options.started === undefined;
  let stopCleanup = () => {};
  void (options.started ?? Promise.resolve()).then(() => {
    started = true;
    // retention runs here, in a Bun process: its recordings in the bucket are deleted with Bun's S3 client
    stopCleanup = startCallRecordCleanup(db, config.recordingRetentionDays, recordingObjectsOf(config));
    // says what searches use; embeds the chunks stored before embeddings were configured or while
    // the provider was down (the API does, a bridge only searches)
    void knowledgeSearchFor(db, config.knowledge).indexNew();
  });
  const app = createApp({
    db,
    config,
    tokens,
    organizations: createOrganizationGate(db),
    secrets: createSecretBox(config.encryptionKey),
    guard: createOutboundGuard(config.outbound),
    started: () => started,
    checks: {
      database: async () =>
        !availability.isDown &&
        within(db.execute(sql`select 1`), readyCheckMs, "readiness").then(
          () => true,
          () => false,
        ),
      // a new connection and a health check, each with the deadline: bounded together as well
      temporal: () => within(isTemporalReachable(config, readyCheckMs), readyCheckMs, "readiness").catch(() => false),
    },
  });
  app.listen({ port: options.port ?? config.port, hostname: "0.0.0.0" });
  const port = app.server!.port;
  log.info("api listening", { port });
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    metricsPort: metricsServer?.port ?? null,
    async stop() {
      stopCleanup();
      await app.stop();
      await metricsServer?.stop();
      releaseGauges();
      await close();
    },
  };
}
