// Tells each campaign's workflow of the changes the API wrote (services/campaign-changes.ts): a new
// campaign, pause, resume, cancel. Signal-with-start, so a new campaign's workflow starts here; then the
// mark is cleared. A change made while Temporal (or this worker) was away goes out once it is back.
import type { Client } from "@temporalio/client";
import type { Sql } from "postgres";
import type { Config } from "../src/config";
import type { Db } from "../src/db/client";
import { CAMPAIGN_CHANGES_CHANNEL } from "../src/db/schema";
import { forEachLimited } from "../src/lib/for-each-limited";
import { changeSignalled, unsignalledChanges } from "../src/services/campaign-changes";
import { signalCampaign } from "../src/temporal/campaign-signal";
import { startNotifiedRelay } from "./notified-relay";

const SWEEP_MS = 5_000;
const BATCH = 100;
const SIGNALS_AT_ONCE = 16;

export function startCampaignSignals(deps: { db: Db; sql: Sql; config: Pick<Config, "temporal"> }) {
  return startNotifiedRelay<Client>({
    sql: deps.sql,
    channel: CAMPAIGN_CHANGES_CHANNEL,
    sweepMs: SWEEP_MS,
    failed: "campaign signals not delivered yet",
    relay: async (client) => {
      for (;;) {
        const due = await unsignalledChanges(deps.db, BATCH);
        await forEachLimited(due, SIGNALS_AT_ONCE, async ({ id, change, seq }) => {
          await signalCampaign(client, deps.config, id, change!);
          await changeSignalled(deps.db, id, seq);
        });
        if (due.length < BATCH) return;
      }
    },
  });
}
