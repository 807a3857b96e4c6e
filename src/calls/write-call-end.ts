// One write of a call's end: call_started if it is still missing, then the conclusion, whose
// call_concluded carries the call's recording when there is one: its WAV file as base64 (postgres), or
// its object's presigned URL and, unless RECORDING_IN_HOOKS=false, the base64 too (s3). Ends whose
// recording file is read are written in the conclusion thread (conclusion-thread.ts), the others here.
import { readFile } from "node:fs/promises";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { serializePayload } from "../events/payloads";
import { log } from "../log";
import type { Recording } from "./call-records";
import { concludeCallTask, markCallStarted, type Conclusion } from "./call-lifecycle";
import type { PendingEnd } from "./conclusion-spool";

/** How a call's recording joins its end; `path` is the file whose bytes go into the hook (and the row, postgres). */
export type EndRecording =
  | { store: "postgres"; path: string; contentType: string }
  | { store: "s3"; path: string | null; contentType: string; objectKey: string; objectBytes: number; url: string };

export type CallEnd = Pick<PendingEnd, "task" | "startedAt" | "conclusion">;

export async function writeCallEnd(db: Db, { task, startedAt, conclusion }: CallEnd, recording: EndRecording | null) {
  if (startedAt !== null) await markCallStarted(db, task, startedAt);
  const recorded = recording ? await recordedEvent(task.callId, conclusion, recording) : undefined;
  await concludeCallTask(db, task, { ...conclusion, recorded });
}

/** The event serialized with its recording; without the bytes when the file cannot be read. */
async function recordedEvent(
  callId: string,
  conclusion: CallEnd["conclusion"],
  recording: EndRecording,
): Promise<Conclusion["recorded"]> {
  let wav: Buffer | null = null;
  if (recording.path) {
    try {
      wav = await readFile(recording.path);
    } catch (error) {
      // the conclusion matters more than its recording: it goes out without one
      log.error("call recording lost", { callId, error: describeError(error) });
      if (recording.store === "postgres") return undefined;
    }
  }
  const callRecording = wav?.toString("base64") ?? null;
  if (recording.store === "postgres") {
    const body = serializePayload({ ...conclusion.event, callRecording });
    return { body, recording: { bytes: wav!, contentType: recording.contentType } };
  }
  const { contentType, objectKey, objectBytes, url } = recording;
  const stored: Recording = { contentType, objectKey, objectBytes };
  return { body: serializePayload({ ...conclusion.event, callRecording, recordingUrl: url }), recording: stored };
}
