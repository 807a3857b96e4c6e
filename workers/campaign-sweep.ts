// Starts the workflow of every running or paused campaign that has none (Temporal lost it, or the API
// could not reach Temporal when the campaign was created). A start meets a running workflow of the
// same id and changes nothing, so this costs one RPC per open campaign per period.
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from "@temporalio/client";
import { inArray } from "drizzle-orm";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { campaigns } from "../src/db/schema";
import { describeError } from "../src/errors";
import { log } from "../src/log";
import { CAMPAIGN_WORKFLOW, campaignWorkflowId } from "../workflows/ids";

// design.md: after a process dies, a running campaign dials again within 60 s of a worker being up
export const sweepPeriodMs = 30_000;

export function startCampaignSweep(db: Db, config: Pick<Config, "temporal">) {
  let client: Client | null = null;
  const sweep = async () => {
    if (!client) return;
    const open = await db
      .select({ id: campaigns.id })
      .from(campaigns)
      .where(inArray(campaigns.status, ["running", "paused"]));
    for (const { id } of open)
      await client.workflow.start(CAMPAIGN_WORKFLOW, {
        taskQueue: config.temporal.campaignTaskQueue,
        workflowId: campaignWorkflowId(id),
        args: [{ campaignId: id }],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      });
  };
  const timer = setInterval(
    () => void sweep().catch((error) => log.warn("campaign sweep failed", { error: describeError(error) })),
    sweepPeriodMs,
  );
  return {
    /** The worker's client once it is connected (null while it is not); sweeps at once. */
    attach(next: Client | null) {
      client = next;
      void sweep().catch((error) => log.warn("campaign sweep failed", { error: describeError(error) }));
    },
    stop: () => clearInterval(timer),
  };
}
