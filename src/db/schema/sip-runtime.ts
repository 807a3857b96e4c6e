// What the bridges keep about SIP at run time: which bridge registers each credential (a lease it
// renews by heartbeat, so another bridge takes over when it dies) and how the registration is going.
import { integer, pgTable, text, timestamp, uuid, index } from "drizzle-orm/pg-core";
import { sipCredentials } from "./sip";

export const registrationStates = ["registered", "failing", "unregistered"] as const;
export type RegistrationState = (typeof registrationStates)[number];

export const sipRegistrations = pgTable(
  "sip_registrations",
  {
    credentialId: uuid("credential_id")
      .primaryKey()
      .references(() => sipCredentials.id, { onDelete: "cascade" }),
    // null once released: any bridge may claim it at once
    ownerBridgeId: text("owner_bridge_id"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }).notNull(),
    state: text("state").$type<RegistrationState>().notNull().default("unregistered"),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("sip_registrations_owner_idx").on(t.ownerBridgeId)],
);
