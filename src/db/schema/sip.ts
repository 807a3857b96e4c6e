import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { ownedByOrganization, timestamps, vendors } from "./tenancy";

/** NOTIFY channel: a credential or its numbers changed; bridges resync at once. */
export const SIP_CREDENTIALS_CHANNEL = "sip_credentials_changed";

export const sipCredentials = pgTable(
  "sip_credentials",
  {
    ...ownedByOrganization(),
    hostname: text("hostname").notNull(),
    port: integer("port").notNull(),
    username: text("username").notNull(),
    // AES-256-GCM with ENCRYPTION_KEY: the bridge needs the plain password for digest auth
    passwordEncrypted: text("password_encrypted").notNull(),
    maxAgentTasks: integer("max_agent_tasks").notNull().default(10),
    ...timestamps,
  },
  (t) => [index("sip_credentials_org_idx").on(t.organizationId, t.hostname)],
);

export const sipPhoneNumbers = pgTable(
  "sip_phone_numbers",
  {
    ...ownedByOrganization(),
    // denormalised so that "unique within a vendor" is one index
    vendorId: uuid("vendor_id")
      .notNull()
      .references(() => vendors.id, { onDelete: "cascade" }),
    credentialId: uuid("credential_id")
      .notNull()
      .references(() => sipCredentials.id, { onDelete: "restrict" }),
    phoneNumber: text("phone_number").notNull(),
    fallback: boolean("fallback").notNull().default(false),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("sip_phone_numbers_vendor_number_uq").on(t.vendorId, t.phoneNumber),
    // at most one fallback number per credential
    uniqueIndex("sip_phone_numbers_one_fallback_uq").on(t.credentialId).where(sql`${t.fallback}`),
    index("sip_phone_numbers_credential_idx").on(t.credentialId, t.phoneNumber),
  ],
);
