// Background threads of a bridge (the conclusion thread) must never take the CPU from the event loop
// that paces call audio: on Linux a thread has its own nice value, so the thread lowers its own. And
// a thread names itself, for `top -H`, /proc and the benches (Bun names every worker thread "Worker").
import { readlinkSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/** Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing happens). */
export function lowerThreadPriority(nice = 10) {
  try {
    // /proc/thread-self -> "<pid>/task/<tid>"; setpriority() on a thread id applies to that thread only
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid)) setPriority(tid, nice);
  } catch {}
}

/** Names the calling thread (Linux, at most 15 characters; elsewhere nothing happens). */
export function nameThisThread(name: string) {
  try {
    writeFileSync("/proc/thread-self/comm", name.slice(0, 15));
  } catch {}
}
