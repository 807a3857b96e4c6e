// Worker thread of log.ts's logFromThread: writes the log lines to stdout. A full stdout pipe blocks
// the write (Bun writes stdout synchronously), and it blocks this thread instead of the event loop.
import { writeSync } from "node:fs";
import { nameThisThread } from "./lib/thread-priority";

export type LogChunk = { text: string } | { written: Int32Array };

declare const self: Worker;
nameThisThread("vas-log");

let written: Int32Array | null = null; // chunks written so far, shared with the main thread for its exit
const pause = new Int32Array(new SharedArrayBuffer(4)); // nobody notifies it: Atomics.wait on it sleeps

function writeAll(text: string) {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; ) {
    try {
      at += writeSync(1, bytes, at);
    } catch (error) {
      // a non-blocking stdout that is full: wait a little, on this thread only
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

self.onmessage = ({ data }: MessageEvent<LogChunk>) => {
  if ("written" in data) {
    written = data.written;
    return;
  }
  writeAll(data.text);
  if (written) {
    Atomics.add(written, 0, 1);
    Atomics.notify(written, 0);
  }
  self.postMessage(data.text.length); // as the main thread counts it
};
