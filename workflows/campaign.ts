// A campaign's workflow: step (reconcile, claim, offer: one local activity), wait, step, ... until
// every contact has its outcome. It holds only the campaign's id: contacts and their states live in
// Postgres, so a step repeated after a crash is harmless and the history stays small. Pause, resume
// and cancel arrive as signals: the API has already written the new status, the signal only cuts the
// wait short; so does call-ended, sent when one of the campaign's calls has ended. Continue-as-new long before Temporal's history limits.
// Deterministic code only: no Node, no Bun, no clock, no database here.
import {
  condition,
  continueAsNew,
  defineSignal,
  makeContinueAsNewFunc,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import type { CampaignActivities } from "../workers/activities";
import { campaignSignals } from "./ids";

export type CampaignInput = { campaignId: string };

// each step with its wait is about 6 events; a new run well before the 50,000-event limit
const historyEventsPerRun = 6_000;

export async function campaignWorkflow(input: CampaignInput): Promise<void> {
  const { advanceCampaign } = proxyLocalActivities<CampaignActivities>({
    startToCloseTimeout: "30s",
    // the database away: keep trying; the step is idempotent
    retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "30s" },
  });
  let woken = false;
  const wake = () => {
    woken = true;
  };
  for (const name of campaignSignals) setHandler(defineSignal(name), wake);
  for (;;) {
    // cleared before the step: a call that ends while the step runs wakes the next one at once
    woken = false;
    const step = await advanceCampaign(input.campaignId);
    if (step.done) return;
    // started on another queue (the hook deliveries', before campaigns had their own): the next run
    // goes to the campaigns' queue; steps recorded before the field existed carry none
    if (step.taskQueue && step.taskQueue !== workflowInfo().taskQueue)
      return makeContinueAsNewFunc<typeof campaignWorkflow>({ taskQueue: step.taskQueue })(input);
    await condition(() => woken, step.wakeInMs);
    const info = workflowInfo();
    if (info.continueAsNewSuggested || info.historyLength > historyEventsPerRun)
      return continueAsNew<typeof campaignWorkflow>(input);
  }
}
