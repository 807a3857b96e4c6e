// The worker's activities, built from injected dependencies (./deps). Attempts are counted in `attempts`
// so a stopping worker can let the ones in flight finish and record their outcome.
import { inFlight, type InFlight } from "../../src/lib/in-flight";
import { createAdvanceCampaign } from "./advance-campaign";
import { createDeliverAttempt, type AttemptInput, type LoadedDelivery } from "./deliver-attempt";
import type { ActivityDeps } from "./deps";

export function createActivities(deps: ActivityDeps, attempts: InFlight = inFlight()) {
  const deliverAttempt = createDeliverAttempt(deps);
  return {
    deliverAttempt: (input: AttemptInput, loaded?: LoadedDelivery) =>
      attempts.track(() => deliverAttempt(input, loaded)),
    advanceCampaign: createAdvanceCampaign(deps),
  };
}

export type HookActivities = ReturnType<typeof createActivities>;
export type CampaignActivities = Pick<HookActivities, "advanceCampaign">;
