// One monotonic ticker paces every call of the process: the playout of agent audio and each SIP
// call's RTP sender. A timer per call every 20 ms would cost far more than one short interval
// walking the calls with something due; 2 ms keeps the RTP send times within 2 ms of the 20 ms grid.
import { recordPacingDelay } from "../metrics/metrics";

export type Tick = (now: number) => void;

export interface FrameTicker {
  now(): number;
  add(tick: Tick): void;
  remove(tick: Tick): void;
}

/** onDelay gets, at each run after the first, how many ms later than its interval the run came. */
export function createFrameTicker(intervalMs: number, onDelay?: (ms: number) => void): FrameTicker {
  const ticks = new Set<Tick>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let lastRun = 0;
  const run = () => {
    const now = performance.now();
    if (onDelay && lastRun > 0) onDelay(Math.max(0, now - lastRun - intervalMs));
    lastRun = now;
    for (const tick of ticks) tick(now);
  };
  return {
    now: () => performance.now(),
    add(tick) {
      ticks.add(tick);
      timer ??= setInterval(run, intervalMs);
    },
    remove(tick) {
      ticks.delete(tick);
      if (ticks.size === 0 && timer) {
        clearInterval(timer);
        timer = null;
        lastRun = 0;
      }
    },
  };
}

// its delays are the bridge's own share of the media's jitter: an operator's measure, and the benches'
export const sharedTicker = createFrameTicker(2, recordPacingDelay);
/** For each call's checks counted in seconds (RTP time-outs, RTCP reports): one timer, 4 times a second. */
export const coarseTicker = createFrameTicker(250);
