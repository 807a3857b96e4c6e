// One monotonic ticker drives the playout of every call in the process: a timer per call every
// 20 ms would cost far more than one short interval walking the calls that have audio queued.
export type Tick = (now: number) => void;

export interface FrameTicker {
  now(): number;
  add(tick: Tick): void;
  remove(tick: Tick): void;
}

export function createFrameTicker(intervalMs = 5): FrameTicker {
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

export const sharedTicker = createFrameTicker();
