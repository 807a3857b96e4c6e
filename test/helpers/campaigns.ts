// Campaign rows straight into Postgres, for tests that drive a campaign's step or workflow themselves
// (the API's POST would also hand it to the worker).
import type { Db } from "../../src/db/client";
import { campaignContacts, campaigns, type CampaignStatus, type ContactStatus } from "../../src/db/schema";

export type CampaignOrigin = { organizationId: string; assistantId: string; phoneNumberId: string };

/** A campaign of one call at a time, no retries, with `contacts` (each a status, pending by default); its id. */
export async function insertCampaign(
  db: Db,
  origin: CampaignOrigin,
  status: CampaignStatus,
  contacts: ContactStatus[],
): Promise<string> {
  const [campaign] = await db
    .insert(campaigns)
    .values({
      organizationId: origin.organizationId,
      assistantId: origin.assistantId,
      phoneNumberId: origin.phoneNumberId,
      name: "inserted",
      status,
      maxConcurrentCalls: 1,
      reservedInboundSlots: 0,
      ringTimeoutSeconds: 30,
      retry: { maxAttempts: 1, onReasons: [], delayMinutes: 0 },
      voicemail: { action: "continue" },
    })
    .returning({ id: campaigns.id });
  const campaignId = campaign!.id;
  await db.insert(campaignContacts).values(
    contacts.map((s, position) => ({
      campaignId,
      position,
      to: `+1555044${1000 + position}`,
      variables: {},
      status: s,
    })),
  );
  return campaignId;
}
