// What a finished call leaves to read through the API: its messages and summary, and its recording.
// Both are kept for RECORDING_RETENTION_DAYS (a cleanup deletes older rows) and go with the task.
import { customType, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { agentTasks } from "./calls";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

export const callRecords = pgTable(
  "call_records",
  {
    callId: uuid("call_id")
      .primaryKey()
      .references(() => agentTasks.callId, { onDelete: "cascade" }),
    // the call_concluded messages (src/events/payloads.ts)
    messages: jsonb("messages").$type<unknown[]>().notNull(),
    shortSummary: text("short_summary"),
    summary: text("summary"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("call_records_created_idx").on(t.createdAt)],
);

// kept apart from the messages: its bytes may come from elsewhere (a file written as the call runs)
export const callRecordings = pgTable(
  "call_recordings",
  {
    callId: uuid("call_id")
      .primaryKey()
      .references(() => agentTasks.callId, { onDelete: "cascade" }),
    contentType: text("content_type").notNull(),
    audio: bytea("audio").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("call_recordings_created_idx").on(t.createdAt)],
);
