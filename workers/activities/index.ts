// The worker's activities, built from injected dependencies (./deps).
import { createDeliverAttempt } from "./deliver-attempt";
import type { ActivityDeps } from "./deps";

export function createActivities(deps: ActivityDeps) {
  return { deliverAttempt: createDeliverAttempt(deps) };
}

export type HookActivities = ReturnType<typeof createActivities>;
