// One write of a call's end: call_started if it is still missing, then the conclusion, whose
// call_concluded carries the call's recording (its WAV file, base64) when there is one. Calls without a
// recording are written on the event loop; calls with one in the conclusion thread (conclusion-thread.ts).
import { readFile } from "node:fs/promises";
import type { FinishedRecording } from "../audio/call-recorder";
import type { Db } from "../db/client";
import { describeError } from "../errors";
import { serializePayload } from "../events/payloads";
import { log } from "../log";
import { concludeCallTask, markCallStarted, type Conclusion } from "./call-lifecycle";
import type { PendingEnd } from "./conclusion-spool";

export async function writeCallEnd(db: Db, { task, startedAt, conclusion, recording }: PendingEnd) {
  if (startedAt !== null) await markCallStarted(db, task, startedAt);
  const recorded = recording ? await readRecording(task.callId, conclusion, recording) : undefined;
  await concludeCallTask(db, task, { ...conclusion, recorded });
}

/** The event serialized with its recording; without one when the file cannot be read. */
async function readRecording(
  callId: string,
  conclusion: PendingEnd["conclusion"],
  recording: FinishedRecording,
): Promise<Conclusion["recorded"]> {
  let wav: Buffer;
  try {
    wav = await readFile(recording.path);
  } catch (error) {
    // the conclusion matters more than its recording: it goes out without one
    log.error("call recording lost", { callId, error: describeError(error) });
    return undefined;
  }
  const body = serializePayload({ ...conclusion.event, callRecording: wav.toString("base64") });
  return { body, recording: { bytes: wav, contentType: recording.contentType } };
}
