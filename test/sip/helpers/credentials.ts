// Rows for the SIP unit tests that read the database without a trunk, a bridge or the API: a vendor
// and organization, credentials (password sealed as the API seals it), numbers, assistants and open
// tasks. `stop` deletes the vendor and with it everything made here (a bridge of a later test file
// would otherwise run a user agent for these credentials).
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../../src/config";
import { createSecretBox } from "../../../src/crypto/secrets";
import { createDb } from "../../../src/db/client";
import {
  agentTasks,
  assistants,
  organizations,
  sipCredentials,
  sipPhoneNumbers,
  vendors,
} from "../../../src/db/schema";

export async function startCredentialFixtures(name = "sip-units") {
  const { db, close } = createDb(process.env.DATABASE_URL!, { max: 2 });
  const secrets = createSecretBox(loadConfig(process.env).encryptionKey);
  const [vendor] = await db.insert(vendors).values({ name }).returning();
  if (!vendor) throw new Error("vendor not created");
  const [org] = await db.insert(organizations).values({ vendorId: vendor.id, name }).returning();
  if (!org) throw new Error("organization not created");
  const organizationId = org.id;
  const credentialIds: string[] = [];

  const one = <T>(rows: T[]): T => {
    const [row] = rows;
    if (!row) throw new Error("row not written");
    return row;
  };

  return {
    db,
    secrets,
    async createCredential(fields: { hostname?: string; port?: number; username?: string; password?: string } = {}) {
      const { password = "secret", ...rest } = fields;
      const row = one(
        await db
          .insert(sipCredentials)
          .values({
            organizationId,
            hostname: "127.0.0.1",
            port: 5060,
            username: "unit",
            ...rest,
            passwordEncrypted: secrets.encrypt(password),
          })
          .returning(),
      );
      credentialIds.push(row.id);
      return row.id;
    },
    /** What a PUT writes: the fields given and the password sealed again. */
    async updateCredential(
      id: string,
      fields: { hostname?: string; port?: number; username?: string; password?: string } = {},
    ) {
      const { password = "secret", ...rest } = fields;
      await db
        .update(sipCredentials)
        .set({ ...rest, passwordEncrypted: secrets.encrypt(password) })
        .where(eq(sipCredentials.id, id));
    },
    async createNumber(credentialId: string, phoneNumber: string, fallback = false) {
      return one(
        await db
          .insert(sipPhoneNumbers)
          .values({ organizationId, vendorId: vendor.id, credentialId, phoneNumber, fallback })
          .returning(),
      ).id;
    },
    async createAssistant(numberId: string) {
      return one(
        await db
          .insert(assistants)
          .values({ organizationId, kind: "assistant", name: "unit desk", telephoneNumberId: numberId })
          .returning(),
      ).id;
    },
    /** An `active` task of `bridgeId` on the credential, as a call in progress leaves it. */
    async openTask(credentialId: string, numberId: string, assistantId: string, bridgeId: string) {
      const task = {
        organizationId,
        callId: randomUUID(),
        assistantId,
        credentialId,
        phoneNumberId: numberId,
        bridgeId,
      };
      await db
        .insert(agentTasks)
        .values({ ...task, transport: { type: "sip" }, status: "active", startedAt: new Date() });
      return task.callId;
    },
    /** An outbound call the API offered to `bridgeId`, not claimed yet. */
    async offerOutboundTask(credentialId: string, assistantId: string, bridgeId: string) {
      const callId = randomUUID();
      const dial = { to: "+15550100", from: "+15550199", ringTimeoutMs: 30_000, maxDurationMs: 60_000 };
      await db.insert(agentTasks).values({
        organizationId,
        callId,
        assistantId,
        credentialId,
        bridgeId,
        direction: "outbound",
        status: "offered",
        transport: { type: "sip" },
        dial: { ...dial, voicemail: { action: "continue" } },
      });
      return callId;
    },
    async task(callId: string) {
      return one(await db.select().from(agentTasks).where(eq(agentTasks.callId, callId)));
    },
    async deleteCredential(id: string) {
      await db.delete(sipPhoneNumbers).where(eq(sipPhoneNumbers.credentialId, id));
      await db.delete(sipCredentials).where(eq(sipCredentials.id, id));
    },
    async stop() {
      await db.delete(assistants).where(eq(assistants.organizationId, organizationId));
      for (const id of credentialIds) await db.delete(sipPhoneNumbers).where(eq(sipPhoneNumbers.credentialId, id));
      await db.delete(vendors).where(eq(vendors.id, vendor.id));
      await close();
    },
  };
}
