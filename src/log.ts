// One JSON object per line on stdout; callers pass structured fields, never secrets.
import { writeSync } from "node:fs";
import type { LogChunk } from "./log-thread-worker";
type Level = "debug" | "info" | "warn" | "error";
const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
// info until the process applies its config (only src/config.ts reads the environment)
let threshold = order.info;

export function setLogLevel(level: string) {
  threshold = order[level as Level] ?? order.info;
}

let sink = (text: string) => void process.stdout.write(text);

const line = (level: Level, msg: string, fields: Record<string, unknown>) =>
  `${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`;

function write(level: Level, msg: string, fields: Record<string, unknown>) {
  if (order[level] < threshold) return;
  sink(line(level, msg, fields));
}

/**
 * From now on this process's lines reach stdout through a thread of their own (log-thread-worker.ts).
 * Bun writes stdout synchronously and a full pipe blocks the writer, so a log collector that stops
 * reading would stall the event loop that paces every call's audio. Lines keep their order; above
 * `maxQueuedBytes` (string length) not yet written they are dropped and counted, and a warning says how many once
 * the writer catches up. At exit the main thread waits up to 2 s for the thread, then writes the rest.
 */
export function logFromThread({ maxQueuedBytes = 8 << 20 } = {}) {
  const thread = new Worker(new URL("./log-thread-worker.ts", import.meta.url));
  thread.unref();
  const written = new Int32Array(new SharedArrayBuffer(4));
  thread.postMessage({ written } satisfies LogChunk);
  let pending: string[] = [];
  let pendingBytes = 0;
  let inFlightBytes = 0;
  let posted = 0;
  let dropped = 0;
  let scheduled = false;

  const post = () => {
    scheduled = false;
    if (!pending.length) return;
    const text = pending.join("");
    pending = [];
    inFlightBytes += pendingBytes;
    pendingBytes = 0;
    posted++;
    thread.postMessage({ text } satisfies LogChunk);
  };
  /** The warning that says how many lines were dropped since the last one; the count starts again. */
  const droppedNotice = () => {
    const notice = line("warn", "log lines dropped", { count: dropped, reason: "stdout was not read" });
    dropped = 0;
    return notice;
  };
  const queue = (text: string) => {
    pending.push(text);
    pendingBytes += text.length;
    if (!scheduled) {
      scheduled = true;
      setImmediate(post); // the lines of one event-loop turn go as one chunk
    }
  };
  thread.onmessage = ({ data }: MessageEvent<number>) => {
    inFlightBytes -= data;
    if (dropped > 0 && inFlightBytes + pendingBytes < maxQueuedBytes / 2) queue(droppedNotice());
  };
  sink = (text) => {
    if (inFlightBytes + pendingBytes + text.length > maxQueuedBytes) dropped++;
    else queue(text);
  };
  process.on("exit", () => {
    const deadline = performance.now() + 2_000;
    while (Atomics.load(written, 0) < posted) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      Atomics.wait(written, 0, Atomics.load(written, 0), left);
    }
    if (dropped > 0) pending.push(droppedNotice());
    if (pending.length) writeSync(1, pending.join(""));
  });
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write("debug", msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write("info", msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write("warn", msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write("error", msg, fields),
};
