// The campaign workflow's one activity: a step of the campaign in Postgres (services/campaign-dialing),
// and the task queue campaigns run on, so that a workflow started elsewhere moves there (workflows/campaign.ts).
import { advanceCampaign } from "../../src/services/campaign-dialing";
import type { ActivityDeps } from "./deps";

export const createAdvanceCampaign = (deps: ActivityDeps) => async (campaignId: string) => ({
  ...(await advanceCampaign(deps.db, campaignId, deps.config.bridge.maxCallMs)),
  taskQueue: deps.config.temporal.campaignTaskQueue,
});
