// Campaigns as the API sees them (design.md, "Campaigns"): create (contacts into Postgres, checked
// like a call's `to`), read with counts, list, the contacts' states, and pause / resume / cancel.
// The dialing itself is the workflow's (services/campaign-dialing.ts); it hears of each change from
// the worker, never from here (services/campaign-changes.ts).
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../db/client";
import { assistants, campaignContacts, campaigns, type CampaignStatus, type ContactStatus } from "../db/schema";
import { conflict, notFound } from "../errors";
import type { CampaignCounts, CampaignInput, CampaignOut } from "../models/campaigns";
import type { PageRequest } from "../models/common";
import type { OutboundGuard } from "../net/outbound-guard";
import type { OrgScope } from "./auth";
import { changeToSignal, notifyCampaignChange } from "./campaign-changes";
import { checkSchedule } from "./campaign-schedule";
import { checkDestination, resolveCallOrigin } from "./outbound-calls";
import { pageOf, parsePaging, selectPage } from "./paging";
import { single } from "./rows";

export const CAMPAIGN = "campaign";
// rows per INSERT: 10,000 contacts in ten statements, each well under Postgres's 65,535 parameters
const insertBatch = 1000;

const columns = {
  id: campaigns.id,
  name: campaigns.name,
  kind: assistants.kind,
  ownerId: campaigns.assistantId,
  phoneNumberId: campaigns.phoneNumberId,
  status: campaigns.status,
  maxConcurrentCalls: campaigns.maxConcurrentCalls,
  reservedInboundSlots: campaigns.reservedInboundSlots,
  ringTimeoutSeconds: campaigns.ringTimeoutSeconds,
  schedule: campaigns.schedule,
  retry: campaigns.retry,
  voicemail: campaigns.voicemail,
  createdAt: campaigns.createdAt,
  updatedAt: campaigns.updatedAt,
};
const sortable = { id: campaigns.id, name: campaigns.name, createdAt: campaigns.createdAt, status: campaigns.status };
const inScope = (scope: OrgScope) => eq(campaigns.organizationId, scope.organizationId);
const byId = (scope: OrgScope, id: string) => and(inScope(scope), eq(campaigns.id, id));
const select = (db: DbOrTx) =>
  db.select(columns).from(campaigns).innerJoin(assistants, eq(assistants.id, campaigns.assistantId));
type Row = Awaited<ReturnType<ReturnType<typeof select>["execute"]>>[number];

const countKeys: Record<ContactStatus, keyof CampaignCounts> = {
  pending: "pending",
  dialing: "dialing",
  "in-progress": "inProgress",
  completed: "completed",
  failed: "failed",
  busy: "busy",
  "no-answer": "noAnswer",
  voicemail: "voicemail",
  canceled: "canceled",
};
const zeroCounts = (): CampaignCounts =>
  Object.fromEntries(["total", ...Object.values(countKeys)].map((k) => [k, 0])) as CampaignCounts;

async function countsOf(db: DbOrTx, ids: string[]) {
  const rows = ids.length
    ? await db
        .select({
          campaignId: campaignContacts.campaignId,
          status: campaignContacts.status,
          n: sql<number>`count(*)::int`,
        })
        .from(campaignContacts)
        .where(inArray(campaignContacts.campaignId, ids))
        .groupBy(campaignContacts.campaignId, campaignContacts.status)
    : [];
  const counts = new Map(ids.map((id) => [id, zeroCounts()]));
  for (const r of rows) {
    const c = counts.get(r.campaignId)!;
    c[countKeys[r.status]] += r.n;
    c.total += r.n;
  }
  return counts;
}

const present = ({ kind, ownerId, ...row }: Row, counts: CampaignCounts): CampaignOut => ({
  ...row,
  assistantId: kind === "assistant" ? ownerId : null,
  agentId: kind === "agent" ? ownerId : null,
  counts,
});

export async function getCampaign(db: DbOrTx, scope: OrgScope, id: string): Promise<CampaignOut> {
  const row = await single(select(db).where(byId(scope, id)), CAMPAIGN);
  return present(row, (await countsOf(db, [id])).get(id)!);
}

export function listCampaigns(db: DbOrTx, scope: OrgScope, query: PageRequest) {
  const paging = parsePaging(query, sortable, "createdAt,desc");
  return selectPage(db, campaigns, inScope(scope), paging, async (limit, offset, orderBy) => {
    const rows = await select(db)
      .where(inScope(scope))
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset);
    const counts = await countsOf(
      db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => present(r, counts.get(r.id)!));
  });
}

