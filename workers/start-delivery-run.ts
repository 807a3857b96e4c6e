// Starts the workflow of one delivery run: used by the dispatcher (new rows) and the reconciler (runs a
// Temporal server lost). The workflow id is deterministic, so a second start of the same run is refused.
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type Client,
} from "@temporalio/client";
import type { Config } from "../src/config";
import { hookDeliveries, type HookDeliveryRow } from "../src/db/schema";
import type { HookDeliveryInput } from "../workflows/hook-delivery";
import { HOOK_DELIVERY_WORKFLOW, hookDeliveryWorkflowId } from "../workflows/ids";
import { hookCallId, hookEventType, hookId, hookOrganizationId, hookStatus } from "../workflows/search-attributes";

/** A client on the worker's own connection (eager start needs it), and whether search attributes exist. */
export type DispatchTarget = { client: Client; searchAttributes: boolean };
export type DeliveryRunRow = Pick<
  HookDeliveryRow,
  "id" | "run" | "callId" | "eventType" | "hookKey" | "organizationId"
>;

/** The columns a run's start needs, for the queries that find runs to start. */
export const deliveryRunColumns = {
  id: hookDeliveries.id,
  run: hookDeliveries.run,
  callId: hookDeliveries.callId,
  eventType: hookDeliveries.eventType,
  hookKey: hookDeliveries.hookKey,
  organizationId: hookDeliveries.organizationId,
};

export async function startDeliveryRun(
  target: DispatchTarget,
  config: Pick<Config, "temporal" | "hooks">,
  row: DeliveryRunRow,
  resume?: HookDeliveryInput["resume"],
): Promise<void> {
  const input: HookDeliveryInput = {
    deliveryId: row.id,
    run: row.run,
    backoffBaseMs: config.hooks.backoffBaseMs,
    attemptTimeoutMs: config.hooks.timeoutMs,
    searchAttributes: target.searchAttributes,
    ...(resume ? { resume } : {}),
  };
  try {
    await target.client.workflow.start(HOOK_DELIVERY_WORKFLOW, {
      taskQueue: config.temporal.taskQueue,
      workflowId: hookDeliveryWorkflowId(row.id, row.run),
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      // the first workflow task comes back in the start response and runs on this process's worker,
      // skipping the task queue: under a burst that queue, not the HTTP, is what makes hooks late
      requestEagerStart: true,
      memo: {
        deliveryId: row.id,
        callId: row.callId,
        eventType: row.eventType,
        hookId: row.hookKey,
        organizationId: row.organizationId,
      },
      typedSearchAttributes: target.searchAttributes
        ? [
            { key: hookCallId, value: row.callId },
            { key: hookEventType, value: row.eventType },
            { key: hookId, value: row.hookKey },
            { key: hookOrganizationId, value: row.organizationId },
            { key: hookStatus, value: "PENDING" },
          ]
        : undefined,
    });
  } catch (err) {
    // this run was started before (and has finished): it is dispatched, never started twice
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
