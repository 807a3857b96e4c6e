// Workflow identity of a delivery run: deterministic, so Temporal refuses a second start of the same run.
export const HOOK_DELIVERY_WORKFLOW = "hookDeliveryWorkflow";

export function hookDeliveryWorkflowId(deliveryId: string, run: number): string {
  return `hook-delivery:${deliveryId}:${run}`;
}

/** One workflow per test run: starting it twice is refused by Temporal, so the starter may retry freely. */
export const testRunWorkflowId = (runId: string) => `test-run-${runId}`;
