// One monotonic ticker paces every call of the process: the playout of agent audio and each SIP
// call's RTP sender. A timer per call every 20 ms would cost far more than one short interval
// walking the calls with something due; 2 ms keeps the RTP send times within 2 ms of the 20 ms grid.
export type Tick = (now: number) => void;

export interface FrameTicker {
  now(): number;
  add(tick: Tick): void;
  remove(tick: Tick): void;
}

export function createFrameTicker(intervalMs: number): FrameTicker {
  const ticks = new Set<Tick>();
  let timer: ReturnType<typeof setInterval> | null = null;
  const run = () => {
    const now = performance.now();
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
      }
    },
  };
}

export const sharedTicker = createFrameTicker(2);
/** For each call's checks counted in seconds (RTP time-outs, RTCP reports): one timer, 4 times a second. */
export const coarseTicker = createFrameTicker(250);
