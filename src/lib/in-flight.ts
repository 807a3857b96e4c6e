// Counts promises still running, so a process that is stopping can let them finish before it exits.
export type InFlight = {
  /** Runs `job` and counts it until it settles. */
  track<T>(job: () => Promise<T>): Promise<T>;
  /** Resolves once nothing is running (or after `timeoutMs`, whatever is still running). */
  idle(timeoutMs: number): Promise<void>;
};

export function inFlight(): InFlight {
  let running = 0;
  const wake: (() => void)[] = [];
  return {
    async track(job) {
      running++;
      try {
        return await job();
      } finally {
        running--;
        if (running === 0) for (const w of wake.splice(0)) w();
      }
    },
    idle(timeoutMs) {
      if (running === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
