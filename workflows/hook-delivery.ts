// One delivery run: an attempt, a durable timer, an attempt, ... (at most 20). Attempt 1 is made by the
// dispatcher before the workflow starts (workers/dispatcher.ts); the run gets its result in `resume`
// (attempt 2 after its wait) or `settled` (the run records the end: 5 history events). Each attempt the
// workflow makes is a local activity, run inside the workflow task that decided it.
// Not replay-compatible with the runs of hook-delivery-v1 (activities): hence the task queue -v2.
// `settled` only adds a branch that the -v2 runs started before it never take: still -v2.
// Deterministic code only: no Node, no Bun, no clock, no database here.
import {
  condition,
  defineSignal,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from "@temporalio/workflow";
import type { HookActivities } from "../workers/activities";
import { backoffAfterAttempt, MAX_ATTEMPTS } from "./schedule";
import { hookStatus } from "./search-attributes";

export type HookDeliveryInput = {
  deliveryId: string;
  run: number;
  /** schedule unit, fixed at dispatch so a config change never alters a running history */
  backoffBaseMs: number;
  /** the HTTP time-out the worker applies; bounds how long one attempt may take */
  attemptTimeoutMs: number;
  /** whether the server knows our custom search attributes (else only the memo is set) */
  searchAttributes: boolean;
  /**
   * Set when attempts were made before this workflow started (the dispatcher's attempt 1, or a run
   * Temporal lost that the reconciler starts again): they are kept, so the run goes on with attempt
   * `attempt`, not before `at` (epoch ms) if that is later.
   */
  resume?: { attempt: number; at: number };
  /** Set when the attempts made before the workflow started ended the run (HookStatus is set at start). */
  settled?: { status: "SUCCEEDED" | "FAILED"; attempts: number };
};

export type HookDeliveryResult = { status: "SUCCEEDED" | "FAILED" | "GONE"; attempts: number };

/** Cuts the current wait short (operators can send it from the Temporal UI or CLI). */
export const retryNowSignal = defineSignal("retryNow");

export async function hookDeliveryWorkflow(input: HookDeliveryInput): Promise<HookDeliveryResult> {
  const { deliverAttempt } = proxyLocalActivities<HookActivities>({
    // the HTTP deadline is enforced inside the activity; this leaves room for reading and recording
    startToCloseTimeout: input.attemptTimeoutMs + 10_000,
    // infrastructure failures only (database down): an endpoint's failure is a returned value
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
  });
  let retryNow = false;
  setHandler(retryNowSignal, () => {
    retryNow = true;
  });

  const finish = (status: HookDeliveryResult["status"], attempts: number): HookDeliveryResult => {
    if (input.searchAttributes && status !== "GONE") upsertSearchAttributes([{ key: hookStatus, value: status }]);
    return { status, attempts };
  };

  if (input.settled) return { status: input.settled.status, attempts: input.settled.attempts };
  // workflow time (Date.now is deterministic here): the wait the lost run had left
  const resumeWaitMs = input.resume ? input.resume.at - Date.now() : 0;
  if (resumeWaitMs > 0) await sleep(resumeWaitMs);
  for (let attempt = input.resume?.attempt ?? 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const nextDelayMs = backoffAfterAttempt(attempt, input.backoffBaseMs);
    const outcome = await deliverAttempt({ deliveryId: input.deliveryId, run: input.run, attempt, nextDelayMs });
    if (outcome !== "PENDING") return finish(outcome, attempt);
    retryNow = false;
    await condition(() => retryNow, nextDelayMs ?? 0);
  }
  // unreachable: the last attempt returns FAILED or SUCCEEDED
  return finish("FAILED", MAX_ATTEMPTS);
}
