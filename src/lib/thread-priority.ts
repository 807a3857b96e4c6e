// Background threads of a bridge (the conclusion thread) must never take the CPU from the event loop
// that paces call audio: on Linux a thread has its own nice value, so the thread lowers its own.
import { readlinkSync } from "node:fs";
import { setPriority } from "node:os";

/** Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing happens). */
export function lowerThreadPriority(nice = 10) {
  try {
    // /proc/thread-self -> "<pid>/task/<tid>"; setpriority() on a thread id applies to that thread only
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid)) setPriority(tid, nice);
  } catch {}
}
