// What a finished call keeps for the API (GET …/agent-tasks/{id} and its /recording): the messages and
// summary, and the recording (its bytes, or the key of its object in the bucket) with its content type,
// until the retention cleanup takes them.
import { and, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import type { DbOrTx } from "../db/client";
import { callRecordings, callRecords } from "../db/schema";
import { describeError } from "../errors";
import type { CallConcludedPayload } from "../events/payloads";
import { log } from "../log";
import type { RecordingObjects } from "../storage/recording-objects";

export type Recording = { contentType: string } & ({ bytes: Buffer } | { objectKey: string; objectBytes: number });

/** Stores (or replaces) the recording of a call; any producer of audio can feed it. */
export async function storeCallRecording(db: DbOrTx, callId: string, recording: Recording) {
  const row =
    "bytes" in recording
      ? { contentType: recording.contentType, audio: recording.bytes, objectKey: null, objectBytes: null }
      : { audio: null, ...recording };
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

// objects deleted per batch: each is a request to the bucket
const objectBatch = 500;

/**
 * Deletes records and recordings older than `days`; returns how many rows went. A recording in the
 * bucket loses its object first and its row after, so an object that could not be deleted keeps its row
 * and is tried again at the next run.
 */
export async function deleteExpiredCallRecords(db: DbOrTx, days: number, objects: RecordingObjects | null = null) {
  const cutoff = sql`now() - make_interval(days => ${days})`;
  const records = await db
    .delete(callRecords)
    .where(lt(callRecords.createdAt, cutoff))
    .returning({ callId: callRecords.callId });
  let deleted = records.length;
  for (;;) {
    const expired = await db
      .select({ callId: callRecordings.callId, objectKey: callRecordings.objectKey })
      .from(callRecordings)
      .where(and(lt(callRecordings.createdAt, cutoff), isNotNull(callRecordings.objectKey)))
      .limit(objectBatch);
    if (expired.length === 0 || !objects) break;
    for (const { objectKey } of expired) await objects.remove(objectKey!);
    const rows = await db
      .delete(callRecordings)
      .where(
        inArray(
          callRecordings.callId,
          expired.map((row) => row.callId),
        ),
      )
      .returning({ callId: callRecordings.callId });
    deleted += rows.length;
  }
  const recordings = await db
    .delete(callRecordings)
    .where(and(lt(callRecordings.createdAt, cutoff), isNull(callRecordings.objectKey)))
    .returning({ callId: callRecordings.callId });
  return deleted + recordings.length;
}

const cleanupEveryMs = 60 * 60_000;

/** Runs the retention cleanup now and every hour (any number of processes may run it). */
export function startCallRecordCleanup(db: DbOrTx, retentionDays: number, objects: RecordingObjects | null) {
  const run = () =>
    deleteExpiredCallRecords(db, retentionDays, objects).then(
      (deleted) => deleted > 0 && log.info("call records expired", { deleted, retentionDays }),
      (error) => log.warn("call record cleanup failed", { error: describeError(error) }),
    );
  void run();
  const timer = setInterval(run, cleanupEveryMs);
  return () => clearInterval(timer);
}
