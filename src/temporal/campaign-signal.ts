// The API's word to a campaign's workflow: signal-with-start, so the same call starts the workflow
// of a new campaign and wakes a running one on pause / resume / cancel. Postgres holds the status;
// when Temporal is away the signal is lost but nothing else is: the worker's sweep
// (workers/campaign-sweep.ts) starts any running campaign's workflow within its period.
import { WorkflowIdReusePolicy, WorkflowNotFoundError, type Client } from "@temporalio/client";
import type { Config } from "../config";
import { describeError } from "../errors";
import { log } from "../log";
import { CAMPAIGN_WORKFLOW, type CampaignSignal, campaignWorkflowId } from "../../workflows/ids";
import { connectTemporal } from "./client";

let client: Promise<Client> | null = null;

/** One connection for the process, opened on first use and opened again after a failure. */
function sharedClient(config: Pick<Config, "temporal">) {
  client ??= connectTemporal(config).then((c) => c.client);
  client.catch(() => (client = null));
  return client;
}

export async function signalCampaign(config: Pick<Config, "temporal">, campaignId: string, signal: CampaignSignal) {
  try {
    const temporal = await sharedClient(config);
    await temporal.workflow.signalWithStart(CAMPAIGN_WORKFLOW, {
      taskQueue: config.temporal.campaignTaskQueue,
      workflowId: campaignWorkflowId(campaignId),
      args: [{ campaignId }],
      signal,
      signalArgs: [],
      // a finished campaign's workflow may run again: its first step sees the campaign ended
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
    });
  } catch (error) {
    log.warn("campaign signal not delivered", { campaignId, signal, error: describeError(error) });
  }
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
