// Idempotency keys (the IETF Idempotency-Key draft): the first response to a POST, kept 24 h per token
// scope, method, path and key so that a retry is answered with it instead of acting again. Every API
// instance shares these rows; the primary key is what makes two simultaneous first requests meet.
import { index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    /** the token's reach: "admin", "vendor:<id>" or "organization:<id>" */
    scope: text("scope").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    key: text("key").notNull(),
    /** sha-256 of the request body, to tell a retry from a different request under the same key */
    requestHash: text("request_hash").notNull(),
    /** null while the first request is being processed */
    status: integer("status"),
    /** the response body, sealed with the secret box (a token's creation answers the token) */
    response: text("response"),
    /** names the request holding the claim, so that only it can keep its response or give the key back */
    claimToken: text("claim_token").notNull(),
    claimedAt: timestamp("claimed_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.method, t.path, t.key] }),
    index("idempotency_keys_expires_idx").on(t.expiresAt),
  ],
);

export type IdempotencyKeyRow = typeof idempotencyKeys.$inferSelect;
