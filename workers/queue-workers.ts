// The process's Temporal workers, one per task queue, each with slots of its own: hook deliveries,
// test runs (a result's call holds an activity slot for minutes) and campaigns (a step holds a workflow
// task slot while its local activity runs). Busy test runs or campaigns wait in their own queue and
// never take a slot a hook delivery needs. All three share the process's connection and workflow bundle.
import { type NativeConnection, Worker, type WorkflowBundleOption } from "@temporalio/worker";
import type { Config } from "../src/config";
import type { HookActivities } from "./activities";
import type { TestRunActivities } from "./activities/test-runs";

export type QueueWorkerDeps = {
  connection: NativeConnection;
  config: Pick<Config, "temporal" | "testRuns" | "campaigns">;
  workflowBundle: WorkflowBundleOption;
  activities: { hooks: HookActivities; testRuns: TestRunActivities };
};

export async function createQueueWorkers({ connection, config, workflowBundle, activities }: QueueWorkerDeps) {
  const { namespace } = config.temporal;
  const stickyQueueScheduleToStartTimeout = config.temporal.stickyQueueTimeoutMs;
  // created at once: each loads the workflow bundle on a thread of its own (~0.2 s of CPU)
  return Promise.all([
    Worker.create({
      connection,
      namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundle,
      stickyQueueScheduleToStartTimeout,
      // every activity: test runs and campaigns started before they had queues of their own finish here
      // (a campaign moves to its queue at its next step: workflows/campaign.ts)
      activities: { ...activities.hooks, ...activities.testRuns },
      // attempts mostly wait on the network: more slots than the CPU-bound defaults (bench/hooks)
      maxConcurrentActivityTaskExecutions: 200,
      maxConcurrentActivityTaskPolls: 20,
      // a workflow task holds its attempt (a local activity): taking more than the process can finish
      // within the 10 s workflow task time-out would make Temporal re-run attempts
      maxConcurrentWorkflowTaskExecutions: 50,
      maxConcurrentWorkflowTaskPolls: 20,
      maxConcurrentLocalActivityExecutions: 50,
    }),
    Worker.create({
      connection,
      namespace,
      taskQueue: config.temporal.testRunTaskQueue,
      workflowBundle,
      stickyQueueScheduleToStartTimeout,
      activities: activities.testRuns,
      // a result's call: an activity for as long as the call lasts
      maxConcurrentActivityTaskExecutions: config.testRuns.workerSlots,
      maxConcurrentActivityTaskPolls: Math.min(config.testRuns.workerSlots, 5),
      // a run's workflow tasks only start and collect activities
      maxConcurrentWorkflowTaskExecutions: 10,
      maxConcurrentWorkflowTaskPolls: 2,
      maxConcurrentLocalActivityExecutions: 1,
    }),
    Worker.create({
      connection,
      namespace,
      taskQueue: config.temporal.campaignTaskQueue,
      workflowBundle,
      stickyQueueScheduleToStartTimeout,
      activities: { advanceCampaign: activities.hooks.advanceCampaign },
      // a step is a local activity inside its workflow task: one slot of each per step
      maxConcurrentWorkflowTaskExecutions: Math.max(2, config.campaigns.workerSlots),
      maxConcurrentWorkflowTaskPolls: 2,
      maxConcurrentLocalActivityExecutions: config.campaigns.workerSlots,
      maxConcurrentActivityTaskExecutions: 1,
    }),
  ]);
}

/** Runs the workers until one of them stops (shutdown, or a lost connection), then stops the others. */
export async function runWorkers(workers: Worker[]): Promise<void> {
  const stopOthers = () => {
    for (const w of workers) if (w.getState() === "RUNNING") w.shutdown();
  };
  const runs = workers.map((w) => w.run().finally(stopOthers));
  const [failed] = (await Promise.allSettled(runs)).filter((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}
