// One delivery run: an activity per attempt, a durable timer between attempts, so every attempt is an
// event in the workflow history. Deterministic code only: no Node, no Bun, no clock, no database here.
import {
  condition,
  defineSignal,
  proxyActivities,
  setHandler,
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
};

export type HookDeliveryResult = { status: "SUCCEEDED" | "FAILED" | "GONE"; attempts: number };

/** Cuts the current wait short (operators can send it from the Temporal UI or CLI). */
export const retryNowSignal = defineSignal("retryNow");

export async function hookDeliveryWorkflow(input: HookDeliveryInput): Promise<HookDeliveryResult> {
  const { deliverAttempt } = proxyActivities<HookActivities>({
    // the HTTP deadline is enforced inside the activity; this only catches a worker that died mid-attempt
    startToCloseTimeout: input.attemptTimeoutMs + 30_000,
    // infrastructure failures only (database, crashed worker): an endpoint failure is a returned value
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "1m" },
  });
  let retryNow = false;
  setHandler(retryNowSignal, () => void (retryNow = true));

  const finish = (status: HookDeliveryResult["status"], attempts: number): HookDeliveryResult => {
    if (input.searchAttributes && status !== "GONE") upsertSearchAttributes([{ key: hookStatus, value: status }]);
    return { status, attempts };
  };

  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const nextDelayMs = backoffAfterAttempt(attempt, input.backoffBaseMs);
    const outcome = await deliverAttempt({ deliveryId: input.deliveryId, run: input.run, attempt, nextDelayMs });
    if (outcome !== "PENDING") return finish(outcome, attempt);
    retryNow = false;
    await condition(() => retryNow, nextDelayMs ?? 0);
  }
  // unreachable: the last attempt returns FAILED or SUCCEEDED
  return finish("FAILED", MAX_ATTEMPTS);
}
