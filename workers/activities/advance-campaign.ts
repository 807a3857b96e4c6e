// The campaign workflow's one activity: a step of the campaign in Postgres (services/campaign-dialing).
import { advanceCampaign } from "../../src/services/campaign-dialing";
import type { ActivityDeps } from "./deps";

export const createAdvanceCampaign = (deps: ActivityDeps) => (campaignId: string) =>
  advanceCampaign(deps.db, campaignId, deps.config.bridge.maxCallMs);
