// Runs a job one at a time; a request while it runs makes it run once more afterwards (never more), so a
// burst of triggers costs at most two runs and none is lost.
export type CoalescingRunner = {
  /** Asks for a run; returns at once. */
  request(): void;
  /** Resolves once no run is under way or asked for. */
  settled(): Promise<void>;
  /** No run starts after this; resolves when the current one ends. */
  stop(): Promise<void>;
};

export function coalescingRunner(job: () => Promise<void>, onError: (error: unknown) => void): CoalescingRunner {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const run = async () => {
    do {
      again = false;
      try {
        await job();
      } catch (error) {
        onError(error);
      }
    } while (again && !stopped);
  };

  const request = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = run().finally(() => (running = null));
  };

  const settled = async () => {
    while (running) await running;
  };

  return {
    request,
    settled,
    stop: async () => {
      stopped = true;
      await settled();
    },
  };
}
