// One test run: claim it, run its results at most `concurrency` at once, close it with its verdict.
// The workflow holds ids only; the database holds the scenarios and decides (a canceled run starts
// nothing more). A result whose worker died is retried by Temporal after its heartbeat stops, and the
// activity then places its call again.
// Deterministic code only: no Node, no Bun, no clock, no database here.
import { ActivityFailure, proxyActivities } from "@temporalio/workflow";
import type { TestRunActivities } from "../workers/activities/test-runs";

/** heartbeatTimeoutMs: TEST_RUN_HEARTBEAT_TIMEOUT_MS when the run was started (30 s for runs started before it existed). */
export type TestRunInput = { runId: string; heartbeatTimeoutMs?: number };

const { startTestRun, failTestResult, finishTestRun } = proxyActivities<TestRunActivities>({
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
});
const resultActivities = (heartbeatTimeoutMs: number) =>
  proxyActivities<TestRunActivities>({
    // a scenario lasts at most 900 s, then the conclusion and the judge
    startToCloseTimeout: "20 minutes",
    // the activity beats a third of this apart while its call runs: a dead worker is noticed within it
    heartbeatTimeout: heartbeatTimeoutMs,
    retry: { initialInterval: "2s", maximumAttempts: 3 },
  });

/** Temporal's ActivityFailure only says "Activity task failed": its cause says what did (an error, a time-out). */
const whatFailed = (error: Error) =>
  error instanceof ActivityFailure && error.cause ? error.cause.message : error.message;

export async function testRunWorkflow({ runId, heartbeatTimeoutMs = 30_000 }: TestRunInput): Promise<void> {
  const { runTestResult } = resultActivities(heartbeatTimeoutMs);
  const plan = await startTestRun(runId);
  if (!plan) return;
  const queue = [...plan.resultIds];
  const lane = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      // a result whose activity gave up is an error: the run still finishes
      const resultId = id;
      await runTestResult(resultId).catch((error: Error) => failTestResult(resultId, whatFailed(error)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, queue.length) }, lane));
  await finishTestRun(runId);
}
