// The end of a call with a recording is megabytes of base64 and JSON: it is built and written by one
// worker thread per process (conclusion-thread-worker.ts), so concluding many calls at once does not
// stall the audio of the calls still running. Only the call's small description crosses threads.
import type { EndJob, EndResult } from "./conclusion-thread-worker";
import type { CallEnd, EndRecording } from "./write-call-end";

let worker: Worker | null = null;
let nextId = 0;
const waiting = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();

function endWorker(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL("./conclusion-thread-worker.ts", import.meta.url));
  started.unref(); // an idle thread must not keep the process alive; an unwritten end stays in the spool
  started.onmessage = ({ data }: MessageEvent<EndResult>) => {
    const job = waiting.get(data.id);
    waiting.delete(data.id);
    if (data.error === null) job?.resolve();
    else job?.reject(new Error(data.error));
  };
  started.onerror = (event) => {
    // a crashed thread fails what it held (the writer retries); the next job starts a new one
    worker = null;
    for (const job of waiting.values()) job.reject(new Error(`the conclusion thread failed: ${event.message}`));
    waiting.clear();
  };
  worker = started;
  return started;
}

/** One write of `end` with its recording (see writeCallEnd), done in the conclusion thread. */
export function writeRecordedCallEnd(databaseUrl: string, end: CallEnd, recording: EndRecording): Promise<void> {
  return new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve, reject });
    endWorker().postMessage({ id, databaseUrl, end, recording } satisfies EndJob);
  });
}
