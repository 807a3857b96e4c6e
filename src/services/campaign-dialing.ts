// One step of a running campaign, taken by the campaign workflow's activity: reconcile the contacts
// being called with their calls' outcomes (retry, or their final state), then claim the contacts that
// are due and offer their calls through the same path as POST P/calls (services/outbound-calls), in
// one transaction under the credential's reservation lock. A contact goes pending → dialing in the
// transaction that inserts its call, so a step repeated after a crash dials nobody twice at once.
import { and, asc, eq, inArray, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { campaignContacts, campaigns, sipPhoneNumbers, type ContactStatus } from "../db/schema";
import { msUntilOpen } from "./campaign-schedule";
import { lockCredentialCapacity, offerCalls } from "./outbound-calls";

/** What the workflow does next: stop, or look again after `wakeInMs` (or when signalled). */
export type CampaignStep = { done: boolean; wakeInMs: number; dialed: number; inFlight: number };

// a call's end wakes the workflow (a call-ended signal, workers/campaign-call-ends.ts); this is the
// look it takes on its own while calls are out, for a notification or signal that was lost
export const safetyPollMs = 10_000;
// the credential (not the campaign's own window) is full: an inbound call ending sends no signal
const pollMs = 1000;
// paused or waiting on a retry far away: a signal wakes the workflow sooner
const idleMs = 10 * 60_000;
// outside calling hours the workflow wakes at least hourly (a clock change moves the opening)
const closedMaxMs = 60 * 60_000;

type Campaign = typeof campaigns.$inferSelect;
const inFlightStates: ContactStatus[] = ["dialing", "in-progress"];

export async function advanceCampaign(db: Db, campaignId: string, maxCallMs: number): Promise<CampaignStep> {
  const [campaign] = await db.select().from(campaigns).where(eq(campaigns.id, campaignId));
  if (!campaign) return { done: true, wakeInMs: 0, dialed: 0, inFlight: 0 };
  await reconcile(db, campaign);
  const [stats] = await db
    .select({
      inFlight: sql<number>`count(*) filter (where ${campaignContacts.status} in ('dialing', 'in-progress'))::int`,
      pending: sql<number>`count(*) filter (where ${campaignContacts.status} = 'pending')::int`,
      nextAt: sql<
        string | null
      >`min(${campaignContacts.nextAttemptAt}) filter (where ${campaignContacts.status} = 'pending')`,
    })
    .from(campaignContacts)
    .where(eq(campaignContacts.campaignId, campaignId));
  const { inFlight, pending } = stats!;
  const waiting = (ms: number, dialed = 0, out = inFlight): CampaignStep => ({
    done: false,
    wakeInMs: out > 0 ? Math.min(safetyPollMs, ms) : ms,
    dialed,
    inFlight: out,
  });

  if (campaign.status === "canceled" || campaign.status === "completed")
    return inFlight > 0 ? waiting(safetyPollMs) : { done: true, wakeInMs: 0, dialed: 0, inFlight };
  if (pending === 0 && inFlight === 0) {
    await db
      .update(campaigns)
      .set({ status: "completed", updatedAt: sql`now()` })
      .where(and(eq(campaigns.id, campaignId), eq(campaigns.status, "running")));
    return { done: true, wakeInMs: 0, dialed: 0, inFlight: 0 };
  }
  if (campaign.status === "paused") return waiting(idleMs);
  const openInMs = msUntilOpen(campaign.schedule, new Date());
  if (openInMs > 0) return waiting(Math.min(openInMs, closedMaxMs));

  const { dialed, out } = (await claimAndOffer(db, campaign, maxCallMs)) ?? { dialed: 0, out: inFlight };
  const dueInMs = stats!.nextAt ? new Date(stats!.nextAt).getTime() - Date.now() : idleMs;
  if (pending > dialed && dueInMs <= 0)
    // contacts are due but were not dialled: the campaign's own window is full (one of its calls
    // ending wakes us), or the credential is (inbound calls, other campaigns: look again soon)
    return waiting(out >= campaign.maxConcurrentCalls ? safetyPollMs : pollMs, dialed, out);
  return waiting(Math.max(dueInMs, pollMs), dialed, out);
}

/** Contacts whose call has moved on: answered → in-progress; ended → a retry or their final state. */
async function reconcile(db: Db, campaign: Campaign) {
  const { onReasons, maxAttempts, delayMinutes } = campaign.retry;
  const retryable =
    onReasons.length && campaign.status !== "canceled"
      ? sql`x.retry_as in (${sql.join(
          onReasons.map((r) => sql`${r}`),
          sql`, `,
        )}) and c.attempts < ${maxAttempts}`
      : sql`false`;
  await db.execute(sql`
    with x as (
      select c.id, t.status as task_status, r.reason,
        case r.reason when 'busy' then 'busy' when 'no-answer' then 'no-answer'
          when 'failed' then 'failed' when 'bridge-lost' then 'failed' end as retry_as,
        case r.reason when 'busy' then 'busy' when 'no-answer' then 'no-answer' when 'voicemail' then 'voicemail'
          when 'canceled' then 'canceled' when 'declined' then 'failed' when 'unreachable' then 'failed'
          when 'failed' then 'failed' when 'bridge-lost' then 'failed'
          -- every other end (hangup, silence-timeout after the idle prompts, …): the call was made
          else 'completed' end as outcome
      from ${campaignContacts} c
      join agent_tasks t on t.id = c.agent_task_ids[cardinality(c.agent_task_ids)]
      cross join lateral (select coalesce(t.ended_reason, case when t.status = 'failed' then 'failed' else 'hangup' end) as reason) r
      where c.campaign_id = ${campaign.id} and c.status in ('dialing', 'in-progress') and t.status <> 'offered'
        and not (t.status = 'active' and c.status = 'in-progress')
    )
    update ${campaignContacts} c set
      status = case when x.task_status = 'active' then 'in-progress' when ${retryable} then 'pending' else x.outcome end,
      last_ended_reason = case when x.task_status = 'active' then c.last_ended_reason else x.reason end,
      next_attempt_at = case when x.task_status = 'active' then c.next_attempt_at
        else now() + make_interval(mins => ${delayMinutes}) end
    from x where c.id = x.id`);
}

/**
 * Claims up to the free slots' worth of due contacts and offers their calls: how many, and the calls
 * now out (null: the number has no credential to call from). The calls out are counted under the campaign's row lock: two steps at once (a step that
 * timed out and its retry) each see the other's dials, and a pause or cancel is either before the
 * claim or after it.
 */
async function claimAndOffer(db: Db, campaign: Campaign, maxCallMs: number) {
  const [number] = await db
    .select({ from: sipPhoneNumbers.phoneNumber, credentialId: sipPhoneNumbers.credentialId })
    .from(sipPhoneNumbers)
    .where(eq(sipPhoneNumbers.id, campaign.phoneNumberId));
  if (!number?.credentialId) return null;
  const origin = {
    ownerId: campaign.assistantId,
    phoneNumberId: campaign.phoneNumberId,
    from: number.from,
    credentialId: number.credentialId,
  };
  return db.transaction(async (tx) => {
    const [locked] = await tx
      .select({ status: campaigns.status })
      .from(campaigns)
      .where(eq(campaigns.id, campaign.id))
      .for("update");
    // a statement of its own, after the lock: one that waited for the lock still reads from its own
    // start, before the other step's dials were committed
    const [counted] = await tx
      .select({ n: sql<number>`count(*)::int` })
      .from(campaignContacts)
      .where(and(eq(campaignContacts.campaignId, campaign.id), inArray(campaignContacts.status, inFlightStates)));
    const inFlight = counted!.n;
    if (locked?.status !== "running") return { dialed: 0, out: inFlight };
    const capacity = await lockCredentialCapacity(tx, origin.credentialId);
    // the campaign's own window, within what the credential has free beyond the inbound reserve
    const free = Math.min(
      campaign.maxConcurrentCalls - inFlight,
      capacity.cap - campaign.reservedInboundSlots - capacity.open,
    );
    if (!capacity.bridge || free <= 0) return { dialed: 0, out: inFlight };
    const due = await tx
      .select({ id: campaignContacts.id, to: campaignContacts.to, variables: campaignContacts.variables })
      .from(campaignContacts)
      .where(
        and(
          eq(campaignContacts.campaignId, campaign.id),
          eq(campaignContacts.status, "pending"),
          lte(campaignContacts.nextAttemptAt, sql`now()`),
        ),
      )
      .orderBy(asc(campaignContacts.position))
      .limit(free)
      .for("update", { skipLocked: true });
    const taskIds = await offerCalls(
      tx,
      campaign.organizationId,
      origin,
      capacity.bridge,
      due.map((c) => ({
        to: c.to,
        variables: c.variables,
        campaignId: campaign.id,
        dial: {
          to: c.to,
          from: origin.from,
          ringTimeoutMs: campaign.ringTimeoutSeconds * 1000,
          maxDurationMs: maxCallMs,
          voicemail: campaign.voicemail,
        },
      })),
    );
    if (due.length === 0) return { dialed: 0, out: inFlight };
    const list = (ids: string[]) =>
      sql`array[${sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )}]::uuid[]`;
    await tx.execute(sql`
      update ${campaignContacts} c set status = 'dialing', attempts = c.attempts + 1,
        agent_task_ids = array_append(c.agent_task_ids, u.task)
      from unnest(${list(due.map((c) => c.id))}, ${list(taskIds)}) as u(contact, task)
      where c.id = u.contact`);
    return { dialed: due.length, out: inFlight + due.length };
  });
}
