// Starts the workflow of every queued test run: at once on the API's NOTIFY, and every few seconds for
// runs whose NOTIFY was missed (the worker was down or not connected to Temporal). A start meets the
// run's workflow when it already has one, so starting again is harmless; a claimed run is no longer queued.
import { WorkflowIdConflictPolicy } from "@temporalio/client";
import { eq } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { TEST_RUNS_CHANNEL, testRuns } from "../src/db/schema";
import { TEST_RUN_WORKFLOW, testRunWorkflowId } from "../workflows/ids";
import { startNotifiedRelay } from "./notified-relay";
import type { DispatchTarget } from "./start-delivery-run";

const SWEEP_MS = 5_000;

export function startTestRunStarter(deps: { db: Db; sql: Sql; config: Pick<Config, "temporal" | "testRuns"> }) {
  return startNotifiedRelay<DispatchTarget>({
    sql: deps.sql,
    channel: TEST_RUNS_CHANNEL,
    sweepMs: SWEEP_MS,
    failed: "test runs not started yet",
    relay: async ({ client }) => {
      const queued = await deps.db.select({ id: testRuns.id }).from(testRuns).where(eq(testRuns.status, "queued"));
      for (const { id } of queued)
        await client.workflow.start(TEST_RUN_WORKFLOW, {
          workflowId: testRunWorkflowId(id),
          taskQueue: deps.config.temporal.testRunTaskQueue,
          args: [{ runId: id, heartbeatTimeoutMs: deps.config.testRuns.heartbeatTimeoutMs }],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        });
    },
  });
}
