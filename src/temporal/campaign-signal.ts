// The worker's word to a campaign's workflow. signalCampaign: a change the API wrote (a new campaign,
// pause, resume, cancel; relayed by workers/campaign-signals.ts), with signal-with-start, so the same
// call starts a new campaign's workflow and wakes a running one. wakeCampaign: one of its calls ended.
// The workflow reads the campaign from Postgres at its next step: a signal only wakes it.
import { WorkflowIdReusePolicy, WorkflowNotFoundError, type Client } from "@temporalio/client";
import type { Config } from "../config";
import type { CampaignChange } from "../db/schema";
import { CAMPAIGN_WORKFLOW, type CampaignSignal, campaignWorkflowId } from "../../workflows/ids";

export async function signalCampaign(
  temporal: Client,
  config: Pick<Config, "temporal">,
  campaignId: string,
  change: CampaignChange,
) {
  await temporal.workflow.signalWithStart(CAMPAIGN_WORKFLOW, {
    taskQueue: config.temporal.campaignTaskQueue,
    workflowId: campaignWorkflowId(campaignId),
    args: [{ campaignId }],
    signal: change satisfies CampaignSignal,
    signalArgs: [],
    // a finished campaign's workflow may run again: its first step sees the campaign ended
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * Wakes a campaign's running workflow after one of its calls ended, so it dials the next contact now.
 * A plain signal, not signal-with-start: a campaign without a workflow is the sweep's to start.
 */
export async function wakeCampaign(temporal: Client, campaignId: string) {
  try {
    await temporal.workflow.getHandle(campaignWorkflowId(campaignId)).signal("call-ended" satisfies CampaignSignal);
  } catch (error) {
    // a finished campaign's workflow: nothing to wake
    if (error instanceof WorkflowNotFoundError) return;
    throw error;
  }
}
