// Which bridge processes are alive: each renews its row every BRIDGE_HEARTBEAT_MS. The calls of a
// bridge whose row has expired are concluded by a live one (see src/calls/bridge-reaper.ts).
import { index, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const bridgeHeartbeats = pgTable(
  "bridge_heartbeats",
  {
    bridgeId: text("bridge_id").primaryKey(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("bridge_heartbeats_expires_idx").on(t.expiresAt)],
);
