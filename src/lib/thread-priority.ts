// Background threads of a bridge (the conclusion thread) must never take the CPU from the event loop
// that paces call audio: on Linux a thread has its own nice value, so the thread lowers its own. A
// pacing thread (the websocket thread) raises its own where the process may (CAP_SYS_NICE, or an
// RLIMIT_NICE that allows it): on a busy machine its 2 ms ticks otherwise wait behind every other
// runnable thread. And a thread names itself, for `top -H`, /proc and the benches (Bun names every
// worker thread "Worker").
import { readlinkSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

/** Sets the calling thread's nice value (Linux); false where it is not allowed or not Linux. */
function setThisThreadNice(nice: number): boolean {
  try {
    // /proc/thread-self -> "<pid>/task/<tid>"; setpriority() on a thread id applies to that thread only
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid)) return false;
    setPriority(tid, nice);
    return true;
  } catch {
    return false;
  }
}

/** Lowers the calling thread's scheduling priority to `nice` (Linux; elsewhere nothing happens). */
export function lowerThreadPriority(nice = 10) {
  setThisThreadNice(nice);
}

/**
 * A pacing thread's nice value. The benches run their callers, which stand for remote
 * phones, at this level too (bench/lib/generator-priority.ts), so that neither waits behind the other;
 * the thread does little but send on time, so it takes little from anyone else.
 */
export const PACING_NICE = -10;

/** Raises the calling thread's priority to `nice` if the process may; false if it stays as it was. */
export const raiseThreadPriority = (nice = PACING_NICE): boolean => setThisThreadNice(nice);

/** Names the calling thread (Linux, at most 15 characters; elsewhere nothing happens). */
export function nameThisThread(name: string) {
  try {
    writeFileSync("/proc/thread-self/comm", name.slice(0, 15));
  } catch {}
}
