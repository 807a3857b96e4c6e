// What a finished call leaves to read through the API: its messages and summary, and its recording.
// Both are kept for RECORDING_RETENTION_DAYS (a cleanup deletes older rows) and go with the task.
import { sql } from "drizzle-orm";
import { check, customType, index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
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

// kept apart from the messages: its bytes may come from elsewhere (a file written as the call runs).
// RECORDING_STORE=postgres keeps the audio here; s3 keeps the object's key and size, the audio in the bucket.
export const callRecordings = pgTable(
  "call_recordings",
  {
    callId: uuid("call_id")
      .primaryKey()
      .references(() => agentTasks.callId, { onDelete: "cascade" }),
    contentType: text("content_type").notNull(),
    audio: bytea("audio"),
    objectKey: text("object_key"),
    objectBytes: integer("object_bytes"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("call_recordings_created_idx").on(t.createdAt),
    check("call_recordings_audio_or_object", sql`(${t.audio} is null) <> (${t.objectKey} is null)`),
  ],
);
