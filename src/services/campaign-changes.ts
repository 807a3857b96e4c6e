// The campaign changes its workflow has yet to hear of: the API answers once Postgres holds a change
// (a new campaign, pause, resume, cancel) and marks it here in the same transaction, with a NOTIFY;
// the worker signals the workflow and clears the mark (workers/campaign-signals.ts). So no answer of
// the API waits on Temporal, and a change made while Temporal is away reaches the workflow once the
// worker is connected again. Only the latest change is kept: the workflow reads the campaign's status
// from Postgres at its next step, a signal only wakes it.
import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { CAMPAIGN_CHANGES_CHANNEL, campaigns, type CampaignChange } from "../db/schema";

/** The columns that mark `change` as not yet signalled, for the update that makes it. */
export const changeToSignal = (change: CampaignChange) => ({
  pendingSignal: change,
  signalSeq: sql`${campaigns.signalSeq} + 1`,
});

/** Wakes the worker's relay once the transaction commits. */
export async function notifyCampaignChange(tx: DbOrTx, campaignId: string) {
  await tx.execute(sql`select pg_notify(${CAMPAIGN_CHANGES_CHANNEL}, ${campaignId})`);
}

/** Up to `limit` campaigns with a change to signal, oldest change first. */
export function unsignalledChanges(db: Db, limit: number) {
  return db
    .select({ id: campaigns.id, change: campaigns.pendingSignal, seq: campaigns.signalSeq })
    .from(campaigns)
    .where(isNotNull(campaigns.pendingSignal))
    .orderBy(campaigns.updatedAt)
    .limit(limit);
}

/** The change read as `seq` was signalled: cleared, unless a newer one came meanwhile. */
export async function changeSignalled(db: Db, campaignId: string, seq: number) {
  await db
    .update(campaigns)
    .set({ pendingSignal: null })
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.signalSeq, seq)));
}
