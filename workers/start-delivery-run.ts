// Starts the workflow of one delivery run: used by the dispatcher (after attempt 1) and the reconciler
// (runs a Temporal server lost). The workflow id is deterministic, so a second start of the same run is
// refused. The run takes over from the attempts already recorded (takeOver).
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
/** What the attempts made so far left behind, as recorded on the row. */
export type RunProgress = Pick<HookDeliveryRow, "status" | "attemptCount" | "nextAttemptAt">;
/** Where the workflow starts: attempt 1, a later attempt after its wait, or only the record of the end. */
export type RunStart = Pick<HookDeliveryInput, "resume" | "settled">;

export function takeOver(progress: RunProgress): RunStart {
  if (progress.status !== "PENDING") return { settled: { status: progress.status, attempts: progress.attemptCount } };
  if (progress.attemptCount === 0) return {};
  return { resume: { attempt: progress.attemptCount + 1, at: progress.nextAttemptAt?.getTime() ?? 0 } };
}

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
  from: RunStart = {},
): Promise<void> {
  const input: HookDeliveryInput = {
    deliveryId: row.id,
    run: row.run,
    backoffBaseMs: config.hooks.backoffBaseMs,
    attemptTimeoutMs: config.hooks.timeoutMs,
    searchAttributes: target.searchAttributes,
    ...from,
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
            // a settled run ends in its first task: its final state is set here, with no upsert
            { key: hookStatus, value: from.settled?.status ?? "PENDING" },
          ]
        : undefined,
    });
  } catch (err) {
    // this run was started before (and has finished): it is dispatched, never started twice
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
