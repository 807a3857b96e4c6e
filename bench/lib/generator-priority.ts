// The load generators (this process's callers, and the SIPp it starts) stand for phones and carriers on
// other machines. On one box they share the cores with the bridge, whose pacing threads run above
// normal priority (src/lib/thread-priority.ts): starved callers timestamp late and report their own wait
// as the bridge's jitter (the websocket bench's callers were late by 20 ms at p99). So, for a step's
// measuring window, this thread runs at the level of the bridge's pacing threads, above its event loop;
// children spawned meanwhile (SIPp) inherit that.
import { raiseThreadPriority, setThisThreadNice, thisThreadNice } from "../../src/lib/thread-priority";

/** Raises this thread to the bridge's pacing threads' level where allowed; the function returned gives it back. */
export function generatorsFirst(): () => void {
  // called on the bench's main thread: raised relative to its own level, as the bridge's pacing threads are
  const before = thisThreadNice();
  const raised = raiseThreadPriority();
  return () => {
    if (raised) setThisThreadNice(before);
  };
}
