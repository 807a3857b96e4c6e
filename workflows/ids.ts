// Workflow identity of a delivery run: deterministic, so Temporal refuses a second start of the same run.
export const HOOK_DELIVERY_WORKFLOW = "hookDeliveryWorkflow";

export function hookDeliveryWorkflowId(deliveryId: string, run: number): string {
  return `hook-delivery:${deliveryId}:${run}`;
}

export const TEST_RUN_WORKFLOW = "testRunWorkflow";
/** One workflow per test run: a second start meets the running one, so the starter may retry freely. */
export const testRunWorkflowId = (runId: string) => `test-run-${runId}`;
export const CAMPAIGN_WORKFLOW = "campaignWorkflow";
/**
 * The signals a campaign's workflow wakes on: from the API (pause, resume, cancel; created starts it),
 * and call-ended from the worker when one of its calls has ended.
 */
export const campaignSignals = ["created", "pause", "resume", "cancel", "call-ended"] as const;
export type CampaignSignal = (typeof campaignSignals)[number];

/** One workflow per campaign: a second start meets the running one. */
export function campaignWorkflowId(campaignId: string): string {
  return `campaign:${campaignId}`;
}