export async function createCampaign(db: Db, guard: OutboundGuard, scope: OrgScope, input: CampaignInput) {
  if (input.schedule) checkSchedule(input.schedule);
  const contacts = input.contacts.map((c, i) => ({
    to: checkDestination(guard, c.to, `contacts[${i}].to`),
    variables: c.variables ?? {},
  }));
  const origin = await resolveCallOrigin(db, scope, input);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(campaigns)
      .values({
        organizationId: scope.organizationId,
        name: input.name,
        assistantId: origin.ownerId,
        phoneNumberId: origin.phoneNumberId,
        maxConcurrentCalls: input.maxConcurrentCalls ?? 1,
        reservedInboundSlots: input.reservedInboundSlots ?? 0,
        ringTimeoutSeconds: input.ringTimeoutSeconds ?? 30,
        schedule: input.schedule ?? null,
        retry: {
          maxAttempts: input.retry?.maxAttempts ?? 3,
          onReasons: input.retry?.onReasons ?? ["busy", "no-answer"],
          delayMinutes: input.retry?.delayMinutes ?? 60,
        },
        voicemail: input.voicemail ?? { action: "continue" },
        pendingSignal: "created",
      })
      .returning({ id: campaigns.id });
    const campaignId = row!.id;
    await notifyCampaignChange(tx, campaignId);
    for (let i = 0; i < contacts.length; i += insertBatch)
      await tx
        .insert(campaignContacts)
        .values(contacts.slice(i, i + insertBatch).map((c, j) => ({ campaignId, position: i + j, ...c })));
    return campaignId;
  });
}

export async function listContacts(
  db: DbOrTx,
  scope: OrgScope,
  campaignId: string,
  query: PageRequest & { status?: ContactStatus },
) {
  await single(db.select({ id: campaigns.id }).from(campaigns).where(byId(scope, campaignId)), CAMPAIGN);
  const paging = parsePaging(
    query,
    { position: campaignContacts.position, status: campaignContacts.status },
    "position,asc",
  );
  const where = and(
    eq(campaignContacts.campaignId, campaignId),
    query.status ? eq(campaignContacts.status, query.status) : undefined,
  );
  const page = await selectPage(db, campaignContacts, where, paging, (limit, offset, orderBy) =>
    db
      .select({
        id: campaignContacts.id,
        to: campaignContacts.to,
        variables: campaignContacts.variables,
        status: campaignContacts.status,
        attempts: campaignContacts.attempts,
        lastEndedReason: campaignContacts.lastEndedReason,
        agentTaskIds: campaignContacts.agentTaskIds,
      })
      .from(campaignContacts)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit)
      .offset(offset),
  );
  return pageOf(page.data, paging, page.totalElements);
}

export const campaignActions = ["pause", "resume", "cancel"] as const;
export type CampaignAction = (typeof campaignActions)[number];
const transitions: Record<CampaignAction, { from: CampaignStatus[]; to: CampaignStatus }> = {
  pause: { from: ["running", "paused"], to: "paused" },
  resume: { from: ["paused", "running"], to: "running" },
  cancel: { from: ["running", "paused", "canceled"], to: "canceled" },
};

/**
 * Pause, resume or cancel: the new status in Postgres, marked for the worker to signal the workflow
 * (which reads the status at its next step); 409 from an end state.
 */
export async function changeCampaignStatus(db: Db, scope: OrgScope, id: string, action: CampaignAction) {
  const { from, to } = transitions[action];
  await db.transaction(async (tx) => {
    const [row] = await tx.select({ status: campaigns.status }).from(campaigns).where(byId(scope, id)).for("update");
    if (!row) throw notFound(CAMPAIGN);
    if (!from.includes(row.status)) throw conflict(`the campaign is ${row.status}: it cannot ${action}`);
    await tx
      .update(campaigns)
      .set({ status: to, updatedAt: sql`now()`, ...changeToSignal(action) })
      .where(eq(campaigns.id, id));
    await notifyCampaignChange(tx, id);
    // canceled: nobody waiting is dialled; calls already placed go on and are reconciled
    if (to === "canceled")
      await tx
        .update(campaignContacts)
        .set({ status: "canceled" })
        .where(and(eq(campaignContacts.campaignId, id), eq(campaignContacts.status, "pending")));
  });
  return getCampaign(db, scope, id);
}
