// Builds the API's dependencies from a Config and starts listening. Used by start:api, start and tests.
import { sql } from "drizzle-orm";
import type { Config } from "./config";
import { createDb } from "./db/client";
import { createApp } from "./app";
import { createOrganizationGate, createTokenResolver, hearRevocations } from "./services/auth";
import { createSecretBox } from "./crypto/secrets";
import { createOutboundGuard } from "./net/outbound-guard";
import { isTemporalReachable } from "./temporal/health";
import { log, setLogLevel } from "./log";
import { exposeCredentialGauges } from "./metrics/db-gauges";

export async function startApi(config: Config, options: { port?: number } = {}) {
  setLogLevel(config.logLevel);
  const { db, client, close } = createDb(config.databaseUrl);
  const tokens = createTokenResolver(db, config.adminToken);
  const releaseGauges = exposeCredentialGauges(db);
  // Revocations made by other API instances reach this one's token cache here.
  const listener = await hearRevocations(client, tokens);
  const app = createApp({
    db,
    config,
    tokens,
    organizations: createOrganizationGate(db),
    secrets: createSecretBox(config.encryptionKey),
    guard: createOutboundGuard(config.outbound),
    checks: {
      database: () =>
        db.execute(sql`select 1`).then(
          () => true,
          () => false,
        ),
      temporal: () => isTemporalReachable(config),
    },
  });
  app.listen({ port: options.port ?? config.port, hostname: "0.0.0.0" });
  const port = app.server!.port;
  log.info("api listening", { port });
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await app.stop();
      releaseGauges();
      await listener.unlisten();
      await close();
    },
  };
}
