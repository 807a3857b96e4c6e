// Starts the workflow of every queued test run: at once on the API's NOTIFY, and every few seconds for
// runs whose NOTIFY was missed (the worker was down or not connected to Temporal). Temporal refuses a
// second start of the same workflow id, so starting again is harmless.
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { eq } from "drizzle-orm";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { TEST_RUNS_CHANNEL, testRuns } from "../src/db/schema";
import { listenAlways } from "../src/db/listen";
import { describeError } from "../src/errors";
import { coalescingRunner } from "../src/lib/coalescing-runner";
import { log } from "../src/log";
import { testRunWorkflowId } from "../workflows/ids";
import type { DispatchTarget } from "./start-delivery-run";

const SWEEP_MS = 5_000;

export function startTestRunStarter(deps: { db: Db; sql: Sql; config: Pick<Config, "temporal"> }) {
  let target: DispatchTarget | null = null;
  const started = new Set<string>();

  const startQueued = async () => {
    const t = target;
    if (!t) return;
    const queued = await deps.db.select({ id: testRuns.id }).from(testRuns).where(eq(testRuns.status, "queued"));
    for (const { id } of queued) {
      if (started.has(id)) continue;
      try {
        await t.client.workflow.start("testRunWorkflow", {
          workflowId: testRunWorkflowId(id),
          taskQueue: deps.config.temporal.taskQueue,
          args: [{ runId: id }],
        });
        log.info("test run started", { runId: id });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
      started.add(id);
    }
  };
  const runner = coalescingRunner(startQueued, (error) =>
    log.warn("test runs not started yet", { error: describeError(error) }),
  );
  const listening = listenAlways(
    deps.sql,
    TEST_RUNS_CHANNEL,
    () => runner.request(),
    () => runner.request(),
  );
  const sweep = setInterval(() => {
    // a run the workflow has claimed is no longer queued: forget it, so the set stays small
    started.clear();
    runner.request();
  }, SWEEP_MS);
  return {
    attach(next: DispatchTarget | null) {
      target = next;
      if (next) runner.request();
    },
    async stop() {
      clearInterval(sweep);
      await listening.unlisten();
      await runner.stop();
    },
  };
}
