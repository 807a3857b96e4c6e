// The worker process (on Node, from its build: `bun run start:worker`): the Temporal workers of hook
// deliveries, test runs and campaigns (one per task queue: queue-workers.ts) plus the dispatcher that
// makes first attempts and starts the workflows. Survives Temporal restarts by reconnecting.
import { DefaultLogger, NativeConnection, Runtime, type Worker } from "@temporalio/worker";
import { loadConfig } from "../src/config";
import { createSecretBox } from "../src/crypto/secrets";
import { createDb } from "../src/db/client";
import { migrateOnStart } from "../src/db/migrate";
import { inFlight } from "../src/lib/in-flight";
import { log, setLogLevel } from "../src/log";
import { logUnhandledRejections } from "../src/unhandled-rejections";
import { exposeHookDeliveryStates } from "../src/metrics/db-gauges";
import { startMetricsServer } from "../src/metrics/serve";
import { startIdempotencyKeyCleanup } from "../src/services/idempotency";
import { createActivities } from "./activities";
import { startCampaignCallEnds } from "./campaign-call-ends";
import { startCampaignSignals } from "./campaign-signals";
import { startCampaignSweep } from "./campaign-sweep";
import { startDispatcher } from "./dispatcher";
import { startReconciler } from "./reconciler";
import { createTestRunActivities } from "./activities/test-runs";
import { startTestRunStarter } from "./test-run-starter";
import { loadWorkflowBundle } from "./workflow-bundle";
import { createQueueWorkers, runWorkers } from "./queue-workers";
import { Client } from "@temporalio/client";
import { temporalConnectionOptions } from "../src/temporal/connection-options";
import { ensureSearchAttributes } from "../src/temporal/search-attributes";

const RECONNECT_DELAY_MS = 1_000;
const config = loadConfig();
setLogLevel(config.logLevel);
logUnhandledRejections();

// Temporal's own log lines go through ours (warnings and up: its info level is chatty)
Runtime.install({
  shutdownSignals: [],
  logger: new DefaultLogger("WARN", (entry) =>
    log[entry.level === "ERROR" ? "error" : "warn"](`temporal: ${entry.message}`, { ...entry.meta }),
  ),
});

const {
  db,
  client: sql,
  close: closeDb,
} = createDb(config.databaseUrl, {
  max: 20,
  timeoutMs: config.databaseTimeoutMs,
  prepare: config.databasePrepare,
  listenUrl: config.databaseListenUrl ?? undefined,
  readModel: config.readModel,
  name: "worker",
});
const attempts = inFlight();
const activities = {
  hooks: createActivities({ db, secretBox: createSecretBox(config.encryptionKey), config }, attempts),
  testRuns: createTestRunActivities({ db, config }),
};
// up before anything waits for the database, so that an outage at start is visible on /metrics
const metrics = await startMetricsServer(config.workerMetricsPort);
log.info("worker metrics listening", { port: metrics.port });
// like every process, it migrates (or waits for the one migrating) before it touches a table
const [workflowBundle] = await Promise.all([loadWorkflowBundle(), migrateOnStart(config.databaseUrl)]);
const dispatcher = await startDispatcher({ db, sql, config, deliverAttempt: activities.hooks.deliverAttempt });
const reconciler = startReconciler({ db, config });
const testRuns = startTestRunStarter({ db, sql, config });
const campaignSweep = startCampaignSweep(db, config);
const campaignCallEnds = startCampaignCallEnds(sql);
const campaignSignals = startCampaignSignals({ db, sql, config });
exposeHookDeliveryStates(db);
const stopKeyCleanup = startIdempotencyKeyCleanup(db);

let stopping = false;
let workers: Worker[] = [];
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // a second signal, or one while the worker is not yet running or already draining, has nothing to add
    if (stopping) return;
    log.info("worker stopping", { signal });
    stopping = true;
    // no new claims; attempts in flight finish and are recorded, and the dispatcher starts the workflows
    // of its first attempts, before the worker stops polling
    // (it does not wait for local activities itself: their workflow tasks would time out and re-send)
    void (async () => {
      await Promise.all([dispatcher.stop(), reconciler.stop(), testRuns.stop()]);
      await attempts.idle(config.hooks.timeoutMs + 5_000);
      for (const worker of workers) if (worker.getState() === "RUNNING") worker.shutdown();
    })();
  });
}

while (!stopping) {
  let connection: NativeConnection | null = null;
  try {
    connection = await NativeConnection.connect(temporalConnectionOptions(config));
    workers = await createQueueWorkers({ connection, config, workflowBundle, activities });
    log.info("worker started", {
      taskQueues: [config.temporal.taskQueue, config.temporal.testRunTaskQueue, config.temporal.campaignTaskQueue],
      temporal: config.temporal.address,
      backoffBaseMs: config.hooks.backoffBaseMs,
      timeoutMs: config.hooks.timeoutMs,
    });
    // eager starts are handed to a worker registered on this connection, so attach after creating it
    const searchAttributes = await ensureSearchAttributes(connection, config.temporal.namespace);
    if (stopping) break;
    const running = runWorkers(workers);
    const target = { client: new Client({ connection, namespace: config.temporal.namespace }), searchAttributes };
    dispatcher.attach(target);
    reconciler.attach(target);
    testRuns.attach(target);
    campaignSweep.attach(target.client);
    campaignCallEnds.attach(target.client);
    campaignSignals.attach(target.client);
    await running;
  } catch (err) {
    log.warn("worker lost temporal, reconnecting", { error: (err as Error).message });
    await new Promise((r) => setTimeout(r, RECONNECT_DELAY_MS));
  } finally {
    dispatcher.attach(null);
    reconciler.attach(null);
    testRuns.attach(null);
    campaignSweep.attach(null);
    campaignCallEnds.attach(null);
    campaignSignals.attach(null);
    workers = [];
    await connection?.close().catch(() => {});
  }
}

await Promise.all([
  dispatcher.stop(),
  reconciler.stop(),
  testRuns.stop(),
  campaignCallEnds.stop(),
  campaignSignals.stop(),
]);
await metrics.stop();
stopKeyCleanup();
campaignSweep.stop();
await closeDb();
log.info("worker stopped");
process.exit(0);
