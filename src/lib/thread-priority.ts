// Background threads of a bridge (the conclusion thread) must never take the CPU from the event loop
// that paces call audio: on Linux a thread has its own nice value, so the thread lowers its own. A
// pacing thread (the websocket thread) raises its own where the process may (CAP_SYS_NICE, or an
// RLIMIT_NICE that allows it): on a busy machine its 2 ms ticks otherwise wait behind every other
// runnable thread. Both are relative to the process's own nice value (its main thread's): a service
// started under `nice` keeps the same order between its threads. And a thread names itself, for
// `top -H`, /proc and the benches (Bun names every worker thread "Worker").
import { readlinkSync, writeFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** How far a pacing thread runs above its process's event loop, and a background thread below it. */
export const PRIORITY_STEP = 10;

/** The calling thread's id (Linux: /proc/thread-self -> "<pid>/task/<tid>"); null elsewhere. */
function thisThreadId(): number | null {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    return Number.isInteger(tid) ? tid : null;
  } catch {
    return null;
  }
}

/** The calling thread's nice value (0 where it cannot be read). */
export function thisThreadNice(): number {
  const tid = thisThreadId();
  return tid === null ? 0 : getPriority(tid);
}

/** The nice value of the process's event loop: its main thread, whose thread id is the pid. */
const processNice = () => getPriority(process.pid);

/** Sets the calling thread's nice value (Linux); false where it is not allowed or not Linux. */
export function setThisThreadNice(nice: number): boolean {
  const tid = thisThreadId();
  if (tid === null) return false;
  try {
    // setpriority() on a thread id applies to that thread only
    setPriority(tid, Math.max(-20, Math.min(19, nice)));
    return true;
  } catch {
    return false;
  }
}

/** Runs the calling thread PRIORITY_STEP nice levels below the process's event loop (Linux; elsewhere nothing happens). */
export function lowerThreadPriority() {
  setThisThreadNice(processNice() + PRIORITY_STEP);
}

/** Runs the calling thread PRIORITY_STEP levels above the process's event loop if the process may; false if it stays as it was. */
export const raiseThreadPriority = (): boolean => setThisThreadNice(processNice() - PRIORITY_STEP);

/** Names the calling thread (Linux, at most 15 characters; elsewhere nothing happens). */
export function nameThisThread(name: string) {
  try {
    writeFileSync("/proc/thread-self/comm", name.slice(0, 15));
  } catch {}
}
