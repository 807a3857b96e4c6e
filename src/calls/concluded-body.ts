// A call_concluded with its recording is megabytes of base64 and JSON: it is built in one worker thread
// per process, so concluding many calls at once does not stall the audio of the calls still running.
import type { CallConcludedPayload } from "../events/payloads";
import type { BodyJob, BodyResult } from "./concluded-body-worker";

export type ConcludedBody = { body: string; audio: Buffer };

let worker: Worker | null = null;
let nextId = 0;
const waiting = new Map<number, { resolve: (body: ConcludedBody) => void; reject: (error: Error) => void }>();

function bodyWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL("./concluded-body-worker.ts", import.meta.url));
  started.unref(); // an idle worker must not keep the process alive
  started.onmessage = ({ data }: MessageEvent<BodyResult>) => {
    const job = waiting.get(data.id);
    waiting.delete(data.id);
    if ("error" in data) job?.reject(new Error(`the call's recording could not be read: ${data.error}`));
    else job?.resolve({ body: data.body, audio: Buffer.from(data.audio) });
  };
  started.onerror = (event) => {
    // a crashed worker fails what it held; the next job starts a new one
    worker = null;
    for (const job of waiting.values()) job.reject(new Error(`the body worker failed: ${event.message}`));
    waiting.clear();
  };
  worker = started;
  return started;
}

/** The serialized payload with `recordingPath`'s WAV as its callRecording, and the WAV's bytes. */
export function buildConcludedBody(event: CallConcludedPayload, recordingPath: string): Promise<ConcludedBody> {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve, reject });
    bodyWorker().postMessage({ id, event, recordingPath } satisfies BodyJob);
  });
}
