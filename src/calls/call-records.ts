// What a finished call keeps for the API (GET …/agent-tasks/{id} and its /recording): the messages and
// summary, and the recording as bytes with their content type, until the retention cleanup takes them.
import { lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { callRecordings, callRecords } from "../db/schema";
import { describeError } from "../errors";
import type { CallConcludedPayload } from "../events/payloads";
import { log } from "../log";

export type Recording = { bytes: Buffer; contentType: string };

/** Stores (or replaces) the recording of a call; any producer of audio can feed it. */
export async function storeCallRecording(db: DbOrTx, callId: string, recording: Recording) {
  const row = { contentType: recording.contentType, audio: recording.bytes };
  await db
    .insert(callRecordings)
    .values({ callId, ...row })
    .onConflictDoUpdate({ target: callRecordings.callId, set: row });
}

/** The messages and summary of a concluded call, from its call_concluded event, and its recording. */
export async function storeConcludedCall(db: DbOrTx, event: CallConcludedPayload, recording: Recording | null) {
  const row = { messages: event.messages, shortSummary: event.shortSummary, summary: event.summary };
  await db
    .insert(callRecords)
    .values({ callId: event.callId, ...row })
    .onConflictDoUpdate({ target: callRecords.callId, set: row });
  if (recording) await storeCallRecording(db, event.callId, recording);
}

/** Deletes records and recordings older than `days`; returns how many rows went. */
export async function deleteExpiredCallRecords(db: DbOrTx, days: number) {
  const cutoff = sql`now() - make_interval(days => ${days})`;
  const records = await db
    .delete(callRecords)
    .where(lt(callRecords.createdAt, cutoff))
    .returning({ callId: callRecords.callId });
  const recordings = await db
    .delete(callRecordings)
    .where(lt(callRecordings.createdAt, cutoff))
    .returning({ callId: callRecordings.callId });
  return records.length + recordings.length;
}

const cleanupEveryMs = 60 * 60_000;

/** Runs the retention cleanup now and every hour (any number of processes may run it). */
export function startCallRecordCleanup(db: DbOrTx, retentionDays: number) {
  const run = () =>
    deleteExpiredCallRecords(db, retentionDays).then(
      (deleted) => deleted > 0 && log.info("call records expired", { deleted, retentionDays }),
      (error) => log.warn("call record cleanup failed", { error: describeError(error) }),
    );
  void run();
  const timer = setInterval(run, cleanupEveryMs);
  return () => clearInterval(timer);
}
