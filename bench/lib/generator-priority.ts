// The load generators (this process's callers, and the SIPp it starts) stand for phones and carriers on
// other machines. On one box they share the cores with the bridge, whose pacing threads run above
// normal priority (src/lib/thread-priority.ts): starved callers timestamp late and report their own wait
// as the bridge's jitter (the websocket bench's callers were late by 20 ms at p99). So, for a step's
// measuring window, this thread runs at the level of the bridge's pacing threads, above its event loop;
// children spawned meanwhile (SIPp) inherit that.
import { PRIORITY_STEP, setThisThreadNice, thisThreadNice } from "../../src/lib/thread-priority";

/** Raises this thread to the bridge's pacing threads' level where allowed; the function returned gives it back. */
export function generatorsFirst(): () => void {
  const before = thisThreadNice();
  // the bench and the bridge it starts share one nice value: the bridge's pacing threads run this far above it
  const raised = setThisThreadNice(before - PRIORITY_STEP);
  return () => {
    if (raised) setThisThreadNice(before);
  };
}
