// Two steps of one campaign at once (a step whose workflow task timed out and its retry): together
// they never have more calls out than the campaign's maxConcurrentCalls, because each counts the calls
// out under the campaign's lock. Real Postgres; the steps are the campaign activity's own function.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { createDb } from "../../src/db/client";
import { agentTasks, campaignContacts, campaigns, sipRegistrations } from "../../src/db/schema";
import { advanceCampaign } from "../../src/services/campaign-dialing";
import { credentialLock } from "../../src/sip/reserve-task";
import {
  createBookingAssistant,
  createCallerNumber,
  createTenant,
  startTestApi,
  type Tenant,
  type TestApi,
} from "../helpers/api";
import { insertCampaign } from "../helpers/campaigns";
import { eventually } from "../sip/helpers/eventually";

const database = createDb(process.env.DATABASE_URL!, { max: 6 });
const { db } = database;
let api: TestApi;
let tenant: Tenant;
let origin: { organizationId: string; assistantId: string; phoneNumberId: string; credentialId: string };

beforeAll(async () => {
  api = await startTestApi();
  tenant = await createTenant(api.url, "overlap");
  const { credentialId, phoneNumberId } = await createCallerNumber(tenant, "+15550420000", 10);
  origin = {
    organizationId: tenant.organizationId,
    assistantId: await createBookingAssistant(tenant),
    phoneNumberId,
    credentialId,
  };
  // a bridge holds the credential's lease (no bridge runs here: the offered calls stay offered)
  await db
    .insert(sipRegistrations)
    .values({ credentialId, ownerBridgeId: "overlap-bridge", leaseExpiresAt: sql`now() + interval '1 hour'` });
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await database.close();
});

/** A running campaign of three due contacts, one call at a time. */
const oneAtATime = () => insertCampaign(db, origin, "running", ["pending", "pending", "pending"]);

/** Resolves once `n` sessions of the database wait on a lock. */
const waitingOnLocks = (n: number) =>
  eventually(
    async () => {
      // read outside any transaction: one would see a single snapshot of pg_stat_activity throughout
      const [row] = await db.execute<{ n: number }>(sql`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`);
      return row!.n >= n;
    },
    `${n} sessions waiting on a lock`,
    30_000,
  );

const contactsOf = (id: string) => db.select().from(campaignContacts).where(eq(campaignContacts.campaignId, id));
const callsOf = (id: string) => db.select().from(agentTasks).where(eq(agentTasks.campaignId, id));

test("two steps at once dial no more than maxConcurrentCalls between them", async () => {
  const id = await oneAtATime();
  // hold the credential's reservation lock until both steps wait on a lock, so that each has read
  // everything it reads before the claim while the other has dialled nobody yet
  const steps = await db.transaction(async (tx) => {
    await tx.execute(credentialLock(origin.credentialId));
    const both = [advanceCampaign(db, id, 60_000), advanceCampaign(db, id, 60_000)];
    await waitingOnLocks(2);
    return both;
  });
  const results = await Promise.all(steps);

  expect(results.map((r) => r.dialed).sort()).toEqual([0, 1]);
  expect((await contactsOf(id)).filter((c) => c.status === "dialing")).toHaveLength(1);
  expect(await callsOf(id)).toHaveLength(1);
}, 60_000);

test("a pause committed while a step waits for the campaign's lock: the step dials nobody", async () => {
  const id = await oneAtATime();
  const step = await db.transaction(async (tx) => {
    // as the API's pause does (services/campaigns.ts changeCampaignStatus)
    await tx.select().from(campaigns).where(eq(campaigns.id, id)).for("update");
    const pending = advanceCampaign(db, id, 60_000);
    await waitingOnLocks(1);
    await tx.update(campaigns).set({ status: "paused" }).where(eq(campaigns.id, id));
    return [pending]; // in an array: the transaction must not wait for the step it holds up
  });
  expect((await step[0]!).dialed).toBe(0);
  expect(await callsOf(id)).toHaveLength(0);
}, 60_000);

test("an assistant deleted while a step of its campaign dials: the dial, then the delete (no deadlock)", async () => {
  const assistantId = await createBookingAssistant(tenant);
  const id = await insertCampaign(db, { ...origin, assistantId }, "running", ["pending"]);
  const [step, deleted] = await db.transaction(async (tx) => {
    // the step holds its campaign's lock while it waits for the credential's
    await tx.execute(credentialLock(origin.credentialId));
    const pending = advanceCampaign(db, id, 60_000);
    await waitingOnLocks(1);
    // the delete takes the campaign with it: it waits for the step; before, it had locked the
    // assistant first, which the step's insert of its call then waited for (a deadlock)
    const deleting = tenant.org.delete(`${tenant.P}/assistants/${assistantId}`);
    await waitingOnLocks(2);
    return [pending, deleting] as const; // in an array: the transaction must not wait for them
  });
  expect((await step).dialed).toBe(1);
  expect((await deleted).status).toBe(200);
  expect(await db.select().from(campaigns).where(eq(campaigns.id, id))).toEqual([]);
}, 60_000);
