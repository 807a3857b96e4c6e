// A campaign's call ended (call-lifecycle NOTIFYs when it closes the task): wake its workflow, which
// then dials the next contact at once instead of on its safety poll. One signal in flight per
// campaign; endings that arrive meanwhile are folded into one more signal after it, so a burst of
// endings costs a few history events, not one each. A lost notification or signal only costs time:
// the workflow still looks on its own (services/campaign-dialing.ts, safetyPollMs).
import type { Client } from "@temporalio/client";
import type { Sql } from "postgres";
import { listenAlways } from "../src/db/listen";
import { CAMPAIGN_CALL_ENDS_CHANNEL } from "../src/db/schema";
import { describeError } from "../src/errors";
import { log } from "../src/log";
import { wakeCampaign } from "../src/temporal/campaign-signal";

export function startCampaignCallEnds(sql: Sql) {
  let client: Client | null = null;
  // campaign id → whether another ending arrived while its signal was in flight
  const sending = new Map<string, boolean>();
  const send = async (campaignId: string) => {
    while (client) {
      sending.set(campaignId, false);
      await wakeCampaign(client, campaignId).catch((error) =>
        log.warn("campaign wake not delivered", { campaignId, error: describeError(error) }),
      );
      if (!sending.get(campaignId)) break;
    }
    sending.delete(campaignId);
  };
  const listening = listenAlways(sql, CAMPAIGN_CALL_ENDS_CHANNEL, (campaignId) => {
    if (sending.has(campaignId)) sending.set(campaignId, true);
    else void send(campaignId);
  });
  return {
    /** The worker's client once it is connected (null while it is not: endings then wait for the poll). */
    attach(next: Client | null) {
      client = next;
    },
    stop: () => listening.unlisten(),
  };
}
